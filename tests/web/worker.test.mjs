// The worker protocol, spoken directly to web/src/worker/worker.js and through
// web/src/client/engine-client.js inside the real page: {id, type, payload} messages,
// sliced runs with PROGRESS, CANCEL mid-run, PRESETS, VALIDATE, and restarting a
// crashed worker. Needs `bash .ci/build` first.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { checkBuilt, startServer, launchBrowser, newPage, cli, scenarioPreset, fixed3 } from './harness.mjs';

let server;
let browser;
let page;

before(async () => {
  checkBuilt();
  server = await startServer();
  browser = await launchBrowser();
  page = await newPage(browser);
  await page.goto(server.url);
  await page.waitForSelector('#run-status[data-state="done"]');
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.close();
});

// Speaks the raw protocol to a fresh worker and returns every message it posted.
// `steps`: {send: {id, type, payload}} posts a message; {wait: {id, types}} waits
// for a message with that id (null for READY) and one of those types.
async function converse(steps) {
  return page.evaluate(async (plan) => {
    const worker = new Worker('worker/worker.js', { type: 'module' });
    const log = [];
    let waiter = null;
    const matches = (m, w) => m.id === w.id && w.types.includes(m.type);
    worker.onmessage = (e) => {
      log.push(e.data);
      if (waiter && matches(e.data, waiter.want)) { const w = waiter; waiter = null; w.resolve(); }
    };
    for (const step of plan) {
      if (step.send) worker.postMessage(step.send);
      else if (!log.some((m) => matches(m, step.wait))) await new Promise((resolve) => { waiter = { want: step.wait, resolve }; });
    }
    worker.terminate();
    return log;
  }, steps);
}

const send = (id, type, payload) => ({ send: { id, type, payload } });
const wait = (id, ...types) => ({ wait: { id, types } });
const END = ['RESULT', 'ERROR'];

test('READY, then RUN streams PROGRESS in [0,1] and ends with RESULT equal to the CLI', async () => {
  const scenario = scenarioPreset('I1.3');
  const log = await converse([wait(null, 'READY'), send(7, 'RUN', { scenario }), wait(7, ...END)]);
  assert.equal(log[0].type, 'READY');
  assert.equal(log[0].id, null);
  assert.equal(log[0].payload.version.engine_version, cli('I1.3').engine_version);
  const progress = log.filter((m) => m.type === 'PROGRESS');
  assert.ok(progress.length >= 2, `several PROGRESS messages (${progress.length})`);
  assert.ok(progress.every((m) => m.id === 7 && m.payload.progress >= 0 && m.payload.progress <= 1));
  for (let i = 1; i < progress.length; i++) assert.ok(progress[i].payload.progress >= progress[i - 1].payload.progress);
  const last = log[log.length - 1];
  assert.equal(last.type, 'RESULT', JSON.stringify(last).slice(0, 300));
  const expected = cli('I1.3');
  assert.equal(fixed3(last.payload.result.metrics.tpot_ms), fixed3(expected.metrics.tpot_ms));
  assert.ok(Array.isArray(last.payload.warnings));
});

test('CANCEL stops a run between slices: ERROR cancelled, never RESULT', async () => {
  const scenario = scenarioPreset('I1.3');  // 2048 decode steps, many slices
  const log = await converse([
    wait(null, 'READY'),
    send(1, 'RUN', { scenario }),
    wait(1, 'PROGRESS'),
    send(2, 'CANCEL', { id: 1 }),
    wait(1, ...END),
    send(3, 'PRESETS', { kind: 'gpus' }),
    wait(3, ...END),
  ]);
  const end = log.find((m) => m.id === 1 && (m.type === 'RESULT' || m.type === 'ERROR'));
  assert.equal(end.type, 'ERROR');
  assert.equal(end.payload.code, 'cancelled');
  const progress = log.filter((m) => m.id === 1 && m.type === 'PROGRESS');
  assert.ok(progress[progress.length - 1].payload.progress < 1, 'stopped before the end');
  const presets = log.find((m) => m.id === 3);
  assert.equal(presets.type, 'RESULT', 'the worker keeps serving after a cancel');
});

test('PRESETS lists records; VALIDATE returns located errors; bad scenarios end in ERROR', async () => {
  const bad = scenarioPreset('I1.1');
  bad.serving.workload.batch_size = 100000;
  const log = await converse([
    send(1, 'PRESETS', { kind: 'scenarios' }),
    send(2, 'VALIDATE', { scenario: bad }),
    send(3, 'RUN', { scenario: bad }),
    send(4, 'RUN', { scenario: '{not json' }),
    send(5, 'PRESETS', { kind: 'nope' }),
    send(6, 'FROBNICATE', {}),
    ...[1, 2, 3, 4, 5, 6].map((id) => wait(id, ...END)),
  ]);
  const byId = (id) => log.find((m) => m.id === id && (m.type === 'RESULT' || m.type === 'ERROR'));
  assert.equal(byId(1).type, 'RESULT');
  assert.ok(byId(1).payload.result.some((s) => s.id === 'I1.1' && s.title));
  for (const id of [2, 3]) {
    assert.equal(byId(id).type, 'ERROR');
    assert.equal(byId(id).payload.path, '/serving/workload/batch_size');
    assert.equal(byId(id).payload.code, 'out_of_range');
  }
  assert.equal(byId(4).type, 'ERROR');
  assert.ok(byId(4).payload.message.length > 0);
  assert.equal(byId(5).type, 'ERROR');
  assert.equal(byId(6).type, 'ERROR');
  assert.equal(byId(6).payload.code, 'bad_request');
});

