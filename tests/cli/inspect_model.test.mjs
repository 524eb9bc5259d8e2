// `sightline inspect-model`: what the engine understood of a published
// config.json, pasted as published (tests/data/hf/published, sources in its
// SOURCES.md), and a located error for one it cannot read. Each config is
// also run as a scenario's model through the real CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

const dir = path.join(repoRoot, 'tests', 'data', 'hf', 'published');
const configs = readdirSync(dir).filter((f) => f.endsWith('.json') && !f.endsWith('_hf_quant.json'));

function cli(args, input) {
  const r = spawnSync(cliPath, args, { cwd: repoRoot, input, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('every published config is understood: family, layers by kind, parameters, KV bytes, weights', () => {
  assert.ok(configs.length >= 15);
  for (const file of configs) {
    const r = cli(['inspect-model', path.join(dir, file), '--json']);
    assert.equal(r.code, 0, `${file}: ${r.err}`);
    const m = JSON.parse(r.out);
    assert.ok(m.family && m.family !== 'architecture', file);
    assert.equal(m.layers_by_kind.reduce((n, g) => n + g.count, 0), m.layers, file);
    assert.ok(m.params.total_B >= m.params.active_B && m.params.active_B > 0, file);
    for (const at of ['4K', '32K', '128K']) assert.ok(m.kv_cache.at[at].bytes_per_token > 0, `${file} ${at}`);
    // Capped and recurrent layers make the per-token cost fall with context, never rise.
    assert.ok(m.kv_cache.at['128K'].bytes_per_token <= m.kv_cache.at['4K'].bytes_per_token, file);
    assert.ok(m.weights.GiB > 0, file);
    // The table form says the same.
    const table = cli(['inspect-model', path.join(dir, file)]);
    assert.equal(table.code, 0, file);
    assert.match(table.out, new RegExp(`^family +${m.family}`, 'm'), file);
  }
});

test('each published config runs as a scenario model (latency on enough H200s)', () => {
  for (const file of configs) {
    const config = JSON.parse(readFileSync(path.join(dir, file), 'utf8').replace(/\bInfinity\b/g, '"Infinity"'));
    const scenario = {
      model: { hf_config: config },
      hardware: { gpu: 'h200', gpus_per_node: 8, intra_node: 'nvlink4-nvswitch' },
      serving: { mode: 'latency', parallelism: { tp: 8, pp: 1 }, workload: { prompt_tokens: 512, output_tokens: 64 } },
    };
    if (/Kimi-K2/.test(file)) scenario.precision = { weights: 'fp8' };
    const heads = config.text_config ? config.text_config.num_attention_heads : config.num_attention_heads;
    if (heads % 8 !== 0) scenario.serving.parallelism.tp = 4;
    scenario.hardware.gpus_per_node = scenario.serving.parallelism.tp;
    const r = cli(['run', '-', '--format', 'envelope'], JSON.stringify(scenario));
    const e = JSON.parse(r.out);
    assert.equal(e.ok, true, `${file}: ${JSON.stringify(e.error)}`);
    assert.ok(e.result.metrics.tpot_ms > 0, file);
    assert.equal(e.result.model.import.family.length > 0, true, file);
  }
});

test('a config it cannot read gets a located error that says what to do', () => {
  const r = cli(['inspect-model', '-', '--json'], JSON.stringify({ model_type: 'bert', hidden_size: 768 }));
  assert.equal(r.code, 1);
  assert.match(r.err, /error \[invalid_value\] at '\/hf_config\/model_type'/);
  assert.match(r.err, /supported: /);
});
