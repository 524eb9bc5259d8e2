#!/usr/bin/env bash
# Byte-for-byte comparison of the CLI's JSON output between two builds, for
# refactors that must not change results: every scenario preset
# (`run --preset ID --format json`, with its intervals), every file in
# examples/ (`search` for a search question, `run` otherwise) and the
# registries.
#
#   tests/tools/compare_outputs.sh snapshot BINARY DIR   # write DIR/<name>.json
#   tests/tools/compare_outputs.sh compare DIR_A DIR_B   # cmp each file; exit 1 on any difference
#
# Typical use: build main in one tree and the branch in another, snapshot
# both, compare. Runs by hand (minutes of CPU), not in CI.
set -u

snapshot() {
  local bin=$1 out=$2 root
  root=$(cd "$(dirname "$0")/../.." && pwd)
  mkdir -p "$out"
  "$bin" registries > "$out/registries.json" 2>&1
  for f in "$root"/presets/scenarios/*.json; do
    local id
    id=$(basename "$f" .json)
    "$bin" run --preset "$id" --format json > "$out/preset-$id.json" 2>&1
    echo "exit $?" >> "$out/preset-$id.json"
  done
  for f in "$root"/examples/*.json; do
    local name cmd=run
    name=$(basename "$f" .json)
    grep -q '"base"' "$f" && cmd=search
    "$bin" $cmd "$f" --format json > "$out/example-$name.json" 2>&1
    echo "exit $?" >> "$out/example-$name.json"
  done
}

compare() {
  local a=$1 b=$2 n=0 bad=0
  for f in "$a"/*.json; do
    n=$((n + 1))
    if ! cmp -s "$f" "$b/$(basename "$f")"; then
      echo "DIFFERS: $(basename "$f")"
      bad=$((bad + 1))
    fi
  done
  for f in "$b"/*.json; do
    [ -e "$a/$(basename "$f")" ] || { echo "ONLY IN $b: $(basename "$f")"; bad=$((bad + 1)); }
  done
  echo "$n files compared, $bad differ"
  [ "$bad" -eq 0 ]
}

case "${1:-}" in
  snapshot) snapshot "$2" "$3" ;;
  compare) compare "$2" "$3" ;;
  *) sed -n 2,12p "$0"; exit 2 ;;
esac
