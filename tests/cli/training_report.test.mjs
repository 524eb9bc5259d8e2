// `sightline report-training` (published training rows, measurements.md section 4):
// its summary is the median of its rows' errors, absolute and signed, and the
// absolute median meets the bar of 10%. The rows check the model; nothing
// is fitted to them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

// The report, run once for this file (about 0.1 s of CPU).
let cached;
const trainingReport = () => (cached ??= JSON.parse(execFileSync(cliPath, ['report-training', '--format', 'json']).toString()));

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
};

test('report-training: medians of the rows, absolute median within 10%', () => {
  const report = trainingReport();
  assert.ok(report.rows.length >= 10);
  const errors = report.rows.map((r) => r.error_pct);
  for (const r of report.rows) assert.ok(Number.isFinite(r.error_pct) && r.predicted > 0, r.id);
  assert.ok(Math.abs(report.median_abs_error_pct - median(errors.map(Math.abs))) < 1e-9);
  assert.ok(Math.abs(report.median_signed_error_pct - median(errors)) < 1e-9);
  assert.ok(report.median_abs_error_pct <= report.target_pct, `median |error| ${report.median_abs_error_pct}%`);
});

// A quoted figure equals `value` at the decimals it is quoted with ("1,914", "0.868", "−1.9").
function quotes(text, value) {
  const t = text.replace(/,/g, '').replace('−', '-').replace(/^\+/, '').replace(/%$/, '');
  const decimals = (t.split('.')[1] ?? '').length;
  return Number.isFinite(Number(t)) && Number(t) === Number(value.toFixed(decimals));
}

test('docs/training.md quotes what report-training prints: measured, predicted and the current error of each row', () => {
  // Its table: | id | configuration | measured | predicted | before FSDP | FSDP | eager | L2 share |, where the
  // predicted column and the last one (the current engine's error) are report-training's; the middle columns
  // are dated records of earlier engines.
  const doc = fs.readFileSync(path.join(repoRoot, 'docs', 'training.md'), 'utf8').split('\n');
  const byId = new Map(trainingReport().rows.map((r) => [r.id, r]));
  let rows = 0;
  for (const line of doc) {
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    if (cells.length !== 8 || !byId.has(cells[0])) continue;
    const r = byId.get(cells[0]);
    ++rows;
    assert.ok(quotes(cells[2], r.measured), `${r.id}: docs/training.md says measured ${cells[2]}, the report ${r.measured}`);
    assert.ok(quotes(cells[3], r.predicted), `${r.id}: docs/training.md says predicted ${cells[3]}, the report ${r.predicted}`);
    assert.ok(quotes(cells[7], r.error_pct), `${r.id}: docs/training.md says error ${cells[7]}, the report ${r.error_pct}%`);
  }
  assert.equal(rows, byId.size, 'docs/training.md has a row for every report-training row');
});
