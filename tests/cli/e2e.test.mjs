// The development end-to-end report (`sightline report-e2e`): every row preset
// under presets/validation runs through the real CLI and gets a finite
// prediction and a signed error, and the summary is the median of the rows.
// The numbers themselves are printed, not asserted: the rows check the model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? 0 : n % 2 ? s[(n - 1) / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
};

test('report-e2e runs every validation row and summarises its errors', () => {
  const report = JSON.parse(execFileSync(cliPath, ['report-e2e', '--format', 'json']).toString());
  const dir = path.join(repoRoot, 'presets', 'validation');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  assert.deepEqual(report.failed, []);
  assert.equal(report.rows.length, files.length);
  for (const r of report.rows) {
    assert.ok(Number.isFinite(r.predicted) && r.predicted > 0, `${r.id} predicted ${r.predicted}`);
    // Times: the quantity before the first dot (a simulation's "e2e_s.mean") is in ms or s.
    const head = r.metric.split('.')[0];
    const lowerIsBetter = !r.ratio && (head.endsWith('_ms') || head === 'e2e_s');
    const optimism = lowerIsBetter ? r.measured / r.predicted - 1 : r.predicted / r.measured - 1;
    assert.ok(Math.abs(100 * optimism - r.signed_error_pct) < 1e-9, r.id);
  }
  const signed = report.rows.map((r) => r.signed_error_pct);
  assert.ok(Math.abs(report.summary.all.median_signed_error_pct - median(signed)) < 1e-9);
  assert.ok(Math.abs(report.summary.all.median_abs_error_pct - median(signed.map(Math.abs))) < 1e-9);
  assert.ok(report.rows.some((r) => r.group === 'inference') && report.rows.some((r) => r.group === 'training'));
  // Print the table for the log: the figures are the point of this layer.
  console.log(execFileSync(cliPath, ['report-e2e']).toString());
});

test('every validation row names its measurements.md row in its source', () => {
  const dir = path.join(repoRoot, 'presets', 'validation');
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.json'))) {
    const row = JSON.parse(readFileSync(path.join(dir, f), 'utf8'));
    assert.equal(`${row.id}.json`, f);
    assert.match(row.source, /measurements(-r\d+)?\.md/, f);
    assert.ok(row.source.includes(row.row.replace(/^8a-T[12]-.*/, 'Table')), `${f}: source names ${row.row}`);
    assert.ok(Number.isFinite(row.measured) && row.measured > 0, f);
    assert.ok(('scenario' in row) !== ('scenario_preset' in row), `${f}: one scenario`);
  }
});

test('report-e2e rejects unknown arguments with a usage error', () => {
  assert.throws(() => execFileSync(cliPath, ['report-e2e', '--bogus'], { stdio: 'pipe' }), (e) => e.status === 2);
});
