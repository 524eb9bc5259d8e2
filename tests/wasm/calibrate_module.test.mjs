// The Calibrate tab's module (sightline-calibrate.wasm) is `sightline fit`:
// every real benchmark file reads to the same runs as `fit --import-only` (or
// the same located refusal), and a fit gives the same calibration, byte for
// byte, as `fit --format json`; the page's module applies it as
// `run --calibration` does. Progress arrives in [0, 1], never decreasing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { cliPath, loadWasm, repoRoot } from './wasm_module.mjs';

const realDir = 'tests/data/bench/real';
const sightline = (args) => spawnSync(cliPath, args, { cwd: repoRoot, encoding: 'utf8', maxBuffer: 1 << 28 });

test('every real benchmark file: importBenchFile in wasm equals fit --import-only natively', async () => {
  const cal = await loadWasm('sightline-calibrate');
  const files = fs.readdirSync(path.join(repoRoot, realDir)).sort();
  assert.ok(files.length >= 10, `${files.length} files`);
  for (const f of files) {
    const name = `${realDir}/${f}`;
    const env = JSON.parse(cal.importBenchFile(name, fs.readFileSync(path.join(repoRoot, name), 'utf8'), ''));
    const r = sightline(['fit', name, '--import-only']);
    if (env.ok) {
      assert.equal(r.status, 0, `${f}: ${r.stderr}`);
      assert.deepEqual(env.result, JSON.parse(r.stdout), f);
    } else {
      assert.notEqual(r.status, 0, `${f}: refused in wasm only: ${env.error.message}`);
      assert.ok(r.stderr.includes(env.error.message), `${f}: ${r.stderr} vs ${env.error.message}`);
    }
  }
});

// A GuideLLM rate run cut in flight replays stopped at its end (SimulationSpec::stop_at_s): the same
// requests complete by the stop in wasm as natively, so the calibration is the same, byte for byte.
test('a fit of a run cut in flight, replayed stopped at its end, is the same in wasm as natively', async () => {
  const cal = await loadWasm('sightline-calibrate');
  const file = `${realDir}/nirjhar17_qwen3-0.6b_poisson5_reduced.json`;
  const base = 'presets/scenarios/I2.2.json';
  const env = JSON.parse(cal.fitCalibration(JSON.stringify({
    base: JSON.parse(fs.readFileSync(path.join(repoRoot, base), 'utf8')),
    base_name: base,
    files: [{ name: file, text: fs.readFileSync(path.join(repoRoot, file), 'utf8') }],
    id: 'lab',
  }), () => {}));
  assert.equal(env.ok, true, JSON.stringify(env.error));
  const r = sightline(['fit', file, '--base', base, '--id', 'lab', '--format', 'json']);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(env.result, JSON.parse(r.stdout));
  assert.ok(env.result.fit.in_sample.runs[0].requests_completed.uncalibrated < 340);  // the stop left requests out
});

test('a fit in wasm is sightline fit natively, byte for byte, with progress; applied like run --calibration', async () => {
  const cal = await loadWasm('sightline-calibrate');
  const file = `${realDir}/er0080_opt125m_sweep_seqs4_c2_summary.json`;
  const base = 'presets/scenarios/I2.2.json';
  const progress = [];
  const env = JSON.parse(cal.fitCalibration(JSON.stringify({
    base: JSON.parse(fs.readFileSync(path.join(repoRoot, base), 'utf8')),
    base_name: base,
    files: [{ name: file, text: fs.readFileSync(path.join(repoRoot, file), 'utf8') }],
    id: 'lab',
  }), (p) => progress.push(p)));
  assert.equal(env.ok, true, JSON.stringify(env.error));
  const r = sightline(['fit', file, '--base', base, '--id', 'lab', '--format', 'json']);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(env.result, JSON.parse(r.stdout));
  assert.ok(progress.length >= 4 && progress.every((p, i) => p > 0 && p <= 1 && (i === 0 || p >= progress[i - 1])),
    JSON.stringify(progress));

  const page = await loadWasm();
  assert.equal(typeof page.importBenchFile, 'undefined', 'the page\'s module leaves the readers to the on-demand one');
  const scenario = fs.readFileSync(path.join(repoRoot, base), 'utf8');
  const applied = JSON.parse(page.applyCalibration(scenario, JSON.stringify(env.result)));
  assert.equal(applied.ok, true);
  const run = JSON.parse(page.runScenario(JSON.stringify(applied.result)));
  const calFile = path.join(fs.mkdtempSync('/tmp/sightline-cal-'), 'lab.json');
  fs.writeFileSync(calFile, JSON.stringify(env.result));
  const native = sightline(['run', base, '--calibration', calFile, '--format', 'envelope']);
  assert.equal(native.status, 0, native.stderr);
  assert.deepEqual(run, JSON.parse(native.stdout));
});
