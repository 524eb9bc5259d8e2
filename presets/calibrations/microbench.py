#!/usr/bin/env python3
"""Kernel microbenchmark sweep for Sightline's target-measured calibration tier.

Runs on any CUDA GPU with PyTorch and writes the measurement CSV that
`sightline calibrate --csv` reads:

    python3 presets/calibrations/microbench.py --gpu h100-sxm --out h100.csv
    ./build/sightline calibrate --gpu h100-sxm --csv h100.csv --out presets/calibrations/h100-sxm.json

--gpu is the Sightline GPU preset id the rows are recorded under. The sweep times
- GEMMs over M = 1 ... 16384 at the (N, K) of common LLM projections, bf16 and fp8
  (per-tensor scaled, where the GPU has fp8);
- causal FlashAttention forward and backward through scaled_dot_product_attention, by length;
- decode attention (one query token per sequence, GQA 32/8) by batch x KV length;
- the memory-bound kernels (RMSNorm, SiLU-gate, residual add, rotary embedding, device copy) by size;
- launch cost: an almost empty kernel launched eagerly, replayed from a CUDA graph, and with a
  host synchronisation after each launch;
- with --only copies (not in the default sweep): device copies moving 16 KiB to 8 GiB (read + written)
  under one harness, --repeat shuffled passes, the median kept (the elementwise class's re-measurement).

How each figure is timed (column `mode`):
- `graph`: `reps` calls captured into one CUDA graph, replayed; time per call = replay time / reps.
  This is the kernel's own device time, with the graph's small inter-node gap.
- `eager`: `reps` calls launched back to back between two CUDA events; time per call. For kernels
  shorter than the host's launch cost this measures the launch floor, not the kernel.
- `sync`: one launch then a host synchronisation, per call (what a step that waits pays).
Weights are rotated over enough copies to exceed the L2 cache, so skinny GEMMs read HBM as a
decode step does rather than hitting L2. Every row is the median of --iters timings after warm-up.
"""
import argparse
import csv
import datetime
import random
import statistics
import sys
import time
import traceback

import torch
import torch.nn.functional as F

FIELDS = ["gpu", "kind", "dtype", "m", "n", "k", "batch", "seq", "heads", "kv_heads", "head_dim", "pass", "impl",
          "mode", "bytes", "time_us", "tflops", "gbps", "model", "source"]

L2_DEFEAT_BYTES = 256 << 20  # rotate inputs over at least this many bytes (H100 L2 = 50 MB, B200 = 126 MB)


def median_event_us(run, iters):
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1000.0)
    return statistics.median(times)


