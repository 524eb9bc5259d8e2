// The development end-to-end report (`sightline report-e2e`): every row preset
// under presets/validation runs through the real CLI and gets a finite
// prediction and a signed error, and the summary is the median of the rows.
// The numbers themselves are printed, not asserted: the rows check the model.
// Capacity rows (MLPerf Server: a max-QPS search each, about a million simulated
// requests and tens of seconds) are left to `sightline report-e2e --check capacity`;
// here they run with their search capped, and only their plumbing is checked.
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

const metricRowFiles = () => {
  const dir = path.join(repoRoot, 'presets', 'validation');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .filter((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')).check !== 'capacity');
};

test('report-e2e runs every validation row and summarises its errors', () => {
  const report = JSON.parse(execFileSync(cliPath, ['report-e2e', '--format', 'json', '--check', 'metric']).toString());
  const files = metricRowFiles();
  assert.deepEqual(report.failed, []);
  assert.equal(report.rows.length, files.length);
  assert.deepEqual(report.capacity_rows, []);
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
  // The page's accuracy badge shows web/src/client/measured-errors.json: it must say what the engine measures now
  // (after a model change: node web/measured-errors.mjs).
  // It groups by kind and tier (dense runs) and by kind and deployment class (the others).
  const measuredFile = JSON.parse(readFileSync(path.join(repoRoot, 'web', 'src', 'client', 'measured-errors.json'), 'utf8'));
  for (const [fileKey, rowKey, summaryKey] of [['by_mode', 'cost_tier', 'by_mode'], ['by_layout', 'layout', 'by_mode_layout']]) {
    const groups = {};
    for (const r of report.rows) ((groups[r.mode] ||= {})[r[rowKey]] ||= []).push(r.signed_error_pct);
    const file = measuredFile[fileKey];
    const stale = `web/src/client/measured-errors.json's ${fileKey} is stale: run node web/measured-errors.mjs`;
    assert.ok(file, stale);
    assert.deepEqual(Object.keys(file).sort(), Object.keys(groups).sort(), stale);
    for (const [mode, tiers] of Object.entries(groups)) {
      assert.deepEqual(Object.keys(file[mode]).sort(), Object.keys(tiers).sort(), `${mode}: ${stale}`);
      for (const [tier, errs] of Object.entries(tiers)) {
        const f = file[mode][tier];
        const s = report.summary[summaryKey][mode][tier];
        assert.equal(f.rows, errs.length, `${mode} ${tier}: ${stale}`);
        assert.ok(Math.abs(s.median_signed_error_pct - median(errs)) < 1e-9, `${mode} ${tier}`);
        assert.ok(Math.abs(s.median_abs_error_pct - median(errs.map(Math.abs))) < 1e-9, `${mode} ${tier}`);
        assert.ok(Math.abs(f.median_signed_error_pct - s.median_signed_error_pct) <= 0.005 + 1e-9, `${mode} ${tier}: ${stale}`);
        assert.ok(Math.abs(f.median_abs_error_pct - s.median_abs_error_pct) <= 0.005 + 1e-9, `${mode} ${tier}: ${stale}`);
      }
    }
  }
  // The runs' 80% intervals are widened to presets/transfer_errors/end_to_end.json
  // (engine/jobs/kind_error_band.hpp): each kind's band must be the one report-e2e
  // computes on the current engine, to the last bit (after a model change:
  // node web/measured-errors.mjs, then rebuild).
  const bandFile = JSON.parse(readFileSync(path.join(repoRoot, 'presets', 'transfer_errors', 'end_to_end.json'), 'utf8'));
  const staleBand = 'presets/transfer_errors/end_to_end.json is stale: run node web/measured-errors.mjs and rebuild';
  const byKind = report.summary.intervals_by_kind;
  assert.deepEqual(Object.keys(bandFile.kinds).sort(), Object.keys(byKind).sort(), staleBand);
  for (const [kind, k] of Object.entries(byKind)) {
    const { loo_covered: _judgedHere, ...band } = k.finite_sample;
    assert.deepEqual(bandFile.kinds[kind], { rows: k.rows, ...band }, `${kind}: ${staleBand}`);
    assert.equal(bandFile.level, k.level, staleBand);
  }
  // docs/accuracy.md quotes the summary by kind, vendor, stack and layout and the
  // intervals by kind: a stale figure fails here (issue 40, signposts).
  const doc = readFileSync(path.join(repoRoot, 'docs', 'accuracy.md'), 'utf8');
  for (const table of [summaryTable(report.summary), intervalsTable(report.summary.intervals_by_kind)]) {
    assert.ok(doc.includes(table), `docs/accuracy.md should quote what report-e2e --check metric measures now:\n${table}`);
  }
  // Print the table for the log: the figures are the point of this layer.
  console.log(execFileSync(cliPath, ['report-e2e', '--check', 'metric']).toString());
});

// A signed percentage as the docs print it: one decimal, sign always, a true minus.
const signedPct = (x) => `${x < 0 ? '\u2212' : '+'}${Math.abs(x).toFixed(1)}%`;
const errorCell = (s) => `${s.median_abs_error_pct.toFixed(1)}% / ${signedPct(s.median_signed_error_pct)} (${s.rows})`;

// docs/accuracy.md's "By kind, vendor and stack" table, from report-e2e's JSON summary.
function summaryTable(summary) {
  const lines = ['| axis | group | median \\|error\\| / median signed error (rows) |', '|---|---|---|'];
  for (const [axis, key] of [['kind', 'by_kind'], ['vendor', 'by_vendor'], ['stack', 'by_stack'], ['layout', 'by_layout']]) {
    for (const group of Object.keys(summary[key]).sort()) lines.push(`| ${axis} | ${group} | ${errorCell(summary[key][group])} |`);
  }
  for (const group of ['inference', 'training', 'all']) lines.push(`| all | ${group} | ${errorCell(summary[group])} |`);
  return lines.join('\n');
}

// docs/accuracy.md's "80% intervals by kind" table, from summary.intervals_by_kind.
function intervalsTable(byKind) {
  const share = (k, n) => `${k}/${n} (${Math.round((100 * k) / n)}%)`;
  const band = (lo, hi) => `${signedPct(lo)} … ${signedPct(hi)}`;
  const lines = [
    '| kind | rows | percentile band | its leave-one-out coverage | finite-sample band | its leave-one-out coverage '
      + '| kernels\' interval covers | run\'s interval covers, leave-one-out | run\'s interval covers, shipped band (in sample) |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const kind of Object.keys(byKind).sort()) {
    const b = byKind[kind];
    const f = b.finite_sample;
    lines.push(`| ${kind} | ${b.rows} | ${band(...b.band_signed_error_pct)} | ${share(b.loo_covered, b.loo_judged)} | `
      + `${band(f.low_signed_error_pct, f.high_signed_error_pct)}${f.reaches_level ? '' : ' (extremes: too few rows)'} | `
      + `${share(f.loo_covered, b.loo_judged)} | ${share(b.kernel_interval_covered, b.engine_interval_rows)} | `
      + `${share(b.run_interval_loo_covered, b.run_interval_loo_judged)} | ${share(b.engine_interval_covered, b.engine_interval_rows)} |`);
  }
  return lines.join('\n');
}

// Each capacity row gets a predicted rate or a located reason. The cap (24,000
// requests a search run, ~2 s) makes the answer err low, so only its sense is
// checked: a rate above zero, below the measured service rate, its signed error.
test('report-e2e --check capacity: every MLPerf Server row gets a rate or a located reason', () => {
  const dir = path.join(repoRoot, 'presets', 'validation');
  const ids = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(path.join(dir, f), 'utf8')))
    .filter((row) => row.check === 'capacity')
    .map((row) => row.id);
  assert.ok(ids.length >= 1, 'at least one capacity row (MLPerf Server)');
  const args = ['report-e2e', '--format', 'json', '--check', 'capacity', '--search-max-requests', '24000'];
  args.push('--rows', ids.join(','));
  const report = JSON.parse(execFileSync(cliPath, args).toString());
  assert.deepEqual(report.rows, []);
  assert.equal(report.search_max_requests, 24000);
  assert.deepEqual([...report.capacity_rows.map((r) => r.id), ...report.failed.map((f) => f.id)].sort(), ids.sort());
  for (const f of report.failed) {
    for (const k of ['code', 'path', 'message']) assert.ok(typeof f.error[k] === 'string' && f.error[k], `${f.id} ${k}`);
  }
  for (const r of report.capacity_rows) {
    assert.equal(r.check, 'capacity');
    assert.ok(r.predicted > 0 && r.predicted <= r.upper_qps && r.predicted < r.service_rate_qps, JSON.stringify(r));
    assert.ok(r.max_requests_per_run <= 24000);
    assert.ok(r.slo.percentiles.ttft === 'p99' && r.slo.percentiles.tpot === 'p99', `${r.id}: MLPerf's p99 bounds`);
    assert.ok(Math.abs(100 * (r.predicted / r.measured - 1) - r.signed_error_pct) < 1e-9, r.id);
  }
  const signed = report.capacity_rows.map((r) => r.signed_error_pct);
  assert.equal(report.summary.capacity.rows, signed.length);
  assert.ok(Math.abs(report.summary.capacity.median_signed_error_pct - median(signed)) < 1e-9);
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
  assert.throws(() => execFileSync(cliPath, ['report-e2e', '--rows', 'E.no-such-row'], { stdio: 'pipe' }),
    (e) => e.status === 2 && /E\.no-such-row/.test(e.stderr.toString()));
  assert.throws(() => execFileSync(cliPath, ['report-e2e', '--check', 'some'], { stdio: 'pipe' }), (e) => e.status === 2);
});
