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
});
