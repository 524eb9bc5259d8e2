// The serving headline through the real CLI: throughput and goodput over the
// steady arrival window, the engine's verdict line, and the overload warning.
// Runs are a few thousand requests of Llama-2-7B on one A100 (I2.3's
// deployment, whose capacity under its SLO is about 10 req/s).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

function run(scenario, format = 'json') {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'headline-')), 's.json');
  fs.writeFileSync(file, JSON.stringify(scenario));
  const r = spawnSync(cliPath, ['run', file, '--central-only', '--format', format], { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, r.stderr);
  return format === 'json' ? JSON.parse(r.stdout).result : r.stdout;
}

function i23(rate, requests, slo) {
  const s = JSON.parse(fs.readFileSync(path.join(repoRoot, 'presets/scenarios/I2.3.json'), 'utf8'));
  delete s.serving.max_qps_search;
  delete s.serving.steady_state;  // one run of `requests`, judged as it is
  s.serving.workload.arrival.rate_qps = rate;
  s.serving.workload.num_requests = requests;
  if (slo) s.serving.slo = slo;
  return s;
}

test('below capacity: the verdict line meets the SLO, throughput over the steady window is the offered rate', () => {
  const r = run(i23(5, 6000));
  const h = r.headline;
  assert.equal(h.verdict, 'meets');
  assert.match(h.line, /^meets the SLO at 5 req\/s: \d+\.\d% of requests within TTFT 500 ms and TPOT 50 ms \(90\.0% required\)$/);
  assert.equal(h.overloaded, false);
  assert.equal(h.estimated_capacity_qps, null);
  // Steady window: Poisson noise only (6000 requests: a few %), not the drain.
  assert.ok(Math.abs(h.throughput_qps / 5 - 1) < 0.08, `throughput ${h.throughput_qps}`);
  assert.ok(h.goodput_qps <= h.throughput_qps && h.goodput_qps > 0.9 * h.throughput_qps);
  assert.ok(!r.warnings.some((w) => w.startsWith('overload')));
});

test('per-metric percentiles: the line reads each bound at its percentile, as measured', () => {
  // P99 needs more requests than a joint 90% share to see its misses: 12,000.
  const slo = { ttft_ms: 500, tpot_ms: 50, percentiles: { ttft: 'p99', tpot: 'p90' } };
  const r = run(i23(5, 12000, slo));
  const m = r.headline.line.match(/^meets the SLO at 5 req\/s: P99 TTFT ([\d.,]+) ms of 500, P90 TPOT ([\d.,]+) ms of 50$/);
  assert.ok(m, r.headline.line);
  // The window's percentiles lie within the bounds, and near the whole run's.
  const ttft = Number(m[1].replace(/,/g, ''));
  assert.ok(ttft <= 500 && ttft > 0);
  assert.ok(Math.abs(ttft / r.metrics.ttft_ms.p99 - 1) < 0.5, `${ttft} vs ${r.metrics.ttft_ms.p99}`);
});

test('overload: arrivals past the service rate warn, with the estimated capacity, and the verdict fails', () => {
  const r = run(i23(30, 3000));
  const h = r.headline;
  assert.equal(h.overloaded, true);
  assert.equal(h.verdict, 'fails');
  assert.match(h.line, /^fails the SLO at 30 req\/s/);
  // The run's own service rate: well below the offered rate, near the ~13 req/s it completes when saturated.
  assert.ok(h.estimated_capacity_qps > 5 && h.estimated_capacity_qps < 25, `capacity ${h.estimated_capacity_qps}`);
  const w = r.warnings.find((x) => x.startsWith('overload'));
  assert.ok(w && w.includes('req/s'), JSON.stringify(r.warnings));
  const table = run(i23(30, 3000), 'table');
  assert.match(table, /\nverdict   fails the SLO at 30 req\/s/);
  assert.match(table, /\nOVERLOAD  arrivals outrun the service rate; estimated capacity about [\d.]+ req\/s/);
});

