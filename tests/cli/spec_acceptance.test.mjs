// EAGLE-3 with acceptance from published data, through the real CLI
// (issue 42, point 4): the preset names the method and no acceptance rate, so
// the rate comes from the published rows for Qwen3-8B (presets/spec_acceptance),
// the result names the rows and their spread, and a rate the user gives wins.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

function cli(args) {
  const r = spawnSync(cliPath, args, { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout).result;
}

// A shipped preset: its headline throughput at QPS 2 is the arrival rate at
// either cost bound, so its interval is the window's sampling interval
// (throughput_sampling_interval), as every shipped preset's must be
// (tests/wasm/determinism.test.mjs).
const id = 'S.eagle3-qwen3-8b-h200';
const key = (r, k) => r.key_metrics.find((m) => m.id === k).value;
// The preset as shipped, simulated once for the two tests that read it (the
// same scenario and seed give the same bytes); each gets its own parsed copy.
let shippedOutput;
const shipped = () => {
  shippedOutput ??= JSON.stringify(cli(['run', '--preset', id, '--format', 'json']));
  return JSON.parse(shippedOutput);
};

// Tokens per verification step at a constant per-position rate a: 1 + a + ... + a^k.
const tau = (a, k) => Array.from({ length: k + 1 }, (_, i) => a ** i).reduce((x, y) => x + y, 0);

test(`${id}: acceptance from the published rows for the model, with its source`, () => {
  const r = shipped();
  const s = r.metrics.speculative;
  assert.equal(s.method, 'eagle3');
  assert.equal(s.acceptance_rate_assumed, false);
  const p = s.acceptance_published;
  assert.equal(p.basis, 'model');
  assert.equal(p.rows.length, 1);
  assert.match(p.rows[0], /vllm-eagle3-regression: qwen3-8b k=3 mt-bench tau=2\.26/);
  // The rate reproduces the published acceptance length at the published k.
  assert.ok(Math.abs(tau(s.acceptance_rate, 3) - 2.26) < 1e-6, `${s.acceptance_rate}`);
  assert.ok(p.rate_low <= s.acceptance_rate && s.acceptance_rate <= p.rate_high);
  // Committed tokens per step follow the rate, and decoding is faster than without a draft.
  assert.ok(Math.abs(s.tokens_per_verify_step - s.expected_tokens_per_verify_step) < 0.1 * s.expected_tokens_per_verify_step);
  assert.ok(key(r, 'compare_decode_speedup') > 1, `${key(r, 'compare_decode_speedup')}`);
  assert.ok(r.memory_per_gpu[0].draft_weights_GiB > 0);
});

test(`${id}: the headline throughput carries its sampling interval, and the SLO verdict is given`, () => {
  const r = shipped();
  const h = r.headline;
  assert.equal(h.verdict, 'meets', h.line);
  // Below capacity the cost bounds leave the throughput at the arrival rate
  // the window drew; its interval is the window's Poisson sampling interval.
  assert.ok(h.throughput_qps_low < h.throughput_qps && h.throughput_qps < h.throughput_qps_high,
    `${h.throughput_qps_low} ${h.throughput_qps} ${h.throughput_qps_high}`);
  const n = h.throughput_qps * (h.window_requests / h.arrival_rate_qps);
  // The interval's relative half-width is about z / sqrt(completions) (z = 1.28).
  const rel = (h.throughput_qps_high - h.throughput_qps_low) / 2 / h.throughput_qps;
  assert.ok(Math.abs(rel * Math.sqrt(n) / 1.2816 - 1) < 0.15, `half-width ${rel} for about ${n} completions`);
  for (const k of r.key_metrics) assert.ok(k.low < k.high, `${k.id}: ${k.low}..${k.high}`);
});

test(`${id}: a rate the user gives wins over the published rows`, () => {
  const scenario = JSON.parse(readFileSync(path.join(repoRoot, 'presets', 'scenarios', `${id}.json`), 'utf8'));
  scenario.serving.speculative.acceptance_rate = 0.4;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sl-eagle3-'));
  const file = path.join(dir, 'scenario.json');
  writeFileSync(file, JSON.stringify(scenario));
  const s = cli(['run', file, '--format', 'json']).metrics.speculative;
  assert.equal(s.acceptance_rate, 0.4);
  assert.equal(s.acceptance_rate_assumed, false);
  assert.equal(s.acceptance_published, undefined);
});
