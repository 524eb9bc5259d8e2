#!/usr/bin/env python3
"""Kernel microbenchmark sweep for Sightline's target-measured calibration tier.

Runs on any CUDA GPU with PyTorch and writes the measurement CSV that
`sightline calibrate --csv` reads:

    python3 presets/calibrations/microbench.py --gpu h100-sxm --out h100.csv
    ./build/sightline calibrate --gpu h100-sxm --csv h100.csv --out presets/calibrations/h100-sxm.json

--gpu is the Sightline GPU preset id the rows are recorded under. The sweep
times GEMMs over the M/N/K shapes of common LLM layers (bf16, and fp8 where the
GPU has it), causal FlashAttention forward and backward through
scaled_dot_product_attention, and the memory-bound kernels (RMSNorm, SiLU-gate,
residual add, device copy). Each row is the median of --iters CUDA-event timings
after --warmup runs. A full sweep takes a few minutes; --quick takes seconds.
"""
import argparse
import csv
import statistics
import sys

import torch
import torch.nn.functional as F

FIELDS = ["gpu", "kind", "dtype", "m", "n", "k", "batch", "seq", "heads", "head_dim", "pass", "impl",
          "bytes", "time_us", "tflops", "gbps", "model", "source"]


def time_us(fn, warmup, iters):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times)


def gemm_rows(args, source):
    # (N, K) of the projections of Llama-class models at TP 1..8, plus square shapes.
    nk = [(12288, 4096), (4096, 4096), (22016, 4096), (4096, 11008), (6144, 4096), (28672, 4096),
          (4096, 14336), (10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672), (8192, 3584)]
    ms = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
    if args.quick:
        nk, ms = nk[:2], [1, 64, 1024, 4096]
    dtypes = [("bf16", torch.bfloat16)]
    if hasattr(torch, "float8_e4m3fn") and torch.cuda.get_device_capability() >= (8, 9):
        dtypes.append(("fp8", torch.float8_e4m3fn))
    for name, dt in dtypes:
        for n, k in nk:
            for m in ms:
                a = torch.randn(m, k, device="cuda").to(dt)
                b = torch.randn(n, k, device="cuda").to(dt)
                if name == "fp8":
                    scale = torch.tensor(1.0, device="cuda")
                    fn = lambda: torch._scaled_mm(a, b.t(), scale_a=scale, scale_b=scale, out_dtype=torch.bfloat16)
                else:
                    fn = lambda: torch.matmul(a, b.t())
                try:
                    t = time_us(fn, args.warmup, args.iters)
                except RuntimeError as e:  # e.g. fp8 shapes the backend rejects
                    print(f"skip gemm {name} {m}x{n}x{k}: {e}", file=sys.stderr)
                    continue
                yield {"kind": "gemm", "dtype": name, "m": m, "n": n, "k": k, "time_us": t, "source": source}


def attention_rows(args, source):
    seqs = [512, 1024, 2048, 4096, 8192, 16384] if not args.quick else [1024, 4096]
    heads, head_dim, tokens = 16, 128, 16384
    for seq in seqs:
        batch = max(1, tokens // seq)
        q, k, v = (torch.randn(batch, heads, seq, head_dim, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                   for _ in range(3))
        fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
        t_fwd = time_us(fwd, args.warmup, args.iters)
        out = fwd()
        grad = torch.randn_like(out)
        bwd = lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)
        t_bwd = time_us(bwd, args.warmup, args.iters)
        for p, t in (("fwd", t_fwd), ("bwd", t_bwd)):
            yield {"kind": "attention", "dtype": "bf16", "batch": batch, "seq": seq, "heads": heads,
                   "head_dim": head_dim, "pass": p, "impl": "flash", "time_us": t, "source": source}


def memory_rows(args, source):
    hidden = 4096
    tokens_list = [1, 16, 128, 1024, 4096, 16384] if not args.quick else [128, 4096]
    for tokens in tokens_list:
        x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(hidden, device="cuda", dtype=torch.bfloat16)
        y = torch.empty_like(x)
        gate_up = torch.randn(tokens, 2 * 11008, device="cuda", dtype=torch.bfloat16)
        elem = tokens * hidden * 2
        kernels = [
            ("norm", lambda: x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w, 2 * elem),
            ("residual_add", lambda: torch.add(x, y), 3 * elem),
            ("activation", lambda: F.silu(gate_up[:, :11008]) * gate_up[:, 11008:], tokens * 11008 * 2 * 3),
            ("copy", lambda: y.copy_(x), 2 * elem),
        ]
        for kind, fn, nbytes in kernels:
            yield {"kind": kind, "dtype": "bf16", "bytes": nbytes, "time_us": time_us(fn, args.warmup, args.iters),
                   "source": source}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpu", required=True, help="Sightline GPU preset id, e.g. h100-sxm")
    parser.add_argument("--out", required=True)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--iters", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="a few shapes only (smoke test)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.cuda.get_device_name()
    source = f"microbench.py on {device}, torch {torch.__version__}, CUDA {torch.version.cuda}"
    with open(args.out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        count = 0
        for gen in (gemm_rows, attention_rows, memory_rows):
            for row in gen(args, source):
                row["gpu"] = args.gpu
                w.writerow(row)
                count += 1
    print(f"{count} rows written to {args.out} ({source})")


if __name__ == "__main__":
    main()
