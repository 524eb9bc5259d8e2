#!/usr/bin/env bash
# Regenerates the shipped collective calibrations. Usage:
#   presets/comm_calibrations/regenerate.sh [SIGHTLINE_BIN] [OUT_DIR]
# Every fit uses nccl-tests-style tables transcribed from measurements.md
# (presets/calibrations/data/published_collectives.csv); the Vidur network
# data is kept out of the fit and used by report-accuracy as an independent check.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/sightline}
out=${2:-$here}
csv=$here/../calibrations/data/published_collectives.csv
for link in nvlink3-nvswitch nvlink4-nvswitch nvlink5-nvswitch ib-ndr; do
  "$bin" calibrate-comm --interconnect "$link" --csv "$csv" --out "$out/$link.json"
done
