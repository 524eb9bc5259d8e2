// End-to-end tests of the real `sightline` CLI: commands, formats, exit codes
// and located errors on stderr.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

function cli(args, input) {
  const r = spawnSync(cliPath, args, { cwd: repoRoot, input, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('I1.1 prints TTFT, TPOT and a memory breakdown; TPOT is above the weight-read floor', () => {
  const table = cli(['run', '--preset', 'I1.1']);
  assert.equal(table.code, 0, table.err);
  // The metric rows carry the catalogue's labels and units (the page shows the same words).
  const registries = JSON.parse(cli(['registries']).out);
  const catalogue = registries.metrics.filter((m) => m.kind === 'latency');
  for (const id of ['ttft_ms', 'tpot_ms', 'e2e_ms', 'output_tokens_per_s']) {
    const m = catalogue.find((e) => e.id === id);
    assert.match(table.out, new RegExp(`^  ${m.label} +[\\d.]+ ${m.unit}$`, 'm'), id);
  }
  for (const id of ['weights_GiB', 'kv_cache_GiB', 'activations_GiB', 'free_GiB']) {
    const part = registries.memory_parts.find((p) => p.kind === 'latency' && p.id === id);
    assert.match(table.out, new RegExp(`^  ${part.label} +[\\d.]+$`, 'm'), id);
  }
  const r = JSON.parse(cli(['run', '--preset', 'I1.1', '--format', 'json']).out).result;
  // Llama-2-7B bf16 on A100-80G: every decode step reads the weights once.
  const floorMs = (6.738e9 - 32000 * 4096) * 2 / 2039e9 * 1e3;
  assert.ok(r.metrics.tpot_ms >= floorMs, `TPOT ${r.metrics.tpot_ms} ms below floor ${floorMs}`);
  assert.ok(r.metrics.ttft_ms > 0 && r.metrics.ttft_ms < r.metrics.e2e_ms);
  assert.ok(Math.abs(r.metrics.e2e_ms - (r.metrics.ttft_ms + 127 * r.metrics.tpot_ms)) < 1e-6);
  assert.ok(r.memory_per_gpu.weights_GiB > 12 && r.memory_per_gpu.weights_GiB < 13);
});

test('csv output has a header and one key,value per metric', () => {
  const r = cli(['run', '--preset', 'I1.2', '--format', 'csv']);
  assert.equal(r.code, 0);
  const lines = r.out.trim().split('\n');
  assert.equal(lines[0], 'key,value');
  assert.ok(lines.some((l) => l.startsWith('metrics.ttft_ms,')));
});

test('presets lists one id per line with a title, and full records as json', () => {
  for (const kind of ['models', 'gpus', 'interconnects', 'scenarios']) {
    const r = cli(['presets', kind]);
    assert.equal(r.code, 0);
    for (const line of r.out.trim().split('\n')) assert.match(line, /^\S+\t.+$/);
  }
  assert.match(cli(['presets', 'scenarios']).out, /^I1\.1\tShort prompt, short generation$/m);
  const gpus = JSON.parse(cli(['presets', 'gpus', '--format', 'json']).out);
  assert.ok(gpus.length >= 10);
  for (const g of gpus) assert.ok(g.source && g.hbm_bandwidth_GBps > 0);
  // The table names each GPU's own link, the network between its nodes and its source.
  for (const line of cli(['presets', 'gpus']).out.trim().split('\n')) {
    const [id, , linkId, networkId, source] = line.split('\t');
    assert.ok(linkId && networkId && source && source.length > 40, id);
  }
});

test('validate accepts a good file and reads standard input', () => {
  const scenario = cli(['presets', 'scenarios', '--format', 'json']);
  const first = JSON.parse(scenario.out)[0];
  const r = cli(['validate', '-'], JSON.stringify(first));
  assert.equal(r.code, 0);
  assert.equal(r.out.trim(), 'ok');
});

test('bad input exits non-zero with a located message on stderr', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sightline-'));
  const file = path.join(dir, 'bad.json');
  const s = JSON.parse(cli(['presets', 'scenarios', '--format', 'json']).out)[0];
  s.serving.parallelism.tp = 3;
  writeFileSync(file, JSON.stringify(s));
  for (const cmd of ['validate', 'run']) {
    const r = cli([cmd, file]);
    assert.equal(r.code, 1);
    assert.equal(r.out, '');
    assert.match(r.err, /error \[constraint_violation\] at '\/serving\/parallelism\/tp'/);
  }
  const missing = cli(['run', path.join(dir, 'nope.json')]);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /cannot read/);
  const unknown = cli(['run', '--preset', 'Z9.9']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.err, /unknown_preset/);
});

test('usage errors exit 2', () => {
  assert.equal(cli(['frobnicate']).code, 2);
  assert.equal(cli(['run']).code, 2);
  assert.equal(cli(['run', '--preset', 'I1.1', '--format', 'xml']).code, 2);
});

test('version reports engine and schema versions', () => {
  const v = JSON.parse(cli(['version']).out);
  assert.equal(v.scenario_schema_version, 1);
  assert.match(v.engine_version, /^\d+\.\d+\.\d+$/);
});

test('--central-only runs the central cost once: same values, no low/high, says so', () => {
  let numeric = 0;
  for (const preset of ['I1.1', 'I3.1', 'T1.1']) {
    const full = JSON.parse(cli(['run', '--preset', preset, '--format', 'json']).out).result;
    const r = cli(['run', '--preset', preset, '--format', 'json', '--central-only']);
    assert.equal(r.code, 0, r.err);
    const central = JSON.parse(r.out).result;
    assert.equal(central.intervals, 'central_only');
    assert.equal(full.intervals, undefined);
    assert.deepEqual(central.accuracy, full.accuracy);
    assert.ok(Array.isArray(full.key_metrics) && Array.isArray(central.key_metrics), `${preset}: key_metrics is an array`);
    const entries = (km) => km.map((e) => [e.id, e]);
    const fullById = new Map(entries(full.key_metrics));
    for (const [id, e] of entries(central.key_metrics)) {
      assert.equal(e.low, undefined, `${preset} ${id} has low`);
      assert.equal(e.high, undefined, `${preset} ${id} has high`);
      assert.deepEqual(e.value, fullById.get(id).value, `${preset} ${id}`);
      const f = fullById.get(id);
      if (typeof e.value === 'number' && typeof f.low === 'number') {
        numeric += 1;
        assert.ok(f.low < f.value && f.value < f.high, `${preset} ${id}: the full run brackets the value`);
      }
    }
  }
  assert.ok(numeric > 0);
});
