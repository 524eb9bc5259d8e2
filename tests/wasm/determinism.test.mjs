// The wasm module under Node returns byte-identical results to the native
// engine (the real CLI) for the same scenarios; and, on the same runs, every
// headline number of every shipped scenario carries a real interval, and
// every headline card an interval or the engine's reason
// (headline_intervals.mjs):
// latency, serving and training results and each compare variant; and the
// max-QPS answer of each preset that ships a search is within 5% of its
// recorded brute-force capacity (tests/cli/capacity_record.mjs). One pass
// serves every check, since each runs presets as shipped: I2.3 and I5.5, the
// two that ship a search, take about 18 s of CPU natively, and running them
// again in the CLI tests cost about 16 s more for no check of their own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadWasm, repoRoot, cliPath } from './wasm_module.mjs';
import { checkCardIntervals, checkResultIntervals } from './headline_intervals.mjs';
import { checkLiveCapacity } from '../cli/capacity_record.mjs';

const scenarios = ['I1.1', 'I1.2', 'I1.3', 'I1.4', 'I1.5'];
// The fast lane (.ci/test --fast) names a few presets, one per mode; the full
// lane compares every scenario preset.
const only = process.env.SIGHTLINE_DETERMINISM_PRESETS ? process.env.SIGHTLINE_DETERMINISM_PRESETS.split(',') : null;
// Issue 39's headline cards, on every preset as shipped: each card with a
// figure carries an interval or the engine's reason (a training preset's
// memory per GPU had neither where it was a key metric, until 2026-12-01).
// On three presets, one per case, these are the figures with a reason: none
// on I2.2; I2.3 is overloaded, so its goodput and attainment cards are the
// whole run's, 0 at every cost bound; T3.4's memory per GPU is not priced.
const CARDS_WITHOUT_INTERVAL = { 'I2.2': [], 'I2.3': ['goodput_requests_per_s', 'slo_attainment'], 'T3.4': ['memory_per_gpu_GiB'] };

function runNative(id) {
  return new Promise((resolve, reject) => {
    execFile(cliPath, ['run', '--preset', id, '--format', 'envelope'], { cwd: repoRoot, maxBuffer: 1 << 30 }, (err, stdout) =>
      err ? reject(err) : resolve(stdout.trimEnd()));
  });
}

test('wasm and native produce byte-identical result envelopes; every headline number has a real interval; shipped searches answer within 5% of brute force', async () => {
  const m = await loadWasm();
  const ids = JSON.parse(m.listPresets('scenarios')).result.map((s) => s.id);
  for (const id of scenarios) assert.ok(ids.includes(id), `preset ${id} exists`);
  const problems = [];
  const kinds = new Map();
  const metrics = JSON.parse(m.listRegistries()).result.metrics;
  const withoutInterval = {}, capacityChecked = [];
  let timed = 0;
  for (const id of only || ids) {
    assert.ok(ids.includes(id), `preset ${id} exists`);
    const scenario = JSON.parse(m.getPreset('scenarios', id)).result;
    // The native process runs on the other core while the module runs here.
    const native = runNative(id);
    const fromWasm = m.runScenario(JSON.stringify(scenario));
    const fromNative = await native;
    const envelope = JSON.parse(fromWasm);
    assert.equal(envelope.ok, true, `${id} runs in wasm`);
    assert.equal(fromWasm, fromNative, `${id}: wasm and native bytes differ`);
    kinds.set(envelope.result.kind, (kinds.get(envelope.result.kind) || 0) + 1);
    timed += checkResultIntervals(id, envelope.result, problems);
    const reasons = checkCardIntervals(id, envelope.result, metrics, problems);
    if (CARDS_WITHOUT_INTERVAL[id]) withoutInterval[id] = reasons;
    if (scenario.serving?.max_qps_search) {
      checkLiveCapacity(id, envelope.result.max_qps);
      capacityChecked.push(id);
    }
  }
  assert.deepEqual(problems, []);
  const expectedWithout = Object.fromEntries(Object.entries(CARDS_WITHOUT_INTERVAL).filter(([id]) => !only || only.includes(id)));
  assert.deepEqual(withoutInterval, expectedWithout, 'the headline cards without an interval');
  if (!only) {
    // The presets that ship a max-QPS search (capacity.test.mjs re-runs none of them).
    assert.ok(capacityChecked.includes('I2.3') && capacityChecked.includes('I5.5'), JSON.stringify(capacityChecked));
    assert.ok(ids.length >= 40, `only ${ids.length} scenarios`);
    for (const kind of ['serving_latency', 'serving_simulation', 'training']) assert.ok(kinds.get(kind) > 0, `no ${kind} result`);
    assert.ok(timed > 100, `only ${timed} metrics with intervals`);
  }
});

/**
 * I2.2 with `arrival` in place of its own, 60 requests and no growth or
 * search (and `edit`, when given, applied to it), run in wasm and by the CLI
 * from a file; returns the wasm envelope's result after checking the two are
 * byte for byte the same.
 */
async function i22WithArrival(arrival, edit = () => {}) {
  const m = await loadWasm();
  const scenario = JSON.parse(m.getPreset('scenarios', 'I2.2')).result;
  const w = scenario.serving.workload;
  delete w.duration_s;
  w.arrival = arrival;
  w.num_requests = 60;
  delete scenario.serving.max_qps_search;
  delete scenario.serving.steady_state;
  edit(scenario);
  return sameNativeAndWasm(m, scenario);
}

