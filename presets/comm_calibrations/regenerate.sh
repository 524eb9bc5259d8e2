#!/usr/bin/env bash
# Regenerates the shipped collective calibrations. Usage:
#   presets/comm_calibrations/regenerate.sh [SIGHTLINE_BIN] [OUT_DIR]
# The fits use nccl-tests-style tables transcribed from measurements.md
# (presets/calibrations/data/published_collectives.csv) and, for NVLink 3, Vidur's
# A100 DGX all-reduce timings at 2, 4 and 8 GPUs (binned by
# presets/calibrations/data/bin_vidur_network.py into vidur_a100_dgx_all_reduce.csv).
# NVLink 3 is the only link measured at several group sizes: NVLink 4 and 5 take its
# per-call and per-step latencies and its efficiency-by-group-size shape, and fit
# their own efficiency level (--shape-from). The CDNA 3 xGMI mesh is fitted to RCCL's
# all_reduce_perf on 8x MI300X (rccl_mi300x_all_reduce.csv), with the direct algorithms
# a full mesh runs (two latency steps per all-reduce). NVLink 4 also fits NCCL's LL
# protocol (its small all-reduces, nccl_h100_small_all_reduce.csv: the per-hop latency).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/sightline}
out=${2:-$here}
data=$here/../calibrations/data
csv=$data/published_collectives.csv
"$bin" calibrate-comm --interconnect nvlink3-nvswitch --csv "$csv" --csv "$data/vidur_a100_dgx_all_reduce.csv" \
  --out "$out/nvlink3-nvswitch.json"
"$bin" calibrate-comm --interconnect nvlink4-nvswitch --csv "$csv" --csv "$data/nccl_h100_small_all_reduce.csv" \
  --shape-from "$out/nvlink3-nvswitch.json" --out "$out/nvlink4-nvswitch.json"
"$bin" calibrate-comm --interconnect nvlink5-nvswitch --csv "$csv" --shape-from "$out/nvlink3-nvswitch.json" \
  --out "$out/nvlink5-nvswitch.json"
"$bin" calibrate-comm --interconnect ib-ndr --csv "$csv" --out "$out/ib-ndr.json"
"$bin" calibrate-comm --interconnect xgmi3-mesh8 --csv "$data/rccl_mi300x_all_reduce.csv" --out "$out/xgmi3-mesh8.json"
