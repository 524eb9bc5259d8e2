#!/usr/bin/env bash
# Regenerates the measured cross-GPU transfer error of the kernel model
# (kernels.json) from the development data: every GPU fitted alone and
# transferred to every other; and the cross-link transfer error of the
# collective model (collectives.json) from the collective CSVs: every link with
# measurements fitted alone and transferred to every other of its family.
# Run after presets/calibrations/regenerate.sh, presets/comm_calibrations/regenerate.sh and a rebuild.
# Usage: presets/transfer_errors/regenerate.sh [SIGHTLINE_BIN] [DATA_DIR] [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/sightline}
data=${2:-$here/../../../shared/data}
out=${3:-$here}
"$bin" report-accuracy --data "$data" --max-work-units 240000000 --format json --transfer-errors-out "$out/kernels.json" > /dev/null
cdata=$here/../calibrations/data
"$bin" calibrate-comm --csv "$cdata/published_collectives.csv" --csv "$cdata/vidur_a100_dgx_all_reduce.csv" \
  --transfer-errors-out "$out/collectives.json"
