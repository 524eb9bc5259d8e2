// The deployment search's page API in the real wasm module: searchPlan gives
// runnable candidate scenarios (the same bytes as native would rank), and bad
// questions get located errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadWasm, repoRoot } from './wasm_module.mjs';

test('searchPlan returns candidate scenarios with serving.steady_state; searchIntervals, startAtBound and searchRank check their input', async () => {
  const m = await loadWasm();
  const question = JSON.parse(readFileSync(path.join(repoRoot, 'examples', 'search-llama3-70b.json'), 'utf8'));
  const plan = JSON.parse(m.searchPlan(JSON.stringify(question)));
  assert.equal(plan.ok, true, JSON.stringify(plan.error));
  assert.ok(plan.result.candidates.length > 0);
  assert.equal(plan.result.space.layouts, 72);
  // The question's latencies as the engine names them, before any run (its attainment 0.9 judges P90):
  // the page heads its table and chart with these and spells no id of its own.
  assert.deepEqual(plan.result.question_latencies,
    { ttft: { id: 'ttft_p90_ms', words: 'P90 TTFT' }, tpot: { id: 'tpot_p90_ms', words: 'P90 TPOT' } });
  const first = plan.result.candidates[0];
  assert.ok(first.scenario.serving.steady_state);
  assert.equal(first.scenario.serving.workload.arrival.rate_qps, 20);
  // Its work estimate (the page's time estimate): a probe's units per request times its fewest and most
  // requests (a first run decided, or grown three times to the steady-state cap), never past the work budget.
  const est = JSON.parse(m.estimateWork(JSON.stringify(first.scenario), true));
  assert.equal(est.ok, true, JSON.stringify(est.error));
  const w = est.result;
  assert.ok(w.probe.units > 0 && w.probe.requests > 0 && w.units_per_request > 0, JSON.stringify(w));
  assert.equal(w.requests.low, first.scenario.serving.workload.num_requests);
  assert.equal(w.requests.high, w.requests.low + 3 * first.scenario.serving.steady_state.max_requests);
  assert.ok(w.units.low > 0 && w.units.low <= w.units.high && w.units.high <= 4e7, JSON.stringify(w.units));  // the default budget (RunLimits)
  assert.equal(JSON.parse(m.estimateWork('{"model": 3}', true)).ok, false);
  const v = JSON.parse(m.validateScenario(JSON.stringify(first.scenario)));
  assert.equal(v.ok, true, JSON.stringify(v.error));
  const wrong = JSON.parse(m.searchRank(JSON.stringify(question), '[]', '[]'));
  assert.equal(wrong.ok, false);
  assert.equal(wrong.error.path, '/results');
  // The interval runs are ordinary sliced runs at a cost bound (the page's pool runs them).
  const noPoints = JSON.parse(m.searchIntervals(JSON.stringify(question),
    JSON.stringify(plan.result.candidates.map(() => ({ error: 'not run' })))));
  assert.equal(noPoints.ok, true, JSON.stringify(noPoints.error));
  assert.deepEqual(noPoints.result.points, []);
  const badBound = JSON.parse(m.startAtBound(JSON.stringify(first.scenario), 'middle'));
  assert.equal(badBound.ok, false);
  assert.equal(badBound.error.path, '/bound');
  question.tp = [4, 'eight'];
  const bad = JSON.parse(m.searchPlan(JSON.stringify(question)));
  assert.equal(bad.ok, false);
  assert.equal(bad.error.path, '/tp/1');
});
