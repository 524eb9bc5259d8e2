#!/usr/bin/env python3
"""Summarises Vidur's A100 DGX all-reduce timings (../shared/data/vidur-profiling/network/a100_dgx,
MIT licence) into one row per (group size, power-of-two message-size bin): the median message size
and the median of the per-size median times. Only calls inside one node (devices_per_node ==
num_workers), so the link is the NVLink 3 NVSwitch. Binning gives each group size and size range the
same weight in the fit as the nccl-tests rows, instead of 994 rows per group size.
Usage: bin_vidur_network.py VIDUR_ROOT > vidur_a100_dgx_all_reduce.csv"""
import csv
import math
import statistics
import sys

# Between 64 KiB and 1 MiB Vidur's median times are dominated by its harness (2-GPU calls take 50 us,
# longer than 8-GPU ones), so they are dropped. Below 64 KiB the bandwidth term is negligible and one
# latency-floor row per group size is kept: the smallest per-size minimum time (harness noise only
# adds to a call's time). From 1 MiB on, one row per size bin with the median time.
MIN_BYTES = 1 << 20
FLOOR_BYTES = 1 << 16
root = sys.argv[1]
rows = list(csv.DictReader(open(f"{root}/network/a100_dgx/all_reduce.csv")))
bins = {}
floors = {}
for r in rows:
    n = int(r["num_workers"])
    if int(r["devices_per_node"]) != n:
        continue
    size = int(r["size"])
    if size < FLOOR_BYTES:
        t = float(r["time_stats.all_reduce.min"]) * 1e3
        if n not in floors or t < floors[n][1]:
            floors[n] = (size, t)
    if size < MIN_BYTES:
        continue
    bins.setdefault((n, int(math.log2(size))), []).append((size, float(r["time_stats.all_reduce.median"]) * 1e3))
print("# Vidur A100 DGX all-reduce inside one node (NVLink 3 NVSwitch), binned by bin_vidur_network.py:")
print("# median size and median time (us) per group size and power-of-two size bin, messages >= 1 MiB;")
print("# one latency-floor row per group size below 64 KiB.")
print("interconnect,collective,algorithm,gpus,nodes,bytes,time_us,busbw_GBps,source")
for n, (size, t) in sorted(floors.items()):
    print(f"nvlink3-nvswitch,all_reduce,ring,{n},1,{size},{t:.2f},,Vidur a100_dgx all_reduce.csv {n} GPUs latency floor (smallest min time below 64 KiB)")
for (n, k), v in sorted(bins.items()):
    size = statistics.median(s for s, _ in v)
    t = statistics.median(t for _, t in v)
    print(f"nvlink3-nvswitch,all_reduce,ring,{n},1,{size:.0f},{t:.2f},,Vidur a100_dgx all_reduce.csv {n} GPUs sizes 2^{k}..2^{k+1} ({len(v)} rows)")