def time_graph_us(fns, warmup, iters):
    """Capture one call of each fn (a rotation over input copies) into a CUDA graph and time replays."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            for fn in fns:
                fn()
    torch.cuda.current_stream().wait_stream(stream)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for fn in fns:
            fn()
    for _ in range(warmup):
        graph.replay()
    torch.cuda.synchronize()
    return median_event_us(graph.replay, iters) / len(fns)


def time_eager_us(fns, warmup, iters):
    def run():
        for fn in fns:
            fn()
    for _ in range(warmup):
        run()
    torch.cuda.synchronize()
    return median_event_us(run, iters) / len(fns)


def time_sync_us(fn, warmup, iters):
    for _ in range(warmup):
        fn()
        torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def bench_main(doc, script, parts, source_suffix=""):
    """The command line the sweep scripts beside this one share: --gpu, --out, --warmup, --iters and
    --only (a comma list of `parts`' names, all by default). Each part's rows are written as they
    come; a part that fails prints its traceback and the others still run (device time is scarce)."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--gpu", required=True, help="Sightline GPU preset id the rows are recorded under")
    parser.add_argument("--out", required=True)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--only", default=",".join(parts))
    args = parser.parse_args()
    props = torch.cuda.get_device_properties(0)
    source = (f"{script} on {props.name} ({props.multi_processor_count} SMs), "
              f"{datetime.date.today().isoformat()}, torch {torch.__version__}{source_suffix}")
    with open(args.out, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        for name in args.only.split(","):
            try:
                for row in parts[name](args, source):
                    row["gpu"] = args.gpu
                    writer.writerow(row)
                    f.flush()
                    print(name, row.get("model"), row["kind"], row.get("impl"), row.get("dtype"), row.get("m"),
                          row.get("batch"), f"{row['time_us']:.2f} us", flush=True)
            except Exception:
                traceback.print_exc()


def copies_for(bytes_each, reps_min=4, cap=64):
    return max(reps_min, min(cap, -(-L2_DEFEAT_BYTES // max(1, bytes_each))))


def gemm_rows(args, source):
    # (N, K) of the projections of Llama-class models at TP 1..8, plus square shapes.
    nk = [(4096, 4096), (12288, 4096), (28672, 4096), (4096, 14336), (8192, 8192), (10240, 8192),
          (57344, 8192), (8192, 28672), (3584, 8192), (1024, 8192)]
    ms = [1, 2, 4, 8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 4096, 8192, 16384]
    if args.quick:
        nk, ms = nk[:2], [1, 64, 1024, 4096]
    dtypes = [("bf16", torch.bfloat16)]
    if hasattr(torch, "float8_e4m3fn") and torch.cuda.get_device_capability() >= (8, 9):
        dtypes.append(("fp8", torch.float8_e4m3fn))
    for name, dt in dtypes:
        for n, k in nk:
            b_bytes = n * k * (1 if name == "fp8" else 2)
            weights = [torch.randn(n, k, device="cuda").to(dt) for _ in range(copies_for(b_bytes, cap=16))]
            for m in ms:
                if name == "fp8" and m % 16:
                    continue  # _scaled_mm needs every dimension divisible by 16
                a = torch.randn(m, k, device="cuda").to(dt)
                if name == "fp8":
                    scale = torch.tensor(1.0, device="cuda")
                    fns = [(lambda b=b: torch._scaled_mm(a, b.t(), scale_a=scale, scale_b=scale,
                                                          out_dtype=torch.bfloat16)) for b in weights]
                else:
                    fns = [(lambda b=b: torch.matmul(a, b.t())) for b in weights]
                try:
                    t = time_graph_us(fns, args.warmup, args.iters)
                except RuntimeError as e:  # e.g. fp8 shapes the backend rejects
                    print(f"skip gemm {name} {m}x{n}x{k}: {e}", file=sys.stderr)
                    continue
                flops = 2.0 * m * n * k
                yield {"kind": "gemm", "dtype": name, "m": m, "n": n, "k": k, "mode": "graph", "time_us": t,
                       "tflops": flops / t * 1e-6, "source": source}
                del a
            del weights
            torch.cuda.empty_cache()


def attention_rows(args, source):
    seqs = [512, 1024, 2048, 4096, 8192, 16384] if not args.quick else [1024, 4096]
    for heads, head_dim in ((16, 128), (32, 128)):
        tokens = 16384
        for seq in seqs:
            batch = max(1, tokens // seq)
            q, k, v = (torch.randn(batch, heads, seq, head_dim, device="cuda", dtype=torch.bfloat16,
                                   requires_grad=True) for _ in range(3))
            fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
            t_fwd = time_graph_us([fwd], args.warmup, args.iters)
            out = fwd()
            grad = torch.randn_like(out)
            bwd = lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)
            t_bwd = time_eager_us([bwd], args.warmup, args.iters)
            for p, t, mode in (("fwd", t_fwd, "graph"), ("bwd", t_bwd, "eager")):
                yield {"kind": "attention", "dtype": "bf16", "batch": batch, "seq": seq, "heads": heads,
                       "head_dim": head_dim, "pass": p, "impl": "flash", "mode": mode, "time_us": t,
                       "source": source}
            del q, k, v, out, grad
            torch.cuda.empty_cache()


def decode_attention_rows(args, source):
    heads, kv_heads, head_dim = 32, 8, 128
    batches = [1, 4, 16, 64, 256] if not args.quick else [1, 64]
    kv_lens = [256, 1024, 4096, 16384] if not args.quick else [1024]
    for batch in batches:
        for kv_len in kv_lens:
            kv_bytes = 2 * batch * kv_heads * kv_len * head_dim * 2
            if kv_bytes > (8 << 30):
                continue
            copies = max(1, min(4, -(-L2_DEFEAT_BYTES // kv_bytes)))
            q = torch.randn(batch, heads, 1, head_dim, device="cuda", dtype=torch.bfloat16)
            kvs = [(torch.randn(batch, kv_heads, kv_len, head_dim, device="cuda", dtype=torch.bfloat16),
                    torch.randn(batch, kv_heads, kv_len, head_dim, device="cuda", dtype=torch.bfloat16))
                   for _ in range(copies)]
            fns = [(lambda k=k, v=v: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)) for k, v in kvs]
            try:
                t = time_graph_us(fns, args.warmup, args.iters)
            except RuntimeError as e:
                print(f"skip decode attention {batch}x{kv_len}: {e}", file=sys.stderr)
                continue
            yield {"kind": "decode_attention", "dtype": "bf16", "batch": batch, "seq": kv_len, "heads": heads,
                   "kv_heads": kv_heads, "head_dim": head_dim, "pass": "fwd", "impl": "sdpa", "mode": "graph",
                   "bytes": kv_bytes, "time_us": t, "gbps": kv_bytes / t * 1e-3, "source": source}
            del q, kvs
            torch.cuda.empty_cache()


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


def memory_rows(args, source):
    hidden, inter = 4096, 14336
    tokens_list = [1, 4, 16, 64, 256, 1024, 4096, 16384] if not args.quick else [128, 4096]
    for tokens in tokens_list:
        x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16)
        y = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(hidden, device="cuda", dtype=torch.bfloat16)
        gate_up = torch.randn(tokens, 2 * inter, device="cuda", dtype=torch.bfloat16)
        q = torch.randn(tokens, 32, 128, device="cuda", dtype=torch.bfloat16)
        cos = torch.randn(tokens, 1, 64, device="cuda", dtype=torch.bfloat16)
        sin = torch.randn(tokens, 1, 64, device="cuda", dtype=torch.bfloat16)
        elem = tokens * hidden * 2
        kernels = [
            ("norm", lambda: F.rms_norm(x, (hidden,), w, 1e-6), 2 * elem),
            ("residual_add", lambda: torch.add(x, y), 3 * elem),
            ("activation", lambda: F.silu(gate_up[:, :inter]) * gate_up[:, inter:], tokens * inter * 2 * 3),
            ("rope", lambda: rope(q, cos, sin), 2 * tokens * 32 * 128 * 2),
            ("copy", lambda: y.copy_(x), 2 * elem),
        ]
        for kind, fn, nbytes in kernels:
            for mode, timer in (("graph", time_graph_us), ("eager", time_eager_us)):
                t = timer([fn] * 8, args.warmup, args.iters)
                yield {"kind": kind, "dtype": "bf16", "m": tokens, "n": hidden, "mode": mode, "bytes": nbytes,
                       "time_us": t, "gbps": nbytes / t * 1e-3, "source": source}
        del x, y, gate_up, q
        torch.cuda.empty_cache()
    # Large device copies: the achievable HBM bandwidth (bytes read + written).
    for mib in (64, 256, 1024, 4096):
        n = (mib << 20) // 2
        src = torch.randn(n, device="cuda", dtype=torch.bfloat16)
        dst = torch.empty_like(src)
        t = time_graph_us([lambda: dst.copy_(src)], args.warmup, args.iters)
        nbytes = 2 * n * 2
        yield {"kind": "copy", "dtype": "bf16", "m": n, "mode": "graph", "bytes": nbytes, "time_us": t,
               "gbps": nbytes / t * 1e-3, "source": source}
        del src, dst
        torch.cuda.empty_cache()


def copy_rows(args, source):
    """Device copies by size under one harness, for the elementwise class: every size is 8 copies
    captured into one graph (so every row carries the same 1/8 of the replay's launch cost; the
    `memory` rows' large copies are single-copy graphs), sizes dense where the L2 stops helping
    (16-128 MB moved on a 50 MB L2) and past 512 MiB (the drop both H100 and H200 showed). The
    whole size list is timed --repeat times, each pass in its own shuffled order (seeded), and each
    row is the median over the passes, so clock and thermal drift spread over all sizes instead of
    landing on one."""
    mib = [1 / 64, 1 / 16, 1 / 4, 1, 4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
    if args.quick:
        mib = [1, 16, 64]
    elems = sorted({max(1, int(m * (1 << 20)) // 4) for m in mib})  # bf16 elements per tensor; bytes moved = 4 x elems
    order = random.Random(2026)
    times = {n: [] for n in elems}
    for _ in range(max(1, args.repeat)):
        sizes = list(elems)
        order.shuffle(sizes)
        for n in sizes:
            src = torch.randn(n, device="cuda", dtype=torch.bfloat16)
            dst = torch.empty_like(src)
            times[n].append(time_graph_us([lambda: dst.copy_(src)] * 8, args.warmup, args.iters))
            del src, dst
            torch.cuda.empty_cache()
    for n in elems:
        t = statistics.median(times[n])
        nbytes = 4 * n
        yield {"kind": "copy", "dtype": "bf16", "m": n, "mode": "graph", "bytes": nbytes, "time_us": t,
               "gbps": nbytes / t * 1e-3, "source": f"{source}; median of {len(times[n])} shuffled passes"}


def launch_rows(args, source):
    """Launch floors: an almost empty kernel (add 1 to one element)."""
    x = torch.zeros(1, device="cuda")
    fn = lambda: x.add_(1.0)
    for reps in (1, 8, 64):
        yield {"kind": "launch", "mode": "graph", "m": reps, "time_us": time_graph_us([fn] * reps, 20, args.iters),
               "source": source}
        yield {"kind": "launch", "mode": "eager", "m": reps, "time_us": time_eager_us([fn] * reps, 20, args.iters),
               "source": source}
    yield {"kind": "launch", "mode": "sync", "m": 1, "time_us": time_sync_us(fn, 50, max(args.iters, 200)),
           "source": source}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpu", required=True, help="Sightline GPU preset id, e.g. h100-sxm")
    parser.add_argument("--out", required=True)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="a few shapes only (smoke test)")
    parser.add_argument("--only", default="", help="comma-separated subset: gemm,attention,decode,memory,launch,copies")
    parser.add_argument("--repeat", type=int, default=5, help="shuffled passes over the sizes of `copies` (median kept)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    props = torch.cuda.get_device_properties(0)
    device = torch.cuda.get_device_name()
    date = datetime.date.today().isoformat()
    source = (f"microbench.py on {device} ({props.multi_processor_count} SMs), {date}, torch {torch.__version__}, "
              f"CUDA {torch.version.cuda}")
    gens = {"gemm": gemm_rows, "attention": attention_rows, "decode": decode_attention_rows,
            "memory": memory_rows, "launch": launch_rows, "copies": copy_rows}
    if args.only:
        unknown = set(args.only.split(",")) - set(gens)
        if unknown:
            sys.exit(f"--only: unknown part(s) {sorted(unknown)}; the parts are {sorted(gens)}")
        chosen = [g for g in gens if g in args.only.split(",")]
    else:  # `copies` re-times the elementwise class on its own: not part of the default sweep
        chosen = [g for g in gens if g != "copies"]
    with open(args.out, "w", newline="") as f:
        f.write(f"# {source}\n")
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        count = 0
        for name in chosen:
            t0 = time.time()
            for row in gens[name](args, source):
                row["gpu"] = args.gpu
                w.writerow(row)
                count += 1
            f.flush()
            print(f"{name}: done in {time.time() - t0:.1f} s", flush=True)
    print(f"{count} rows written to {args.out} ({source})")


if __name__ == "__main__":
    main()
