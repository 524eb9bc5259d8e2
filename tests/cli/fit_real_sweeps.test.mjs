// Issue 37's acceptance on real same-cluster sweeps: a fit on half the runs
// predicts the other half at least as well as no calibration. The two SGLang
// sweeps of datacrunch-research/h200-benchmarks (tests/data/bench/SOURCES.md),
// fitted with `--holdout-every 2` on the base scenarios committed beside them
// (tests/data/bench/base_datacrunch_*.json). Judged by the fit's own report
// (held-out median |error|, calibrated against uncalibrated), never by time;
// the work each fit may do is bounded by its --max-work-units.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../wasm/wasm_module.mjs';
import { cli, workspace } from './fit_helpers.mjs';

const bench = path.join(repoRoot, 'tests', 'data', 'bench');
const { work } = workspace('sightline-fit-sweeps-');

const sweeps = [
  { name: 'Llama-3.1-405B TP8, 8xH200', doc: '405B, 8xH200', file: 'real/datacrunch_llama31-405b_8xh200_online.jsonl', base: 'base_datacrunch_llama31-405b_8xh200.json', units: '17500000' },
  { name: 'Llama-3.3-70B TP4, 4xH200', doc: '70B, 4xH200', file: 'real/datacrunch_llama33-70b_4xh200_online.jsonl', base: 'base_datacrunch_llama33-70b_4xh200.json', units: '50000000' },
];

for (const s of sweeps) {
  test(`real sweep ${s.name}: a fit on half the runs predicts the other half at least as well as no calibration`, () => {
    const out = path.join(work, `${path.basename(s.base, '.json')}-cal.json`);
    const r = cli(['fit', path.join(bench, s.file), '--base', path.join(bench, s.base), '--holdout-every', '2',
      '--max-work-units', s.units, '--out', out]);
    assert.equal(r.code, 0, r.err);
    const fit = JSON.parse(readFileSync(out, 'utf8')).fit;
    const held = fit.held_out;
    assert.ok(held && held.runs.length >= 3, `held-out runs: ${JSON.stringify(fit.held_out_skipped)}`);
    const before = held.median_abs_error_uncalibrated, after = held.median_abs_error;
    console.log(`${s.name}: held-out median |error| ${(100 * before).toFixed(1)}% uncalibrated -> ${(100 * after).toFixed(1)}% calibrated; ` +
      `leave-one-run-out ${JSON.stringify(fit.leave_one_run_out && [fit.leave_one_run_out.median_abs_error_uncalibrated, fit.leave_one_run_out.median_abs_error])}; ` +
      `replayed ${fit.runs.map((x) => `${x.replayed_requests}/${x.requests.completed}`).join(' ')}; factors ${JSON.stringify(fit.fitted)}`);
    assert.ok(after <= before, `${s.name}: calibrated held-out error ${after} above uncalibrated ${before}`);
    // docs/calibrate-from-benchmarks.md quotes this fit's figures (its table's row for the sweep; the
    // CPU column is a measurement, not checked): the same run, no extra CPU.
    const pct = (x) => `${(100 * x).toFixed(1)}%`;
    const cal = JSON.parse(readFileSync(out, 'utf8'));
    const docRow = readFileSync(path.join(repoRoot, 'docs', 'calibrate-from-benchmarks.md'), 'utf8').split('\n')
      .find((l) => l.startsWith(`| ${s.doc} |`));
    assert.ok(docRow, `docs/calibrate-from-benchmarks.md has a row for ${s.doc}`);
    const loo = fit.leave_one_run_out;
    for (const quoted of [`${pct(before)} → ${pct(after)}`, `${pct(loo.median_abs_error_uncalibrated)} → ${pct(loo.median_abs_error)}`,
      `| ${pct(fit.in_sample.median_abs_error_calibrated)} |`, `compute ${cal.factors.compute_efficiency_scale.toFixed(2)}`,
      `memory ${cal.factors.memory_efficiency_scale.toFixed(2)}`])
      assert.ok(docRow.includes(quoted), `docs/calibrate-from-benchmarks.md is stale for ${s.doc}: the fit gives ${quoted}\n${docRow}`);
    // Every run is replayed with as many requests as it completed, or the report says why not.
    for (const run of fit.runs) {
      if (run.replayed_requests < run.requests.completed)
        assert.ok(fit.warnings.some((w) => w.includes(`${run.where}: replayed ${run.replayed_requests} of the ${run.requests.completed}`)), JSON.stringify(fit.warnings));
    }
  });
}

test('real sweep: where the work budget cannot pay for every request, the largest runs are cut to one count and the report names each', () => {
  const out = path.join(work, 'cut.json');
  const r = cli(['fit', path.join(bench, sweeps[0].file), '--base', path.join(bench, sweeps[0].base), '--holdout-every', '0',
    '--max-work-units', '3000000', '--out', out]);
  assert.equal(r.code, 0, r.err);
  const fit = JSON.parse(readFileSync(out, 'utf8')).fit;
  const counts = fit.runs.map((x) => x.replayed_requests);
  const cut = fit.runs.filter((x) => x.replayed_requests < x.requests.completed);
  assert.ok(cut.length >= 1 && cut.length < fit.runs.length, JSON.stringify(counts));
  const common = cut[0].replayed_requests;
  assert.ok(common >= 300);
  for (const x of fit.runs) assert.equal(x.replayed_requests, Math.min(x.requests.completed, common));
  for (const x of cut) {
    assert.ok(fit.warnings.some((w) => w.includes(`${x.where}: replayed ${common} of the ${x.requests.completed} requests`) && /--max-work-units/.test(w)),
      JSON.stringify(fit.warnings));
  }
  assert.match(r.out + r.err, /replayed \d+ of the 2400 requests the run completed/);
});
