// KV offload against published measurements (issue 42): the TTFT of a
// request whose context is recomputed (a miss), reloaded from host DRAM (a
// CPU-tier hit) or found in HBM (a GPU-tier hit), predicted by the real CLI
// and set beside what two public sources measured. Nothing here is fitted to
// them: the scenarios use the shipped presets (model, GPU, the pcie5-host-dram
// tier) and the engine's defaults; the errors are printed and written to
// docs/serving.md ("KV offload against published measurements").
//
// Sources (the figures as their authors wrote them):
// - vLLM blog, "Inside vLLM's New Offloading Connector" (Or Ozeri, Danny
//   Harnik, 2025-12-29; vllm-project/vllm-project.github.io,
//   _posts/2025-12-29-offloading-connector.md at commit 9059fb96): one
//   request on an H100 80GB HBM3 with Llama-3.1-8B-Instruct, GPU prefix
//   caching off, CPU cache on: "throughput increases by up to X9, even though
//   TTFT for this prompt size [512 tokens] only decreased by X2". Published:
//   TTFT(recompute) / TTFT(load from CPU) = 2 at 512 tokens.
// - gahow/agentic-kvc (gitea.gahow.org), commit 837df6bc "v2 exp(a):
//   three-tier KV-hit latency microbench" (2026-05-30): one H20, Qwen3-Coder-
//   30B-A3B, vLLM 0.18.1, the tier of each measured request checked against
//   vLLM's prefix-cache counters: "GPU hit is ~flat (42->111 ms over
//   1k->64k tokens); CPU hit is transfer-bound (PCIe H2D ~54 GB/s, 57->272
//   ms); miss grows superlinearly (78 ms -> 15.2 s)".
//
// How each is modelled: a sessions trace whose session 0 sends L tokens
// (its first turn: the miss), then, after other sessions have filled HBM
// enough to evict its blocks into the host tier (the CPU case) or with no
// other session (the GPU case), a second turn of 16 new tokens that reuses
// the L-token context. One output token per turn: TTFT is the prefill.
// Qwen3-Coder-30B-A3B has Qwen3-30B-A3B's architecture (30.5B parameters,
// 3.3B active, 48 layers, 32 query and 4 KV heads, 128 experts, 8 active, per
// its model card) with a 262,144-token context: the preset with that
// max_context. Llama-3.1-8B is llama-3-8b's architecture (its 8,192-token
// context covers 512). Engine settings not stated by the sources are the
// engine's defaults, with chunked prefill at vLLM V1's 8,192 batched tokens.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kv-offload-published-'));

