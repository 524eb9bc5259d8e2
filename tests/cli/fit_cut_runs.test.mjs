// GuideLLM rate runs cut in flight at max_seconds (issue 34 point 4, docs/calibrate-from-benchmarks.md
// "GuideLLM requests by status"): replayed as they ran, the window's requests at the rate they came
// in, the replay stopped at the window's end (benchmarks[i].duration) with its figures over the
// requests it completed by then; a replay that completes far more or fewer requests than the run is
// refused at the run's count. The real cut report is nirjhar17's Poisson 5 req/s run, in its reduced
// form (tests/data/bench/SOURCES.md: keys removed, no value changed); the rules around it are checked
// on the real GuideLLM 0.5 korat report with its strategy and counts changed to a cut rate run's.
// Judged by exit codes and output only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../wasm/wasm_module.mjs';
import { cli, workspace } from './fit_helpers.mjs';

const real = path.join(repoRoot, 'tests', 'data', 'bench', 'real');
const { work, write } = workspace('sightline-fit-cut-');
const poisson5 = path.join(real, 'nirjhar17_qwen3-0.6b_poisson5_reduced.json');
const korat = () => JSON.parse(readFileSync(path.join(real, 'korat_gpt-oss-20b_tp4_xpu.json'), 'utf8'));

// korat as a Poisson run of `successful` + `incomplete` requests in its 720 s window, cut at its end:
// no warm-up or cool-down (GuideLLM's defaults), the scheduler's clock of the window as written.
function cutRate({ successful, incomplete, rate = 0.05 }) {
  const j = korat();
  const b = j.benchmarks[0];
  b.config.strategy = { type_: 'poisson', worker_count: 10, max_concurrency: 512, rate, random_seed: 42 };
  b.metrics.request_totals = { successful, errored: 0, incomplete, total: successful + incomplete };
  b.scheduler_metrics.requests_made = { successful, errored: 0, incomplete: incomplete + 4, total: successful + incomplete + 4 };
  b.scheduler_state.cancelled_requests = incomplete + 10;
  b.warmup_duration = 0;
  b.cooldown_duration = 0;
  return j;
}

function base() {
  return {
    schema_version: 1, id: 'fit-cut-base', seed: 7, model: 'llama-2-7b',
    hardware: { gpu: 'a100-80g-sxm', gpus_per_node: 1 },
    serving: { mode: 'simulate', parallelism: { tp: 1, pp: 1 }, scheduler: { policy: 'continuous' },
      workload: { arrival: { process: 'poisson', rate_qps: 1 }, num_requests: 10, prompt_tokens: { dist: 'fixed', value: 128 }, output_tokens: { dist: 'fixed', value: 16 } } },
  };
}

test('fit: the real Poisson 5 req/s run is replayed stopped at 60 s and completes about its 337 requests', () => {
  const out = path.join(work, 'poisson5-fit.json');
  const r = cli(['fit', poisson5, '--base', write('base-p5.json', base()), '--holdout-every', '0', '--out', out]);
  assert.equal(r.code, 0, r.err);
  const fit = JSON.parse(readFileSync(out, 'utf8')).fit;
  assert.equal(fit.runs[0].replayed_requests, 340);
  assert.deepEqual(fit.runs[0].replayed_arrival, { process: 'poisson', rate_qps: 340 / 60, max_concurrency: 340 });
  const done = fit.in_sample.runs[0].requests_completed;
  assert.equal(done.measured, 337);
  // Within 3 sqrt(340) + 3 of the run's 337, and short of the 340 sent: the stop left requests out.
  assert.ok(Math.abs(done.uncalibrated - 337) <= 3 * Math.sqrt(340) + 3 && done.uncalibrated < 340, JSON.stringify(done));
  assert.ok(Math.abs(done.calibrated - 337) <= 3 * Math.sqrt(340) + 3 && done.calibrated < 340, JSON.stringify(done));
  // docs/calibrate-from-benchmarks.md ("What the stop is and is not") quotes this replay's count.
  const doc = readFileSync(path.join(repoRoot, 'docs', 'calibrate-from-benchmarks.md'), 'utf8').replace(/\s+/g, ' ');
  assert.ok(doc.includes(`the uncalibrated replay completes ${done.uncalibrated} of the 340 sent (the run: 337)`), 'the doc is stale');
});

