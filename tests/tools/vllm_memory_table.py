#!/usr/bin/env python3
"""The engine's per-GPU memory plan next to vLLM v0.11.0's own start-up profile (docs/serving.md,
"KV capacity as engines size it"). By hand, not in CI:

    python3 tests/tools/vllm_memory_table.py build/sightline

vLLM's figures: llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-results.md at
4f4d44943c39b76b28e30dfa1fb0dfaf1ee894b5 (one H100 of 79.18 GiB, --gpu-memory-utilization 0.9,
--max-model-len 16000, --block-size 128, prefix caching; the Mistral row ran at 0.95). Each row runs
the vllm-v1-like stack on h100-sxm at vLLM's H100 defaults (max_num_seqs 1024, 8192 tokens a step),
the model's checkpoint precision (fp8 for the FP8-dynamic Llama), max_model_len min(16000, the
preset's max_context)."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
# (engine preset, tp, weights, activation, non-torch, KV) in GiB, as vLLM logged them.
ROWS = [
    ("gpt-oss-20b", 1, None, 13.47, 7.38, 0.13, 50.28),
    ("gpt-oss-120b", 1, None, 64.38, 7.38, 0.13, 3.33),
    ("llama-3-70b", 2, "fp8", 33.88, 4.84, 0.55, 32.00),  # Llama-3.3-70B-Instruct-FP8-dynamic
    ("llama-3-8b", 1, None, 14.99, 4.76, 0.13, 51.38),  # Llama-3.1-8B: the same shapes
    ("qwen3-32b", 1, None, 61.03, 5.64, 0.14, 4.45),
    ("qwen3-32b", 2, None, 30.59, 5.64, 0.54, 34.49),
    ("mistral-small-3.1-24b", 1, None, 44.76, 2.12, 0.14, 28.20),  # vLLM ran 3.2 (multimodal) at 0.95
]


def scenario(model, tp, weights):
    with open(os.path.join(ROOT, "presets", "models", model + ".json")) as f:
        max_len = min(16000, json.load(f).get("max_context", 16000))
    s = {"schema_version": 1, "id": "vllm-memory-%s-tp%d" % (model, tp), "title": model, "seed": 1, "model": model,
         "hardware": {"gpu": "h100-sxm", "gpus_per_node": tp, "intra_node": "nvlink4-nvswitch"},
         "cost_model": {"software_stack": "vllm-v1-like"},
         "serving": {"mode": "simulate", "parallelism": {"tp": tp, "pp": 1},
                     "workload": {"arrival": {"process": "poisson", "rate_qps": 1}, "num_requests": 4,
                                  "prompt_tokens": 64, "output_tokens": 8},
                     "scheduler": {"policy": "chunked_prefill", "chunk_size": 8192, "max_num_seqs": 1024},
                     "kv_cache": {"gpu_memory_utilization": 0.9, "block_size": 128, "max_model_len": max_len,
                                  "prefix_caching": True}}}
    if weights:
        s["precision"] = {"weights": weights}
    return s


def main(binary):
    print("| model | TP | weights engine / vLLM | activations | runtime / non-torch | KV | KV engine / vLLM |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for model, tp, weights, w, act, non_torch, kv in ROWS:
            path = os.path.join(tmp, "%s-%d.json" % (model, tp))
            with open(path, "w") as f:
                json.dump(scenario(model, tp, weights), f)
            out = subprocess.run([binary, "run", path, "--format", "json"], capture_output=True, text=True)
            if out.returncode != 0:
                print("| %s | %d | %s |" % (model, tp, (out.stdout + out.stderr).strip()[:200]))
                continue
            m = json.loads(out.stdout)["result"]["memory_per_gpu"][0]
            print("| %s | %d | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f | %.2f |" % (
                model, tp, m["weights_GiB"], w, m["activations_GiB"], act, m["runtime_overhead_GiB"], non_torch,
                m["kv_cache_GiB"], kv, m["kv_cache_GiB"] / kv))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "sightline"))
