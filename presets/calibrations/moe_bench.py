#!/usr/bin/env python3
"""MoE grouped GEMMs by tokens per expert and dtype, and weight streaming by footprint.

Two questions the cost model answers without a measurement of its own (issue 38, point 1 and 2):

1. What does a grouped GEMM over the experts of one GPU cost, by tokens per expert, expert count,
   dtype and routing balance? The model prices it with the dense GEMM curve at m = tokens per
   expert, each expert's problem padded to its own tiles, the weights of the experts hit read
   once. Here: torch._grouped_mm (bf16; CUTLASS's Hopper grouped GEMM inside PyTorch),
   torch._scaled_grouped_mm (FP8 e4m3, row-wise scales) and a sorted-token Triton kernel
   (moe_triton.py; bf16 and block-scaled FP8), on the expert shapes of DeepSeek-V3,
   Qwen3-235B-A22B, gpt-oss-120b and Mixtral-8x7B, balanced, routed uniformly at random (binomial
   counts, the cost model's routing) and with a skewed (hot-expert) split of the same tokens;
   and, for the same problems, one torch.mm per expert in one graph (the per-expert launch loop).
2. Does a decode step's weight streaming slow down as the total footprint grows (the copies of
   microbench.py dropped 33% past 512 MiB on this GPU)? Here: the GEMMs of L Llama-3-8B layers
   (distinct weights per layer, 436 MB each) in one graph, L = 1..128 (0.4-56 GB), at m = 1, 16,
   128; and 256 MiB copies over a growing number of distinct buffers against one copy of the
   whole size.

    python3 presets/calibrations/moe_bench.py --gpu h200 --out moe_h200.csv

Columns are microbench.py's (FIELDS). Rows: kind grouped_gemm (m = tokens per expert, the mean
when routed or skewed; batch = experts; seq = the busiest expert's tokens; impl names the kernel
and the split; pass = the Triton config that won, BLOCK_M x BLOCK_N x BLOCK_K x warps x stages),
kind gemm_stream (m, n = the layer's summed N, k = 4096, batch = layers, bytes = weight
bytes of all layers) and kind copy_stream (batch = distinct buffers, bytes = read + written).
"""
import random
import sys
import traceback

import torch

from microbench import bench_main, time_graph_us
from moe_triton import MoeGemm, block_quantize, token_quantize

# (BLOCK_M, BLOCK_N, BLOCK_K, warps, stages) tried for the Triton kernel; the fastest is kept, as the
# stacks' tuned config tables keep the fastest per shape. FP8 block scales need BLOCK_K = 128.
TRITON_CONFIGS = {
    "bf16": [(16, 64, 128, 4, 4), (16, 128, 64, 4, 4), (32, 64, 128, 4, 3), (64, 64, 64, 4, 3),
             (64, 128, 64, 4, 3), (64, 128, 64, 8, 3), (128, 128, 64, 8, 3), (128, 256, 64, 8, 3)],
    "fp8": [(16, 64, 128, 4, 4), (16, 128, 128, 4, 3), (32, 128, 128, 4, 3), (64, 64, 128, 4, 3),
            (64, 128, 128, 4, 3), (64, 128, 128, 8, 3), (128, 128, 128, 8, 3)],
}

# (label, experts on this GPU, K, N): one MoE projection (w13 = gate and up fused, w2 = down).
GROUPED = [
    ("deepseek-v3-ep8-w13", 32, 7168, 4096), ("deepseek-v3-ep8-w2", 32, 2048, 7168),
    ("qwen3-235b-ep8-w13", 16, 4096, 3072), ("qwen3-235b-ep8-w2", 16, 1536, 4096),
    ("gpt-oss-120b-ep1-w13", 128, 2880, 5760), ("gpt-oss-120b-ep1-w2", 128, 2880, 2880),
    ("mixtral-8x7b-tp1-w13", 8, 4096, 28672),
]
PER_EXPERT = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048]
ALIGN = 16  # rows per group the grouped kernels are given (engines pad their per-expert buckets)


