#!/usr/bin/env python3
"""How much a GEMM slows down while a communication-like kernel shares the GPU.

Tensor-parallel comm/compute overlap runs NCCL kernels on a few SMs while GEMMs run on the rest.
This single-GPU measurement emulates the NCCL side with a persistent copy kernel on a fixed number
of thread blocks (8 ... 132; NCCL uses one block per channel, typically 8-32 on one node) that
streams device memory as a ring all-gather / reduce-scatter does, on a second CUDA stream.
For each GEMM shape and block count it writes:
  gemm_alone_us, gemm_shared_us  (GEMM time per call alone / while the copy runs)
  copy_alone_gbps, copy_shared_gbps (bytes read + written per second by the copy kernel)
Usage: python3 presets/calibrations/overlap_bench.py --gpu h100-sxm --out overlap.csv
"""
import argparse
import csv
import datetime
import statistics

import cupy
import torch

KERNEL = r"""
extern "C" __global__ void persistent_copy(const int4* __restrict__ src, int4* __restrict__ dst,
                                           long long n, int iters) {
  for (int it = 0; it < iters; ++it)
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
      dst[i] = src[i];
}
"""


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpu", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--iters", type=int, default=15)
    args = p.parse_args()
    kernel = cupy.RawKernel(KERNEL, "persistent_copy")
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    source = (f"overlap_bench.py on {torch.cuda.get_device_name()} ({sms} SMs), {datetime.date.today()}, "
              f"torch {torch.__version__}")
    copy_bytes = 512 << 20
    src = torch.randint(0, 255, (copy_bytes,), device="cuda", dtype=torch.uint8)
    dst = torch.empty_like(src)
    src_cp, dst_cp = cupy.asarray(src), cupy.asarray(dst)
    n16 = copy_bytes // 16
    main_stream = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    side_cp = cupy.cuda.ExternalStream(side.cuda_stream)  # deprecated alias, still works in cupy 14

    def launch_copy(blocks, reps):
        with side_cp:
            kernel((blocks,), (512,), (src_cp, dst_cp, cupy.int64(n16), cupy.int32(reps)))

    shapes = [(8192, 8192, 8192), (4096, 7168, 8192), (16384, 1024, 8192), (2048, 28672, 4096)]
    rows = []
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        gemm_reps = 10

        def gemms():
            for _ in range(gemm_reps):
                torch.matmul(a, b)

        def timed(fn_main, blocks=None, copy_reps=1):
            start = torch.cuda.Event(enable_timing=True)
            g_end = torch.cuda.Event(enable_timing=True)
            c_end = torch.cuda.Event(enable_timing=True)
            start.record(main_stream)
            side.wait_event(start)
            if blocks:
                launch_copy(blocks, copy_reps)
                c_end.record(side)
            if fn_main:
                fn_main()
            g_end.record(main_stream)
            torch.cuda.synchronize()
            return start.elapsed_time(g_end) * 1e3, (start.elapsed_time(c_end) * 1e3 if blocks else 0.0)

        for _ in range(3):
            gemms()
        torch.cuda.synchronize()
        g_alone = statistics.median(timed(gemms)[0] for _ in range(args.iters)) / gemm_reps
        for blocks in (8, 16, 32, 66, sms):
            # Size the copy to outlast the GEMMs: measure one pass alone first.
            launch_copy(blocks, 1)
            torch.cuda.synchronize()
            one = statistics.median(timed(None, blocks, 1)[1] for _ in range(5))
            reps = max(1, int(2.0 * g_alone * gemm_reps / one) + 1)
            c_alone = one
            shared_g, shared_c = [], []
            for _ in range(args.iters):
                g, c = timed(gemms, blocks, reps)
                shared_g.append(g / gemm_reps)
                shared_c.append(c / reps)
            g_shared = statistics.median(shared_g)
            # The copy's rate while the GEMMs run: passes completed during the GEMM window are not
            # separable, so report the whole copy's average (a lower bound on the contention).
            c_shared = statistics.median(shared_c)
            row = {"gpu": args.gpu, "m": m, "n": n, "k": k, "copy_blocks": blocks,
                   "gemm_alone_us": round(g_alone, 2), "gemm_shared_us": round(g_shared, 2),
                   "gemm_slowdown": round(g_shared / g_alone, 4),
                   "copy_alone_gbps": round(2 * copy_bytes / c_alone * 1e-3, 1),
                   "copy_shared_gbps": round(2 * copy_bytes / c_shared * 1e-3, 1), "source": source}
            rows.append(row)
            print(row, flush=True)
        del a, b
    with open(args.out, "w", newline="") as f:
        f.write(f"# {source}\n")
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
