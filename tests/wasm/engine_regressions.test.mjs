// Issue 26's examples that only the API shows, in the real wasm module the
// page's worker runs (build-wasm/wasm, or SIGHTLINE_WASM_DIR): the engine's own
// resolved scenario fed back to validateScenario for every scenario preset,
// and the page's 600k-request scenario started as the worker starts it. The
// CLI's examples are in tests/cli/engine_regressions.test.mjs and
// input_bounds.test.mjs; why searchRank's read past its candidates has no test
// here: tests/README.md.
//
// Against a wasm build of ac43451 (before the fix):
//   SIGHTLINE_WASM_DIR=<ac43451 build-wasm>/wasm node --test tests/wasm/engine_regressions.test.mjs
// What each did there is written beside it ("ac43451: ...").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadWasm, repoRoot } from './wasm_module.mjs';

const m = await loadWasm();
const call = (text) => JSON.parse(text);
const file = (p) => JSON.parse(readFileSync(path.join(repoRoot, p), 'utf8'));

test('the resolved scenario of every scenario preset validates again (round trip)', () => {
  // ac43451: 34 of 56 presets' resolved scenarios were refused.
  const ids = call(m.listPresets('scenarios')).result.map((x) => (typeof x === 'string' ? x : x.id));
  assert.ok(ids.length >= 50, `${ids.length} presets`);
  const failures = [];
  for (const id of ids) {
    const first = call(m.validateScenario(JSON.stringify(call(m.getPreset('scenarios', id)).result)));
    assert.equal(first.ok, true, `${id}: ${JSON.stringify(first.error)}`);
    const second = call(m.validateScenario(JSON.stringify(first.result)));
    if (!second.ok) failures.push(`${id}: ${second.error.code} at ${second.error.path}: ${second.error.message}`);
  }
  assert.deepEqual(failures, [], `${failures.length} of ${ids.length} round trips fail`);
});

test("the page's 600k-request scenario is refused at start with the memory estimate (the worker died on it)", () => {
  // 600,000 requests with the trace and request records at their maxima, as
  // the page's sliced start() receives it. ac43451 accepted it and the page's
  // worker aborted after 52-89 s.
  const s = file('presets/scenarios/I2.1.json');
  s.serving.workload.num_requests = 600000;
  s.serving.workload.arrival = { process: 'all_at_once' };
  delete s.serving.steady_state;  // judges arrivals at a rate
  s.serving.limits = { max_requests: 600000 };
  s.serving.outputs = { trace: true, trace_max_steps: 10000000, max_request_records: 1000000 };
  const started = call(m.start(JSON.stringify(s)));
  if (started.ok) {
    // What the worker then does: step until the run ends. Report how it ends.
    const t0 = Date.now();
    let how = 'finished';
    try {
      for (;;) {
        const st = call(m.step(started.result.handle, 100000));
        if (!st.ok) { how = `error ${st.error.code}`; break; }
        if (st.result.done) break;
      }
    } catch (err) {
      how = `the module died: ${String(err).slice(0, 200)}`;
    }
    assert.fail(`start() accepted it; stepped as the page does, after ${((Date.now() - t0) / 1000).toFixed(0)} s: ${how}`);
  }
  assert.equal(started.error.code, 'limit_exceeded');
  assert.equal(started.error.path, '/serving/outputs/trace_max_steps');
  assert.match(started.error.message, /GiB/);
});

test('issue 35: a config with a structural key the importer does not understand is refused, named (wasm)', () => {
  // Before: read as Llama-3.1-70B with num_widget_experts listed among the ignored keys.
  const config = file('tests/data/hf/published/meta-llama--Meta-Llama-3.1-70B.json');
  const r = call(m.inspectModel(JSON.stringify({ ...config, num_widget_experts: 64 })));
  assert.equal(r.ok, false);
  assert.equal(r.error.code, 'not_implemented');
  assert.equal(r.error.path, '/hf_config/num_widget_experts');
  assert.match(r.error.message, /num_widget_experts/);
  // GLM-5 (glm_moe_dsa) was a 27 B dense Llama; now refused for its sparse attention.
  const glm = call(m.inspectModel(JSON.stringify(file('tests/data/hf/refused/zai-org--GLM-5-FP8.json'))));
  assert.equal(glm.ok, false);
  assert.match(glm.error.message, /DeepSeek sparse attention/);
});
