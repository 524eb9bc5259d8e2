#!/usr/bin/env python3
"""`sightline batch` over a Ray cluster: one Ray task per shard, each running
the sightline binary on its contiguous block of lines, then the shards are
written in shard order (byte for byte the unsharded output).

    python3 scale-out/ray/batch.py IN.jsonl OUT.jsonl --shards 8 [--sightline PATH] [--address auto]

Every Ray worker node needs the sightline binary at the same path and the
input file readable (a shared filesystem), or pass the input through Ray as
this script does: it sends the input text and gets each shard's output back.
"""
import argparse
import os
import subprocess
import tempfile

import ray


@ray.remote
def run_shard(sightline, text, index, shards):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        f.write(text)
        path = f.name
    try:
        r = subprocess.run([sightline, "batch", path, "--shard", f"{index}/{shards}"],
                           capture_output=True, check=True)
        return r.stdout
    finally:
        os.unlink(path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--shards", type=int, default=4)
    p.add_argument("--sightline", default="sightline")
    p.add_argument("--address", default=None, help="Ray cluster address (default: start a local one)")
    a = p.parse_args()
    ray.init(address=a.address)
    with open(a.input) as f:
        text = f.read()
    parts = ray.get([run_shard.remote(a.sightline, text, i, a.shards) for i in range(a.shards)])
    with open(a.output, "wb") as f:
        for part in parts:
            f.write(part)


if __name__ == "__main__":
    main()