function run(scenario) {
  const file = path.join(dir, `s${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(file, JSON.stringify(scenario));
  const r = spawnSync(cliPath, ['run', file, '--central-only', '--format', 'json'], { cwd: repoRoot, encoding: 'utf8', maxBuffer: 256 << 20 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout).result;
}

const NEW_TOKENS = 16;  // the returning turn's new tokens after the reused context
const BLOCK = 16;       // KV block size in tokens (vLLM's and the engine's default)

function scenario(setup, rows, tier, overlap = 'layerwise') {
  return {
    schema_version: 1, seed: 1, model: setup.model,
    hardware: { gpu: setup.gpu, gpus_per_node: 1 },
    precision: { weights: 'bf16', activations: 'bf16', kv_cache: 'bf16' },
    serving: {
      mode: 'simulate',
      workload: { sessions: { csv: rows, system_prompt_tokens: 0 } },
      scheduler: { policy: 'chunked_prefill', chunk_size: 8192 },
      kv_cache: { prefix_caching: true, block_size: BLOCK, max_model_len: setup.maxLen,
        ...(tier ? { offload: { tiers: ['pcie5-host-dram'], reload_overlap: overlap } } : {}) },
      outputs: { max_request_records: 1000 },
    },
  };
}

const ttftMs = (res, row) => {
  const c = res.requests.columns;
  return 1000 * (row[c.indexOf('first_token_s')] - row[c.indexOf('arrival_s')]);
};

// TTFT (ms) of the first turn (a miss) and of the returning turn, with or
// without other sessions that push session 0's context out of HBM.
function measure(setup, L, evict, overlap = 'layerwise') {
  const probe = run(scenario(setup, [`0,0,${L},1`, `0,100,${NEW_TOKENS},1`], false));
  const hbmTokens = probe.metrics.kv_cache.blocks_total * BLOCK;
  const rows = [`0,0,${L},1`];
  let t = 0;
  if (evict) {
    // Fillers of half the HBM cache each, spaced to run alone, until twice
    // the HBM cache has been written after session 0's context.
    const filler = Math.min(Math.floor(hbmTokens / 2), setup.maxLen - 8);
    const n = Math.ceil((2 * hbmTokens) / filler);
    for (let i = 1; i <= n; ++i) rows.push(`${i},${(t = setup.gapS * i)},${filler},1`);
  }
  rows.push(`0,${t + setup.gapS},${NEW_TOKENS},1`);
  const res = run(scenario(setup, rows, evict, overlap));
  assert.equal(res.metrics.sessions.turns_completed, res.metrics.sessions.turns, 'every turn completes');
  const cols = res.requests.columns;
  const mine = res.requests.rows.filter((r) => r[cols.indexOf('prompt_tokens')] <= L + 1 + NEW_TOKENS && r[cols.indexOf('prompt_tokens')] >= L);
  assert.equal(mine.length, 2, JSON.stringify(res.requests.rows.map((r) => r[cols.indexOf('prompt_tokens')])));
  const returning = mine[1];
  const tierHits = evict ? res.metrics.kv_offload.tiers[0].hit_tokens : 0;
  if (evict) assert.ok(tierHits >= L - 16, `the returning turn reloads its context from host DRAM (${tierHits} tokens)`);
  return { miss: ttftMs(res, mine[0]), hit: ttftMs(res, returning), cached: returning[cols.indexOf('cached_tokens')] };
}

// gapS: seconds between the sessions, longer than any of their prefills (each runs alone).
const llama = { model: 'llama-3-8b', gpu: 'h100-sxm', maxLen: 8192, gapS: 10 };
const qwenCoder = { model: { preset: 'qwen3-30b-a3b', max_context: 262144 }, gpu: 'h20', maxLen: 131072, gapS: 300 };

const rowsOut = [];
function compare(source, what, predicted, published) {
  const error = predicted / published - 1;
  rowsOut.push({ source, what, predicted, published, error });
  return error;
}

test('KV offload against published measurements: predicted vs published TTFT, errors reported', () => {
  // vLLM blog: 512 tokens, recompute against a CPU load.
  const v = measure(llama, 512, true);
  const speedup = compare('vLLM blog 2025-12-29', 'Llama-3.1-8B H100, 512 tokens: TTFT recompute / CPU load', v.miss / v.hit, 2.0);

  // agentic-kvc: H20, Qwen3-Coder-30B-A3B, 1k and 64k tokens, each tier.
  const errors = [];
  for (const [L, gpuMs, cpuMs, missMs] of [[1024, 42, 57, 78], [65536, 111, 272, 15200]]) {
    const cpu = measure(qwenCoder, L, true);
    const serial = measure(qwenCoder, L, true, 'serial');
    const gpu = measure(qwenCoder, L, false);
    assert.ok(gpu.cached >= L - 16 && cpu.cached >= L - 16, `both returning turns reuse the context (${gpu.cached}, ${cpu.cached})`);
    const tag = `H20 Qwen3-Coder-30B-A3B, ${L / 1024}k tokens`;
    errors.push(compare('agentic-kvc 837df6bc', `${tag}: TTFT miss (ms)`, cpu.miss, missMs));
    errors.push(compare('agentic-kvc 837df6bc', `${tag}: TTFT CPU hit (ms)`, cpu.hit, cpuMs));
    errors.push(compare('agentic-kvc 837df6bc', `${tag}: TTFT GPU hit (ms)`, gpu.hit, gpuMs));
    compare('agentic-kvc 837df6bc', `${tag}: TTFT CPU hit, serial reload (ms)`, serial.hit, cpuMs);
    // Differences cancel what every request pays alike (the API server,
    // tokenization, the client), which the engine does not price: the reload's
    // cost over a GPU hit, and the recompute's.
    compare('agentic-kvc 837df6bc', `${tag}: CPU hit - GPU hit (ms)`, cpu.hit - gpu.hit, cpuMs - gpuMs);
    compare('agentic-kvc 837df6bc', `${tag}: CPU hit - GPU hit, serial reload (ms)`, serial.hit - gpu.hit, cpuMs - gpuMs);
    compare('agentic-kvc 837df6bc', `${tag}: miss - GPU hit (ms)`, cpu.miss - gpu.hit, missMs - gpuMs);
    // What the tiers are for: a GPU hit beats a CPU hit, which beats a recompute.
    assert.ok(gpu.hit < cpu.hit && cpu.hit <= serial.hit && serial.hit < cpu.miss,
      `${tag}: GPU ${gpu.hit} CPU ${cpu.hit} (serial ${serial.hit}) miss ${cpu.miss}`);
  }
  console.log('| source | measurement | predicted | published | error |\n|---|---|---|---|---|');
  for (const r of rowsOut)
    console.log(`| ${r.source} | ${r.what} | ${r.predicted.toPrecision(3)} | ${Number(r.published.toPrecision(4))} | ${(100 * r.error).toFixed(1)}% |`);
  // Loose bounds, set before the comparison was run, that fail when the tier
  // model breaks (a reload priced as a recompute, a recompute priced as free):
  // the 512-token speedup within a factor of 2 of the published one, and the
  // miss TTFTs, which the kernels set, within a factor of 2.
  assert.ok(Math.abs(Math.log(1 + speedup)) < Math.log(2), `512-token speedup off by ${speedup}`);
  for (const e of [errors[0], errors[3]]) assert.ok(Math.abs(Math.log(1 + e)) < Math.log(2), `miss off by ${e}`);
});