// `scenario` run by the CLI (from a file) and by the wasm module: the
// envelopes byte for byte the same; the result.
async function sameNativeAndWasm(m, scenario) {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'sightline-scenario-')), 'scenario.json');
  writeFileSync(file, JSON.stringify(scenario));
  const native = await new Promise((resolve, reject) => {
    execFile(cliPath, ['run', file, '--format', 'envelope'], { cwd: repoRoot, maxBuffer: 1 << 30 }, (err, stdout) =>
      err ? reject(err) : resolve(stdout.trimEnd()));
  });
  const fromWasm = m.runScenario(JSON.stringify(scenario));
  assert.equal(JSON.parse(fromWasm).ok, true, fromWasm.slice(0, 400));
  assert.equal(fromWasm, native, 'wasm and native bytes differ');
  return JSON.parse(fromWasm).result;
}

test('a closed loop of clients (arrival closed_loop, think time) is byte-identical in wasm and natively', async () => {
  const result = await i22WithArrival({ process: 'closed_loop', concurrency: 6, think_time_s: 0.05 });
  assert.equal(result.workload.concurrency, 6);
});

test('a rate under a client-side cap (arrival max_concurrency) is byte-identical in wasm and natively', async () => {
  const result = await i22WithArrival({ process: 'poisson', rate_qps: 50, max_concurrency: 4 });
  assert.equal(result.workload.max_concurrency, 4);
  assert.ok(result.workload.requests_waited_at_client > 0, 'the cap binds at 50 req/s');
});

test('a stack whose decode kernel applies (FlashAttention-3 on Hopper) is byte-identical in wasm and natively', async () => {
  // No shipped preset runs vllm-v1-like or sglang-overlap-like on Hopper: their
  // decode-attention grid (presets/decode_kernels) is checked here.
  const m = await loadWasm();
  const sglang = JSON.parse(m.getPreset('stacks', 'sglang-overlap-like')).result;
  const { decode_attention_kernel: kernel, ...without } = sglang;
  assert.equal(kernel, 'fa3-paged-hopper');
  const tpot = async (stack) => (await i22WithArrival({ process: 'poisson', rate_qps: 10 }, (s) => {
    s.hardware.gpu = 'h100-sxm';
    s.cost_model = { ...s.cost_model, software_stack: stack };
  })).metrics.tpot_ms.mean;
  // The same stack without its kernel decodes faster: the grid applies in both builds.
  assert.ok(await tpot('sglang-overlap-like') > await tpot({ ...without, id: 'sglang-without-fa3' }));
});

test('two-batch overlap (two micro-batches a step, serving.moe.two_batch_overlap) is byte-identical in wasm and natively', async () => {
  // No shipped preset runs it: the DeepSeek-R1 attention-DP + EP8 row's layout, shortened, with prompts
  // arriving while others decode (decode and prefill stage plans both priced).
  const m = await loadWasm();
  const row = JSON.parse(readFileSync(path.join(repoRoot, 'presets/validation/E.R3-dsr1-8xh200-maxthr.json'), 'utf8'));
  const scenario = row.scenario;
  scenario.serving.moe.two_batch_overlap = true;
  scenario.serving.workload = { arrival: { process: 'poisson', rate_qps: 40 }, num_requests: 200, prompt_tokens: 512, output_tokens: 32 };
  const result = await sameNativeAndWasm(m, scenario);
  const exposed = result.metrics.moe.two_batch_overlap.all_to_all_exposed_fraction;
  assert.ok(exposed >= 0 && exposed < 1, `exposed fraction ${exposed}`);
});

test('sliced runs (start/step/result) equal one-shot runs', async () => {
  const m = await loadWasm();
  const scenario = JSON.stringify(JSON.parse(m.getPreset('scenarios', 'I1.3')).result);
  const started = JSON.parse(m.start(scenario));
  assert.equal(started.ok, true);
  const handle = started.result.handle;
  let progress = [];
  for (;;) {
    const s = JSON.parse(m.step(handle, 100));
    assert.equal(s.ok, true);
    progress.push(s.result.progress);
    if (s.result.done) break;
  }
  assert.ok(progress.length > 5, 'a 2048-token decode takes several slices');
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i] >= progress[i - 1]);
  assert.equal(progress.at(-1), 1);
  const sliced = JSON.parse(m.result(handle));
  const oneShot = JSON.parse(m.runScenario(scenario));
  assert.deepEqual(sliced, oneShot);
});

test('cancel frees a run; a cancelled handle is unknown afterwards', async () => {
  const m = await loadWasm();
  const scenario = JSON.stringify(JSON.parse(m.getPreset('scenarios', 'I1.3')).result);
  const handle = JSON.parse(m.start(scenario)).result.handle;
  JSON.parse(m.step(handle, 10));
  assert.equal(JSON.parse(m.cancel(handle)).result.cancelled, true);
  assert.equal(JSON.parse(m.step(handle, 10)).error.code, 'unknown_handle');
});

test('bad input returns a located error envelope, never a thrown number', async () => {
  const m = await loadWasm();
  const bad = JSON.parse(m.getPreset('scenarios', 'I1.1')).result;
  bad.serving.workload.batch_size = 'many';
  const e = JSON.parse(m.runScenario(JSON.stringify(bad)));
  assert.equal(e.ok, false);
  assert.equal(e.error.code, 'type_error');
  assert.equal(e.error.path, '/serving/workload/batch_size');
  assert.equal(JSON.parse(m.runScenario('not json')).error.code, 'parse_error');
});

test('one instance runs thousands of scenarios in a row', async () => {
  const m = await loadWasm();
  const scenario = JSON.parse(m.getPreset('scenarios', 'I1.1')).result;
  scenario.serving.workload.output_tokens = 8;
  const text = JSON.stringify(scenario);
  const first = m.runScenario(text);
  for (let i = 0; i < 2000; i++) assert.equal(m.runScenario(text), first);
});