test('an offline batch (all at once) has no steady window and no headline', () => {
  const s = i23(5, 200);
  s.serving.workload.arrival = { process: 'all_at_once' };
  const r = run(s);
  assert.equal(r.headline, undefined);
  // Its headline cards are the whole run's: it has no verdict to agree with.
  assert.ok(r.headline_metrics.includes('goodput_requests_per_s') && r.headline_metrics.includes('slo_attainment'));
  assert.ok(!r.headline_metrics.some((id) => id.startsWith('steady_')));
});

// Issue 39: the verdict line and the cards read the same numbers. I2.2 as
// shipped (10 req/s, just past this deployment's service rate) fails over its
// steady window while its whole run, which counts the quiet warm-up, reads
// within the SLO: the goodput and attainment cards must be the window's.
test('the headline cards read the verdict\'s steady window: I2.2 as shipped', () => {
  const r = run(JSON.parse(fs.readFileSync(path.join(repoRoot, 'presets/scenarios/I2.2.json'), 'utf8')));
  const h = r.headline;
  assert.equal(h.verdict, 'fails');
  const cards = r.headline_metrics;
  assert.ok(cards.includes('steady_goodput_requests_per_s') && cards.includes('steady_slo_attainment'), JSON.stringify(cards));
  assert.ok(!cards.includes('goodput_requests_per_s') && !cards.includes('slo_attainment'), JSON.stringify(cards));
  // The share the verdict line quotes is the attainment card's.
  const quoted = Number(h.line.match(/: ([\d.]+)% of requests within/)[1]);
  assert.equal(quoted, Number((h.slo_attainment * 100).toFixed(1)), h.line);
  // The two bases do differ here: the whole run's share meets 90%, the window's verdict does not.
  assert.ok(r.metrics.goodput.slo_attainment > h.slo_attainment, `${r.metrics.goodput.slo_attainment} vs ${h.slo_attainment}`);
  assert.notEqual(r.metrics.goodput.requests_per_s, h.goodput_qps);
  // The key-metric getters read the same figures (the CLI table and searches use them).
  const table = run(JSON.parse(fs.readFileSync(path.join(repoRoot, 'presets/scenarios/I2.2.json'), 'utf8')), 'table');
  assert.match(table, /goodput under the SLO \(whole run\)\s+[\d.]+ +req\/s/);
});

test('a run too short to judge keeps the whole run\'s cards', () => {
  const r = run(i23(5, 60));
  assert.equal(r.headline.verdict, 'undecided');
  assert.equal(r.headline.slo_attainment, null);
  assert.ok(r.headline_metrics.includes('goodput_requests_per_s') && !r.headline_metrics.includes('steady_goodput_requests_per_s'));
});

// Issue 39, "intervals on every headline card of every mode" (an interval, or
// the engine's reason why not), on I2.2, I2.3 and T3.4 as shipped, with the
// cards each has without one: tests/wasm/determinism.test.mjs
// (headline_intervals.mjs's checkCardIntervals), on the runs it makes of
// every preset anyway.

// Issue 40: the band's sentence is composed once, by the engine (the result's
// interval_band.note): the text table's interval heading prints it as it is.
test('the text table\'s 80% intervals say what the result\'s interval_band.note says', () => {
  const runPreset = (format) => spawnSync(cliPath, ['run', '--preset', 'I1.1', '--format', format], { cwd: repoRoot, encoding: 'utf8' });
  const json = runPreset('json');
  assert.equal(json.status, 0, json.stderr);
  const r = JSON.parse(json.stdout).result;
  assert.ok(r.interval_band.applied && r.interval_band.note.length > 0, JSON.stringify(r.interval_band));
  const table = runPreset('table');
  assert.equal(table.status, 0, table.stderr);
  assert.ok(table.stdout.includes(`\n80% intervals (the kernels' at the ${r.cost_tier} tier; speed figures ${r.interval_band.note})\n`), table.stdout);
});