def skewed_counts(experts, mean, rng):
    """Tokens per expert with the same total as `experts * mean`, drawn from a Zipf-like routing
    popularity (exponent 1.0, shuffled): a few hot experts, a long cold tail, some experts idle."""
    total = experts * mean
    weights = [1.0 / (i + 1) for i in range(experts)]
    rng.shuffle(weights)
    s = sum(weights)
    counts = [int(total * w / s) for w in weights]
    counts[weights.index(max(weights))] += total - sum(counts)
    return counts


def routed_counts(experts, mean, rng):
    """Tokens per expert when `experts * mean` assignments each pick an expert uniformly at random
    (the cost model's routing: binomial counts around the mean)."""
    counts = [0] * experts
    for _ in range(experts * mean):
        counts[rng.randrange(experts)] += 1
    return counts


def offsets_for(counts):
    """Group ends for the grouped kernels: each group's rows padded to ALIGN (a group with no
    tokens keeps zero rows)."""
    ends, at = [], 0
    for c in counts:
        at += -(-c // ALIGN) * ALIGN
        ends.append(at)
    return ends


def check_grouped(fp8):
    """The kernels compute what is timed: each group's rows against its own expert, compared with a
    float64 reference (skewed split, an idle expert included); prints the relative errors."""
    experts, k, n = 8, 512, 256
    counts = [40, 0, 16, 3, 70, 16, 1, 30]
    ends = offsets_for(counts)
    a = torch.randn(ends[-1], k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(experts, n, k, device="cuda", dtype=torch.bfloat16)
    offs = torch.tensor(ends, device="cuda", dtype=torch.int32)
    starts = [0] + ends[:-1]
    ref = torch.cat([a[s:e].double() @ w[i].double().t() for i, (s, e) in enumerate(zip(starts, ends))])
    out = torch._grouped_mm(a, w.transpose(-2, -1), offs=offs)
    print(f"check bf16 grouped: rel err {((out.double() - ref).norm() / ref.norm()).item():.2e}", flush=True)
    if fp8:
        a8, w8 = a.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn)
        sa = torch.rand(ends[-1], device="cuda") + 0.5
        sb = torch.rand(experts, n, device="cuda") + 0.5
        ref8 = torch.cat([(a8[s:e].double() * sa[s:e, None].double()) @ (w8[i].double() * sb[i, :, None].double()).t()
                          for i, (s, e) in enumerate(zip(starts, ends))])
        out8 = torch._scaled_grouped_mm(a8, w8.transpose(-2, -1), sa, sb, offs=offs, out_dtype=torch.bfloat16)
        print(f"check fp8 grouped: rel err {((out8.double() - ref8).norm() / ref8.norm()).item():.2e}", flush=True)


def check_triton():
    """The Triton kernel against a float64 reference, bf16 and block-scaled FP8, on a skewed split
    with an idle expert and a K that is not a multiple of 128. The reference takes each expert's
    rows from the kernel's own sorted ids, so it checks the GEMM, the gather and the scatter."""
    experts, k, n = 6, 2880, 384
    counts = [40, 0, 16, 3, 70, 1]
    a = torch.randn(sum(counts), k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(experts, n, k, device="cuda", dtype=torch.bfloat16) * 0.05
    w8, ws = block_quantize(w)
    a8, a_scale = token_quantize(a)
    deq_w = (w8.double() * ws.double().repeat_interleave(128, 1)[:, :n].repeat_interleave(128, 2)[:, :, :k])
    deq_a = a8.double() * a_scale.double().repeat_interleave(128, 1)[:, :k]
    for dtype, cfgs in TRITON_CONFIGS.items():
        for cfg in cfgs[:1] + cfgs[-1:]:
            gemm = MoeGemm(w) if dtype == "bf16" else MoeGemm(w8, ws)
            prepared = gemm.prepare(a if dtype == "bf16" else a8, counts, cfg[0], None if dtype == "bf16" else a_scale)
            ad, wd = (a.double(), w.double()) if dtype == "bf16" else (deq_a, deq_w)
            sorted_ids, block_expert = prepared[2].tolist(), prepared[3].tolist()
            ref = torch.full((a.shape[0], n), float("nan"), device="cuda", dtype=torch.float64)
            for b, e in enumerate(block_expert):
                ids = [i for i in sorted_ids[b * cfg[0]:(b + 1) * cfg[0]] if i < a.shape[0]]
                ref[ids] = ad[ids] @ wd[e].t()
            prepared[4].fill_(float("nan"))
            out = gemm.run(prepared, *cfg)
            torch.cuda.synchronize()
            err = ((out.double() - ref).norm() / ref.norm()).item()
            print(f"check triton {dtype} {cfg}: rel err {err:.2e}", flush=True)


def triton_rows(args, source):
    try:
        check_triton()
    except Exception:
        traceback.print_exc()
    rng = random.Random(2027)
    for label, experts, k, n in GROUPED:
        w = torch.randn(experts, n, k, device="cuda", dtype=torch.bfloat16) * 0.05
        w8, ws = block_quantize(w)
        gemms = {"bf16": MoeGemm(w), "fp8": MoeGemm(w8, ws)}
        for m in PER_EXPERT:
            splits = [("balanced", [m] * experts)]
            if m >= 4:
                splits.append(("routed", routed_counts(experts, m, rng)))
            for split, counts in splits:
                tokens = sum(counts)
                if tokens * k * 2 > (8 << 30):
                    continue
                a = torch.randn(tokens, k, device="cuda", dtype=torch.bfloat16)
                a8, a_scale = token_quantize(a)
                for dtype, gemm in gemms.items():
                    best, best_cfg = None, None
                    for cfg in TRITON_CONFIGS[dtype]:
                        if (m <= 16 and cfg[0] > 32) or (m >= 256 and cfg[0] < 64):
                            continue
                        prepared = gemm.prepare(a8 if dtype == "fp8" else a, counts, cfg[0],
                                                a_scale if dtype == "fp8" else None)
                        try:
                            t = time_graph_us([lambda: gemm.run(prepared, *cfg)], args.warmup, args.iters)
                        except Exception as e:  # e.g. out of shared memory for one config
                            print(f"skip triton {label} {dtype} {cfg}: {str(e).splitlines()[0]}", file=sys.stderr)
                            continue
                        if best is None or t < best:
                            best, best_cfg = t, cfg
                    if best is None:
                        continue
                    hit = sum(1 for c in counts if c > 0)
                    wbytes = hit * k * n * (1 if dtype == "fp8" else 2)
                    yield {"kind": "grouped_gemm", "dtype": dtype, "m": m, "n": n, "k": k, "batch": experts,
                           "seq": max(counts), "impl": f"triton-sorted-tokens:{split}",
                           "pass": "x".join(str(c) for c in best_cfg), "mode": "graph", "bytes": wbytes,
                           "time_us": best, "tflops": 2.0 * tokens * k * n / best * 1e-6,
                           "gbps": wbytes / best * 1e-3, "model": label, "source": source}
                del a, a8, a_scale
        del w, w8, ws, gemms
        torch.cuda.empty_cache()


def grouped_rows(args, source):
    rng = random.Random(2026)
    fp8 = hasattr(torch, "_scaled_grouped_mm") and torch.cuda.get_device_capability() >= (9, 0)
    try:
        check_grouped(fp8)
    except Exception:
        traceback.print_exc()
    for label, experts, k, n in GROUPED:
        w = torch.randn(experts, n, k, device="cuda", dtype=torch.bfloat16)
        b = w.transpose(-2, -1)  # [E, K, N], column-major per expert, as _grouped_mm wants
        w8 = (w * 0.5).to(torch.float8_e4m3fn) if fp8 else None
        b8 = w8.transpose(-2, -1) if fp8 else None
        scale_b = torch.rand(experts, n, device="cuda", dtype=torch.float32) + 0.5 if fp8 else None
        for m in PER_EXPERT:
            splits = [("balanced", [m] * experts)]
            if m >= 4:
                splits.append(("skewed", skewed_counts(experts, m, rng)))
                splits.append(("routed", routed_counts(experts, m, rng)))
            for split, counts in splits:
                ends = offsets_for(counts)
                rows = ends[-1]
                if rows == 0 or rows * k * 2 > (8 << 30):
                    continue
                a = torch.randn(rows, k, device="cuda", dtype=torch.bfloat16)
                offs = torch.tensor(ends, device="cuda", dtype=torch.int32)
                tokens = sum(counts)
                busiest = max(counts)
                hit = sum(1 for c in counts if c > 0)
                flops = 2.0 * tokens * k * n
                weight_bytes = hit * k * n
                variants = [("torch._grouped_mm", "bf16", 2, lambda: torch._grouped_mm(a, b, offs=offs))]
                if fp8:
                    a8 = (a * 0.5).to(torch.float8_e4m3fn)
                    scale_a = torch.rand(rows, device="cuda", dtype=torch.float32) + 0.5
                    variants.append(("torch._scaled_grouped_mm", "fp8", 1, lambda: torch._scaled_grouped_mm(
                        a8, b8, scale_a, scale_b, offs=offs, out_dtype=torch.bfloat16)))
                if split == "balanced" and m <= 256:
                    per_expert = [a[i * rows // experts:(i + 1) * rows // experts] for i in range(experts)]
                    variants.append(("torch.mm-per-expert", "bf16", 2,
                                     lambda: [torch.mm(per_expert[i], b[i]) for i in range(experts)]))
                for impl, dtype, wbytes, fn in variants:
                    try:
                        t = time_graph_us([fn], args.warmup, args.iters)
                    except (RuntimeError, TypeError) as e:
                        print(f"skip {label} {impl} m={m} {split}: {str(e).splitlines()[0]}", file=sys.stderr)
                        continue
                    yield {"kind": "grouped_gemm", "dtype": dtype, "m": m, "n": n, "k": k, "batch": experts,
                           "seq": busiest, "impl": f"{impl}:{split}", "mode": "graph",
                           "bytes": weight_bytes * wbytes, "time_us": t, "tflops": flops / t * 1e-6,
                           "gbps": weight_bytes * wbytes / t * 1e-3, "model": label, "source": source}
                del a
        del w, b, w8, b8
        torch.cuda.empty_cache()


LLAMA3_8B_LAYER = [(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336)]  # (N, K): qkv, o, gate_up, down


def stream_rows(args, source):
    layer_params = sum(n * k for n, k in LLAMA3_8B_LAYER)
    for layers in [1, 4, 16, 32, 64, 128]:
        ws = [[torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for n, k in LLAMA3_8B_LAYER]
              for _ in range(layers)]
        for m in [1, 16, 128]:
            xs = {k: torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _, k in LLAMA3_8B_LAYER}
            fns = [lambda w=w: torch.mm(xs[w.shape[1]], w.t()) for layer in ws for w in layer]
            t = time_graph_us(fns, args.warmup, args.iters) * len(fns)  # the whole graph's time
            nbytes = layers * layer_params * 2
            yield {"kind": "gemm_stream", "dtype": "bf16", "m": m, "n": sum(n for n, _ in LLAMA3_8B_LAYER),
                   "k": 4096, "batch": layers, "impl": "torch.mm", "mode": "graph", "bytes": nbytes,
                   "time_us": t, "tflops": 2.0 * m * layers * layer_params / t * 1e-6, "gbps": nbytes / t * 1e-3,
                   "model": "llama-3-8b", "source": source}
        del ws
        torch.cuda.empty_cache()
    chunk = 256 << 20  # bytes per buffer (bf16 elements = chunk / 2)
    for buffers in [1, 2, 4, 8, 16, 32, 64]:
        for layout in ["distinct", "one"]:
            if layout == "distinct":
                src = [torch.randn(chunk // 2, device="cuda", dtype=torch.bfloat16) for _ in range(buffers)]
                dst = [torch.empty_like(s) for s in src]
                fns = [lambda s=s, d=d: d.copy_(s) for s, d in zip(src, dst)]
            else:
                src = [torch.randn(buffers * chunk // 2, device="cuda", dtype=torch.bfloat16)]
                dst = [torch.empty_like(src[0])]
                fns = [lambda: dst[0].copy_(src[0])]
            t = time_graph_us(fns, args.warmup, args.iters) * len(fns)
            nbytes = 2 * buffers * chunk
            yield {"kind": "copy_stream", "dtype": "bf16", "batch": buffers, "impl": f"copy:{layout}",
                   "mode": "graph", "bytes": nbytes, "time_us": t, "gbps": nbytes / t * 1e-3,
                   "model": "256MiB-buffers", "source": source}
            del src, dst, fns
            torch.cuda.empty_cache()


def main():
    bench_main(__doc__, "moe_bench.py", {"stream": stream_rows, "grouped": grouped_rows, "triton": triton_rows})


if __name__ == "__main__":
    main()