test('EngineClient: a crashed worker rejects the pending run clearly and is restarted', async () => {
  const r = await page.evaluate(async () => {
    const { EngineClient } = await import('./client/engine-client.js');
    // A stand-in worker that speaks READY and dies on RUN.
    const src = `postMessage({ id: null, type: 'READY', payload: { version: { engine_version: 'stub' } } });
      onmessage = (e) => { if (e.data.type === 'RUN') throw new Error('boom'); };`;
    const url = URL.createObjectURL(new Blob([src], { type: 'text/javascript' }));
    const client = new EngineClient(url);
    const events = [];
    client.addEventListener('restart', () => events.push('restart'));
    await client.ready;
    const outcome = await client.run({}).promise.then(() => ({ ok: true }), (e) => ({ code: e.code, message: e.message }));
    const readyAgain = await client.ready;
    client.terminate();
    return { outcome, restarts: client.restarts, events, readyAgain };
  });
  assert.equal(r.outcome.code, 'worker_crashed');
  assert.match(r.outcome.message, /crashed.*boom.*restarted/s);
  assert.equal(r.restarts, 1);
  assert.deepEqual(r.events, ['restart']);
  assert.equal(r.readyAgain.engine_version, 'stub');
});

test('EngineClient: the real worker killed by a real wasm abort rejects the pending run clearly, restarts, and runs again', async () => {
  // Not a stand-in: the page's worker.js with the real module, aborted by
  // std::abort inside the wasm (its TEST_HOOK_ABORT test hook) while a sliced
  // run is in flight.
  const scenario = scenarioPreset('I1.3');  // 2048 decode steps: still running when the abort lands
  const small = scenarioPreset('I1.1');
  const r = await page.evaluate(async ({ sc, sm }) => {
    const { EngineClient } = await import('./client/engine-client.js');
    const client = new EngineClient(new URL('worker/worker.js', location.href));
    const events = [];
    client.addEventListener('restart', () => events.push('restart'));
    await client.ready;
    let progressed;
    const seen = new Promise((resolve) => { progressed = resolve; });
    const run = client.run(sc, () => progressed());
    const runOutcome = run.promise.then(() => ({ ok: true }), (e) => ({ code: e.code, message: e.message }));
    await seen;  // the run is in flight
    const hook = await client._request('TEST_HOOK_ABORT', {}).promise.then(() => ({ ok: true }), (e) => ({ code: e.code, message: e.message }));
    const pending = await runOutcome;
    const version = await client.ready;  // the restarted worker's READY
    const again = await client.run(sm).promise.then((x) => x.result.metrics.tpot_ms, (e) => `rejected: ${e.code} ${e.message}`);
    client.terminate();
    return { hook, pending, version, again, restarts: client.restarts, events };
  }, { sc: scenario, sm: small });
  console.log('real wasm abort:', JSON.stringify({ hook: r.hook, pending: r.pending, restarts: r.restarts }));
  assert.ok(['engine_crashed', 'worker_crashed'].includes(r.hook.code), JSON.stringify(r.hook));
  assert.match(r.hook.message, /Aborted|abort/i, 'the abort is named');
  assert.ok(['engine_crashed', 'worker_crashed'].includes(r.pending.code), JSON.stringify(r.pending));
  assert.match(r.pending.message, /crashed/, 'the pending run is rejected with a clear message');
  assert.equal(r.restarts, 1);
  assert.deepEqual(r.events, ['restart']);
  assert.equal(r.version.engine_version, cli('I1.1').engine_version);
  assert.equal(fixed3(r.again), fixed3(cli('I1.1').metrics.tpot_ms), 'the restarted worker runs again');
});

test('EngineClient: progress callbacks, cancel rejects at once, late messages are ignored', async () => {
  const scenario = scenarioPreset('I1.3');
  const r = await page.evaluate(async (sc) => {
    const { EngineClient } = await import('./client/engine-client.js');
    const client = new EngineClient(new URL('worker/worker.js', location.href));
    await client.ready;
    const seen = [];
    const done = await client.run(sc, (p) => seen.push(p)).promise;
    const run = client.run(sc, () => {});
    client.cancel(run.id);
    const cancelled = await run.promise.then(() => 'resolved', (e) => e.code);
    const gpus = await client.presets('gpus');
    client.terminate();
    return { progressCount: seen.length, lastProgress: seen[seen.length - 1], tpot: done.result.metrics.tpot_ms, cancelled, gpus: gpus.length };
  }, scenario);
  assert.ok(r.progressCount >= 2);
  assert.equal(r.lastProgress, 1);
  assert.equal(fixed3(r.tpot), fixed3(cli('I1.3').metrics.tpot_ms));
  assert.equal(r.cancelled, 'cancelled');
  assert.ok(r.gpus >= 5);
});
