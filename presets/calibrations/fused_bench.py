#!/usr/bin/env python3
"""Fused memory-bound kernels and grouped GEMMs, as serving stacks launch them.

microbench.py times the memory-bound operators as eager, unfused PyTorch chains
(RoPE as slices + muls + cat, SiLU-and-mul as three kernels, RMSNorm after a
separate residual add). vLLM, SGLang and TensorRT-LLM launch one fused kernel
for each instead (rotary_embedding in place on q and k, silu_and_mul,
fused_add_rms_norm). This script times single-pass Triton kernels doing the
same work as those fused kernels, beside the eager chains, under one harness
(CUDA graph replay, inputs rotated over enough copies to defeat the L2), so the
cost model's price of a fused kernel (its bytes at the GPU's measured memory
efficiency) can be checked against a measurement. (Its first version also timed
MoE grouped GEMMs, the 18 grouped_gemm rows of fused_h200_2026-11-28.csv;
moe_bench.py times them now, by tokens per expert, kernel, dtype and routing.)

    python3 presets/calibrations/fused_bench.py --gpu h200 --out fused_h200.csv

Columns are microbench.py's (FIELDS); `impl` says which implementation ran:
`triton-fused` (one kernel, the stacks' launch) or `eager-chain` (microbench.py's).
`bytes` is the fused kernel's minimum traffic (every input read once, every
output written once), the same for both implementations of one row's shape.
"""

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from microbench import bench_main, copies_for, time_graph_us


