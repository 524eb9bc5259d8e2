// report-e2e's summaries by kind, vendor and stack (issue 38): every metric
// row falls in exactly one group of each axis, each group's medians are the
// medians of its rows, and a training row carries the stack its row names.
// A few rows keep it quick; the full report is e2e.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cliPath } from '../wasm/wasm_module.mjs';

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? 0 : n % 2 ? s[(n - 1) / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
};

const rows = 'E.TT3,E.PTDP-1.7B,E.L4-isl128,E.ZERO3-175B-384';

test('report-e2e: by kind, vendor and stack, each row once, medians of the group', () => {
  const report = JSON.parse(execFileSync(cliPath, ['report-e2e', '--format', 'json', '--rows', rows]).toString());
  assert.deepEqual(report.failed, []);
  assert.equal(report.rows.length, 4);
  const axes = { kind: 'mode', vendor: 'vendor', stack: 'stack' };
  for (const [axis, field] of Object.entries(axes)) {
    const groups = report.summary[`by_${axis}`];
    const members = {};
    for (const r of report.rows) (members[r[field]] ||= []).push(r.signed_error_pct);
    assert.deepEqual(Object.keys(groups).sort(), Object.keys(members).sort(), axis);
    for (const [name, errs] of Object.entries(members)) {
      assert.equal(groups[name].rows, errs.length, `${axis} ${name}`);
      assert.ok(Math.abs(groups[name].median_signed_error_pct - median(errs)) < 1e-9, `${axis} ${name}`);
      assert.ok(Math.abs(groups[name].median_abs_error_pct - median(errs.map(Math.abs))) < 1e-9, `${axis} ${name}`);
    }
  }
  const byId = Object.fromEntries(report.rows.map((r) => [r.id, r]));
  assert.equal(byId['E.TT3'].stack, 'torchtitan');
  assert.equal(byId['E.PTDP-1.7B'].stack, 'megatron-lm');
  assert.equal(byId['E.ZERO3-175B-384'].stack, 'deepspeed-zero3');
  assert.equal(byId['E.L4-isl128'].stack, 'trtllm-like');  // a serving row: the stack its scenario runs on
  assert.equal(byId['E.TT3'].vendor, 'nvidia');
});

test('report-e2e --by picks the table printed', () => {
  const out = execFileSync(cliPath, ['report-e2e', '--rows', 'E.TT3', '--by', 'stack']).toString();
  assert.match(out, /\nby stack\n {2}torchtitan/);
  assert.doesNotMatch(out, /\nby vendor\n/);
});

test('report-e2e: intervals by kind count each row of the kind, and a run interval only where it covers or not', () => {
  // Three training rows: leave-one-out judges each against the other two.
  const ids = 'E.TT3,E.PTDP-1.7B,E.ZERO3-175B-384,E.L4-isl128';
  const report = JSON.parse(execFileSync(cliPath, ['report-e2e', '--format', 'json', '--rows', ids]).toString());
  const intervals = report.summary.intervals_by_kind;
  const training = report.rows.filter((r) => r.mode === 'training');
  const t = intervals.training;
  assert.equal(t.rows, training.length);
  assert.equal(t.loo_judged, training.length);
  assert.ok(t.loo_covered >= 0 && t.loo_covered <= t.loo_judged);
  const [lo, hi] = t.band_signed_error_pct;
  const errs = training.map((r) => r.signed_error_pct);
  assert.ok(lo <= hi && lo >= Math.min(...errs) - 1e-9 && hi <= Math.max(...errs) + 1e-9, `${lo} ${hi} ${errs}`);
  // A run's own interval: covers_measured says whether the measured figure lies in it.
  const withInterval = report.rows.filter((r) => r.interval);
  assert.equal(withInterval.filter((r) => r.mode === 'training').length, t.engine_interval_rows);
  for (const r of withInterval) {
    assert.ok(r.interval.low <= r.predicted * (1 + 1e-9) && r.predicted <= r.interval.high * (1 + 1e-9), r.id);
    assert.equal(r.interval.covers_measured, r.measured >= r.interval.low && r.measured <= r.interval.high, r.id);
  }
  // One latency row: too few to judge by leave-one-out.
  assert.equal(intervals.serving_latency.loo_judged, 0);
  assert.equal(intervals.serving_latency.loo_coverage, null);
});
