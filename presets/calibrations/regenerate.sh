#!/usr/bin/env bash
# Regenerates the shipped kernel calibrations from the measurements they are
# fitted on. Usage: presets/calibrations/regenerate.sh [SIGHTLINE_BIN] [DATA_DIR] [OUT_DIR]
# The A100 file is fitted first (from defaults) because the other GPUs'
# unmeasured classes are transferred from it; the engine embeds the files at
# build time, so rebuild between the two steps.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../build/sightline}
data=${2:-$here/../../../shared/data}
out=${3:-$here}
published=$here/data/published_kernels.csv
"$bin" calibrate --gpu a100-80g-sxm --base none --vidur-dir "$data/vidur-profiling" --vidur-gpu a100 \
  --csv "$published" --out "$out/a100-80g-sxm.json"
if [ "${SIGHTLINE_REGENERATE_REFERENCE_ONLY:-0}" = 1 ]; then exit 0; fi
"$bin" calibrate --gpu a40 --vidur-dir "$data/vidur-profiling" --vidur-gpu a40 --out "$out/a40.json"
# H100 SXM and H200: the published figures plus our own microbenchmark sweeps
# (and, where timed, the fused kernels' sweep).
# They share compute silicon: H200 keeps the H100 fit's bf16 compute efficiency
# (report-accuracy's same_silicon_gemms: separately fitted, the two predicted a
# 9% bf16 compute-bound difference that the sweeps do not show), so the shipped
# H100 file must be built in before H200 is fitted.
for gpu in h100-sxm h200; do
  sweeps=()
  for f in "$here"/measured/microbench_"$gpu"_*.csv; do sweeps+=(--csv "$f"); done
  # Fused kernels timed on this GPU (fused_bench.py): their fixed times.
  for f in "$here"/measured/fused_"$gpu"_*.csv; do if [ -e "$f" ]; then sweeps+=(--fused-csv "$f"); fi; done
  same=()
  if [ "$gpu" = h200 ]; then same=(--compute-from h100-sxm); fi
  # MXFP4 expert GEMMs (triton_kernels' matmul_ogs) timed on the H100; the H200 holds their level
  # through --compute-from (the same SMs running the same dequantizing main loop).
  mxfp4=()
  if [ "$gpu" = h100-sxm ]; then mxfp4=(--csv "$here/data/published_mxfp4_grouped.csv"); fi
  "$bin" calibrate --gpu "$gpu" --csv "$published" "${mxfp4[@]}" "${sweeps[@]}" "${same[@]}" --out "$out/$gpu.json"
done
# B200: one published GEMM and published NVFP4 decode GEMMs (vLLM's CUTLASS
# kernel at M=1, which set its NVFP4 weight-streaming level); every other
# class from the measured GPU nearest by spec sheet (an H200 today), the GPU
# its cross-generation tier transfers from, so the two tiers fill its
# unmeasured classes alike (issue 36 point 2).
"$bin" calibrate --gpu b200 --csv "$published" --csv "$here/data/published_fp4_gemv.csv" --base nearest \
  --out "$out/b200.json"