test('GuideLLM: a rate run cut in flight is read with its window, the requests it sent and those it cut', () => {
  const r = cli(['fit', write('cut-rate.json', cutRate({ successful: 25, incomplete: 2 })), '--import-only']);
  assert.equal(r.code, 0, r.err);
  const [run] = JSON.parse(r.out);
  assert.equal(run.requests.completed, 25);
  assert.deepEqual(run.requests.stopped, { after_s: 720, sent: 27, in_flight: 2, source: '/benchmarks/0/duration' });
  assert.equal(run.load.rate_qps, 27 / 720);  // the window's own rate, not the strategy's 0.05/s
  assert.ok(run.notes.some((n) => /^2 requests were in flight when the benchmark stopped after 720 s and are in no figure: the replay sends the window's 27 requests at 0\.0375\/s \(the strategy's rate: 0\.05\/s\)/.test(n)), run.notes.join('\n'));
  // The scheduler cancelled 12: 2 in flight, 10 before they were sent.
  assert.ok(run.notes.some((n) => /^10 requests were created and cancelled before they were sent/.test(n)), run.notes.join('\n'));
});

test('GuideLLM: a cut window after a warm-up, or whose duration disagrees with the scheduler\'s clock, is refused there', () => {
  const warm = cutRate({ successful: 25, incomplete: 2 });
  warm.benchmarks[0].warmup_duration = 90;
  let r = cli(['fit', write('cut-warm.json', warm), '--import-only']);
  assert.equal(r.code, 1, r.out);
  assert.match(r.err, /error \[not_implemented\] at '\/benchmarks\/0\/warmup_duration': .*2 requests were cut in flight in a measured window with a warm-up before it/);
  const off = cutRate({ successful: 25, incomplete: 2 });
  off.benchmarks[0].duration = 700;
  r = cli(['fit', write('cut-off.json', off), '--import-only']);
  assert.equal(r.code, 1, r.out);
  assert.match(r.err, /error \[invalid_value\] at '\/benchmarks\/0\/duration': .*the benchmark's duration 700 s is not its measured window's span \(.* = 720 s\)/);
});

test('fit: a cut rate run is replayed stopped at its end, and completes about as many requests as the run', () => {
  const out = path.join(work, 'cut-fit.json');
  const r = cli(['fit', write('cut-fit-run.json', cutRate({ successful: 25, incomplete: 2 })), '--base', write('base.json', base()), '--holdout-every', '0', '--out', out]);
  assert.equal(r.code, 0, r.err);
  const fit = JSON.parse(readFileSync(out, 'utf8')).fit;
  assert.equal(fit.runs[0].replayed_requests, 27);
  assert.deepEqual(fit.runs[0].replayed_arrival, { process: 'poisson', rate_qps: 27 / 720, max_concurrency: 27 });
  const done = fit.in_sample.runs[0].requests_completed;
  assert.equal(done.measured, 25);
  // 3 standard deviations of the arrival count, 3 sqrt(27), plus the 2 the run had in flight.
  assert.ok(Math.abs(done.uncalibrated - 25) <= 3 * Math.sqrt(27) + 2, JSON.stringify(done));
  assert.ok(done.uncalibrated < 27, JSON.stringify(done));  // the stop left requests out
});

test('fit: a cut rate run whose replay completes far fewer requests than the run is refused at the run\'s count', () => {
  // 600 requests of 1024 output tokens in 60 s: 10/s, past what one A100 serves of Llama-2-7B.
  // 3 sqrt(600) + 3 = 76 apart at most.
  const fast = cutRate({ successful: 597, incomplete: 3, rate: 10 });
  fast.benchmarks[0].duration = 60;
  const sm = fast.benchmarks[0].scheduler_metrics;
  sm.measure_end_time = sm.measure_start_time + 60;
  const r = cli(['fit', write('cut-far.json', fast), '--base', write('base-far.json', base()), '--holdout-every', '0']);
  assert.equal(r.code, 1, r.out);
  assert.match(r.err, /^error \[constraint_violation\] at '\/benchmarks\/0\/metrics\/request_totals\/successful': .*cut-far\.json\/benchmarks\/0: replayed on .*base-far\.json without calibration and stopped at the benchmark's end \(60 s\), this run completes \d+ requests where the run completed 597, more than 76 apart \(3 sqrt\(sent\) \+ the requests the run had in flight\): a replay that finishes far more or far fewer requests than the run describes another run; no calibration is written/m);
});
