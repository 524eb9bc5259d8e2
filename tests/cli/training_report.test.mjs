// `sightline report-training` (published training rows, measurements.md section 4):
// its summary is the median of its rows' errors, absolute and signed, and the
// absolute median meets the bar of 10%. The rows check the model; nothing
// is fitted to them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cliPath } from '../wasm/wasm_module.mjs';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
};

test('report-training: medians of the rows, absolute median within 10%', () => {
  const report = JSON.parse(execFileSync(cliPath, ['report-training', '--format', 'json']).toString());
  assert.ok(report.rows.length >= 10);
  const errors = report.rows.map((r) => r.error_pct);
  for (const r of report.rows) assert.ok(Number.isFinite(r.error_pct) && r.predicted > 0, r.id);
  assert.ok(Math.abs(report.median_abs_error_pct - median(errors.map(Math.abs))) < 1e-9);
  assert.ok(Math.abs(report.median_signed_error_pct - median(errors)) < 1e-9);
  assert.ok(report.median_abs_error_pct <= report.target_pct, `median |error| ${report.median_abs_error_pct}%`);
});
