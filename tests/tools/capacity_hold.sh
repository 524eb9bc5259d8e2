#!/usr/bin/env bash
# The capacity answer's promise on every shipped preset with a serving SLO
# (docs/capacity.md, "The answer's promise on every preset"): each preset's
# capacity search as shipped (the search's defaults added where it has none),
# then a plain run of exactly 20 x the search's requests per run at the answer
# (it must meet every SLO condition) and at 10% above it (it must miss).
# Exits non-zero if any preset fails. About 70 s of CPU (2026-11-29), too
# much for CI, which checks I5.3 alone (tests/cli/capacity.test.mjs).
#   tests/tools/capacity_hold.sh [BUILD_DIR] [--format table|json|markdown]
set -euo pipefail
build="${1:-build}"
shift || true
cd "$(dirname "$0")/../.."
format=(--format markdown)
if [[ $# -gt 0 ]]; then format=("$@"); fi
exec "$build/sightline" check-capacity --all --hold-only --scale 20 --jobs 2 --max-work-units 300000000 "${format[@]}"
