// `sightline registries` exports the one catalogue (metrics, policy tables,
// parameter schema) that the page and the CLI tables are built from; every
// key metric a preset scenario names must exist in it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

function registries() {
  const r = spawnSync(cliPath, ['registries'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('sightline registries has the metric catalogue and one table per policy family', () => {
  const reg = registries();
  assert.ok(Array.isArray(reg.metrics) && reg.metrics.length > 100);
  for (const kind of ['latency', 'serving', 'training']) {
    assert.ok(reg.metrics.some((m) => m.kind === kind), `metrics of kind ${kind}`);
  }
  const seen = new Set();
  for (const m of reg.metrics) {
    for (const key of ['kind', 'id', 'label', 'unit', 'pointer', 'description']) assert.equal(typeof m[key], 'string', `${m.id}.${key}`);
    assert.ok(m.label.length > 0, `${m.kind}/${m.id} has a label`);
    assert.ok(!seen.has(`${m.kind}/${m.id}`), `${m.kind}/${m.id} listed once`);
    seen.add(`${m.kind}/${m.id}`);
  }
  for (const family of ['arrival_processes', 'routers', 'scheduler_policies', 'kv_allocations', 'preemption_modes']) {
    assert.ok(reg.policies[family].length > 0, family);
    for (const e of reg.policies[family]) assert.ok(e.name && e.description, `${family}/${e.name}`);
  }
});

test('every key metric a preset scenario names is in the catalogue, and results carry its label and unit', () => {
  const reg = registries();
  const byKind = (kind) => new Map(reg.metrics.filter((m) => m.kind === kind).map((m) => [m.id, m]));
  const dir = path.join(repoRoot, 'presets', 'scenarios');
  let named = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const s = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
    for (const kind of ['serving', 'training']) {
      for (const id of (s[kind] && s[kind].key_metrics) || []) {
        assert.ok(byKind(kind).has(id), `${file}: ${kind}.key_metrics '${id}' is not in the catalogue`);
        named += 1;
      }
    }
  }
  assert.ok(named > 20, `presets name ${named} key metrics`);
  const latency = byKind('latency');
  const r = JSON.parse(spawnSync(cliPath, ['run', '--preset', 'I1.1', '--format', 'json'], { cwd: repoRoot, encoding: 'utf8' }).stdout).result;
  for (const k of r.key_metrics) {
    assert.equal(k.label, latency.get(k.id).label);
    assert.equal(k.unit, latency.get(k.id).unit);
  }
});

test('the CLI tables label their rows with the catalogue: metrics, distributions, compare ratios', () => {
  const reg = registries();
  const label = (kind, id) => reg.metrics.find((m) => m.kind === kind && m.id === id).label;
  const table = (preset) => {
    const r = spawnSync(cliPath, ['run', '--preset', preset], { cwd: repoRoot, encoding: 'utf8' });
    assert.equal(r.status, 0, `${preset}: ${r.stderr}`);
    return r.stdout;
  };
  const serving = table('I2.4');
  for (const id of ['output_tokens_per_s', 'requests_per_s', 'kv_peak_utilization', 'running_max', 'compare_ttft_p99_ratio']) {
    assert.ok(serving.includes(`  ${label('serving', id)} `), `I2.4 table row ${id}`);
  }
  assert.ok(Array.isArray(reg.distributions) && reg.distributions.length >= 5);
  for (const d of reg.distributions) assert.ok(serving.includes(`  ${d.label} (${d.unit})`), `distribution ${d.id}`);
  const quant = table('I5.4');
  assert.ok(quant.includes(`  ${label('serving', 'quant_decode_speedup')}`));
  const training = table('T3.5');
  for (const id of ['step_time_ms', 'mfu_pct', 'dp_grad_sync_ms', 'layer_fwd_bwd_ms']) {
    assert.ok(training.includes(`  ${label('training', id)} `), `T3.5 table row ${id}`);
  }
});
