// Multi-turn sessions, KV offload tiers and cache-aware routing through the
// real CLI (issue 42): each shipped preset runs as shipped (intervals
// included) and answers its question, and the table shows the sessions and
// the tiers.
//   - S.agentic-coding: returning turns reuse their context from the prefix
//     cache, so mean TTFT is far below that with prefix caching off; every
//     session completes.
//   - S.chat-offload: a host-DRAM tier serves the contexts HBM evicted, so
//     mean TTFT is lower than with HBM alone.
//   - S.prefix-affinity-8: prefix affinity hits the cache more often than
//     round robin and lowers mean TTFT.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

function cli(args) {
  const r = spawnSync(cliPath, args, { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

const runPreset = (id) => JSON.parse(cli(['run', '--preset', id, '--format', 'json'])).result;
const key = (r, id) => r.key_metrics.find((k) => k.id === id).value;

test('S.agentic-coding: returning turns reuse their context', () => {
  const r = runPreset('S.agentic-coding');
  const s = r.metrics.sessions;
  assert.equal(s.total, 40);
  assert.equal(s.completed, s.total);
  assert.equal(s.turns_completed, s.turns);
  assert.ok(key(r, 'compare_ttft_mean_ratio') < 0.5, `ratio ${key(r, 'compare_ttft_mean_ratio')}`);
  assert.equal(r.compare.baseline.metrics.sessions.returning_cached_token_fraction, 0);
  assert.ok(key(r, 'session_returning_hit_rate') > 0.5, `hit rate ${key(r, 'session_returning_hit_rate')}`);
  for (const k of r.key_metrics) assert.notEqual(k.value, null, k.id);
});

test('S.chat-offload: a host DRAM tier lowers TTFT against HBM alone', () => {
  const r = runPreset('S.chat-offload');
  const tiers = r.metrics.kv_offload.tiers;
  assert.equal(tiers.length, 1);
  assert.ok(tiers[0].hit_tokens > 0);
  assert.ok(key(r, 'offload_tier1_hit_rate') > 0.05);
  assert.ok(key(r, 'compare_ttft_mean_ratio') < 1, `ratio ${key(r, 'compare_ttft_mean_ratio')}`);
  assert.equal(r.compare.baseline.metrics.kv_offload, undefined);
  // The tiers' hits and HBM's add up to the prefix cache's.
  const found = r.metrics.kv_offload.hbm_hit_tokens + tiers.reduce((a, t) => a + t.hit_tokens, 0);
  assert.equal(found, r.metrics.prefix_cache.cached_tokens);
});

test('S.prefix-affinity-8: prefix affinity beats round robin on hit rate and TTFT', () => {
  const r = runPreset('S.prefix-affinity-8');
  assert.equal(r.deployment.pools[0].replicas, 8);
  assert.ok(key(r, 'prefix_hit_rate') > r.compare.baseline.metrics.prefix_cache.cached_token_fraction);
  assert.ok(key(r, 'compare_ttft_mean_ratio') < 1);
});

test('the table shows the sessions and the offload tiers', () => {
  const out = cli(['run', '--preset', 'S.chat-offload', '--central-only']);
  assert.match(out, /sessions \(100 of 100 completed, \d+ turns\)/);
  assert.match(out, /mean TTFT of returning turns\s+[\d.]+\s+ms/);
  assert.match(out, /KV offload tiers .*reloads layerwise/);
  assert.match(out, /Host DRAM over PCIe Gen5 x16\s+0\.\d+\s+fraction/);
});