@triton.jit
def _silu_and_mul(x_ptr, out_ptr, inter, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < inter
    gate = tl.load(x_ptr + row * 2 * inter + offs, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(x_ptr + row * 2 * inter + inter + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * inter + offs, (gate * tl.sigmoid(gate) * up).to(tl.bfloat16), mask=mask)


@triton.jit
def _add_rms_norm(x_ptr, res_ptr, w_ptr, hidden, eps, BLOCK: tl.constexpr):
    # residual += x; x = rms_norm(residual) * w   (vLLM's fused_add_rms_norm, in place)
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < hidden
    s = tl.load(x_ptr + row * hidden + offs, mask=mask, other=0.0).to(tl.float32) + \
        tl.load(res_ptr + row * hidden + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(res_ptr + row * hidden + offs, s.to(tl.bfloat16), mask=mask)
    inv = tl.rsqrt(tl.sum(s * s, axis=0) / hidden + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(x_ptr + row * hidden + offs, (s * inv * w).to(tl.bfloat16), mask=mask)


@triton.jit
def _rms_norm(x_ptr, out_ptr, w_ptr, hidden, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < hidden
    x = tl.load(x_ptr + row * hidden + offs, mask=mask, other=0.0).to(tl.float32)
    inv = tl.rsqrt(tl.sum(x * x, axis=0) / hidden + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * hidden + offs, (x * inv * w).to(tl.bfloat16), mask=mask)


@triton.jit
def _rope_heads(base, n_heads, cos, sin, d, HALF: tl.constexpr, BLOCK_H: tl.constexpr):
    h = tl.arange(0, BLOCK_H)
    mask = h[:, None] < n_heads
    lo = base + h[:, None] * 2 * HALF + d[None, :]
    x1 = tl.load(lo, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(lo + HALF, mask=mask, other=0.0).to(tl.float32)
    tl.store(lo, (x1 * cos[None, :] - x2 * sin[None, :]).to(tl.bfloat16), mask=mask)
    tl.store(lo + HALF, (x2 * cos[None, :] + x1 * sin[None, :]).to(tl.bfloat16), mask=mask)


@triton.jit
def _rope(q_ptr, k_ptr, pos_ptr, cache_ptr, nq, nk, HALF: tl.constexpr, BQ: tl.constexpr, BK: tl.constexpr):
    # NeoX-style rotary embedding in place on q and k, cos/sin from a cache by position
    # (vLLM's rotary_embedding kernel: one program per token).
    t = tl.program_id(0).to(tl.int64)
    pos = tl.load(pos_ptr + t).to(tl.int64)
    d = tl.arange(0, HALF)
    cos = tl.load(cache_ptr + pos * 2 * HALF + d).to(tl.float32)
    sin = tl.load(cache_ptr + pos * 2 * HALF + HALF + d).to(tl.float32)
    _rope_heads(q_ptr + t * nq * 2 * HALF, nq, cos, sin, d, HALF, BQ)
    _rope_heads(k_ptr + t * nk * 2 * HALF, nk, cos, sin, d, HALF, BK)


def eager_rope(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


# (model, hidden, intermediate, q heads, kv heads, head_dim): unsharded shapes.
SHAPES = [("llama-2-7b", 4096, 11008, 32, 32, 128), ("llama-3-70b", 8192, 28672, 64, 8, 128),
          ("llama-3-70b-tp8", 8192, 3584, 8, 1, 128)]
TOKENS = [1, 16, 64, 256, 1024, 4096, 16384]


def bf16(*shape):
    return torch.randn(*shape, device="cuda", dtype=torch.bfloat16)


def fused_rows(args, source):
    for model, hidden, inter, nq, nk, hd in SHAPES:
        for tokens in TOKENS:
            half = hd // 2
            kernels = []
            # SiLU-and-mul: read [T, 2I], write [T, I].
            b = tokens * inter * 2 * 3
            n = copies_for(b)
            xs = [bf16(tokens, 2 * inter) for _ in range(n)]
            outs = [torch.empty(tokens, inter, device="cuda", dtype=torch.bfloat16) for _ in range(n)]
            grid = (tokens, triton.cdiv(inter, 1024))
            kernels.append(("activation", b,
                            [(lambda x=x, o=o: _silu_and_mul[grid](x, o, inter, BLOCK=1024)) for x, o in zip(xs, outs)],
                            [(lambda x=x: F.silu(x[:, :inter]) * x[:, inter:]) for x in xs]))
            # Fused add + RMSNorm: read x, residual, write both.
            b = tokens * hidden * 2 * 4
            n = copies_for(b)
            xr = [(bf16(tokens, hidden), bf16(tokens, hidden)) for _ in range(n)]
            w = bf16(hidden)
            block = triton.next_power_of_2(hidden)
            kernels.append(("add_norm", b,
                            [(lambda x=x, r=r: _add_rms_norm[(tokens,)](x, r, w, hidden, 1e-6, BLOCK=block, num_warps=8))
                             for x, r in xr],
                            [(lambda x=x, r=r: F.rms_norm(torch.add(x, r), (hidden,), w, 1e-6)) for x, r in xr]))
            # RMSNorm alone: read x, write y.
            b = tokens * hidden * 2 * 2
            ys = [torch.empty(tokens, hidden, device="cuda", dtype=torch.bfloat16) for _ in xr]
            kernels.append(("norm", b,
                            [(lambda x=x, y=y: _rms_norm[(tokens,)](x, y, w, hidden, 1e-6, BLOCK=block, num_warps=8))
                             for (x, _), y in zip(xr, ys)],
                            [(lambda x=x: F.rms_norm(x, (hidden,), w, 1e-6)) for x, _ in xr]))
            # RoPE on q and k in place: read and write both, plus the cos/sin rows.
            b = tokens * (nq + nk) * hd * 2 * 2 + tokens * hd * 2
            n = copies_for(b)
            qk = [(bf16(tokens, nq, hd), bf16(tokens, nk, hd)) for _ in range(n)]
            pos = torch.randint(0, 8192, (tokens,), device="cuda", dtype=torch.int64)
            cache = bf16(8192, hd)
            cos, sin = bf16(tokens, 1, half), bf16(tokens, 1, half)
            bq, bk = triton.next_power_of_2(nq), triton.next_power_of_2(nk)
            kernels.append(("rope", b,
                            [(lambda q=q, k=k: _rope[(tokens,)](q, k, pos, cache, nq, nk, HALF=half, BQ=bq, BK=bk,
                                                                 num_warps=4)) for q, k in qk],
                            [(lambda q=q, k=k: (eager_rope(q, cos, sin), eager_rope(k, cos, sin))) for q, k in qk]))
            for kind, nbytes, fused, eager in kernels:
                for impl, fns in (("triton-fused", fused), ("eager-chain", eager)):
                    t = time_graph_us(fns, args.warmup, args.iters)
                    yield {"kind": kind, "dtype": "bf16", "m": tokens, "n": hidden, "k": inter, "heads": nq,
                           "kv_heads": nk, "head_dim": hd, "impl": impl, "mode": "graph", "bytes": nbytes,
                           "time_us": t, "gbps": nbytes / t * 1e-3, "model": model, "source": source}
            del kernels, xs, outs, xr, ys, qk
            torch.cuda.empty_cache()


def main():
    bench_main(__doc__, "fused_bench.py", {"fused": fused_rows}, f", triton {triton.__version__}")


if __name__ == "__main__":
    main()
