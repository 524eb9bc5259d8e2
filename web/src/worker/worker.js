/* Sightline engine worker: a module worker, in its own folder (the page's code is
 * web/src, the code both sides share is web/src/shared). The engine runs here and
 * only here; the page talks to it with the messages of shared/protocol.js.
 * sightline.mjs is the Emscripten build's glue served as an ES module (web/build.mjs
 * wraps it); it and sightline.wasm sit at the site's root, one folder up.
 */
import createSightline from '../sightline.mjs';
import { MSG, MODULE_FROM_PAGE } from '../shared/protocol.js';
import { post, postError, crash, envelopeToMessage, loadEngine, simple as replySimple } from './replies.js';

const SLICE_TARGET_MS = 12;   // aim for slices this long, so a CANCEL waits at most ~1 slice
const MAX_UNITS = 1 << 16;

const runs = new Set();       // request ids of runs received and not finished
const cancelled = new Set();  // subset of `runs` asked to stop

// Yield to the event loop between slices so CANCEL (and other requests) are
// handled. MessageChannel avoids setTimeout's 4 ms clamp.
const yieldQueue = [];
const yieldChannel = new MessageChannel();
yieldChannel.port1.onmessage = () => { const resolve = yieldQueue.shift(); if (resolve) resolve(); };
function yieldToEventLoop() {
  return new Promise((resolve) => { yieldQueue.push(resolve); yieldChannel.port2.postMessage(null); });
}

// Started by a page that fetches and compiles the wasm module itself (MODULE_FROM_PAGE),
// the worker waits for that module (MODULE) instead of fetching its own.
let receiveModule = null;
const fromPage = self.name === MODULE_FROM_PAGE
  ? new Promise((resolve) => { receiveModule = resolve; }) : Promise.resolve(null);
const enginePromise = fromPage.then((module) => loadEngine(createSightline, import.meta.url, (engine) => ({
  search: ['searchPlan', 'searchReuse', 'searchIntervals', 'searchRank', 'startAtBound', 'startSearchCandidate', 'limitFacts']
    .every((f) => typeof engine[f] === 'function'),
}), module));
const simple = (id, call) => replySimple(enginePromise, id, call);

function scenarioText(scenario) {
  return typeof scenario === 'string' ? scenario : JSON.stringify(scenario);
}

/** Starts run `text` as RUN asked (see shared/protocol.js); the engine's envelope. */
function startRun(engine, text, { centralOnly, bound, candidate }) {
  if (candidate) return engine.startSearchCandidate(text);
  if (bound) return engine.startAtBound(text, String(bound));
  return centralOnly ? engine.startCentralOnly(text) : engine.start(text);
}

async function run(id, scenario, how, calibration) {
  runs.add(id);
  let engine;
  try {
    engine = await enginePromise;
  } catch (_) {
    runs.delete(id);
    return;  // engine_load_failed was already reported
  }
  let handle = null;
  try {
    if (cancelled.delete(id)) {
      postError(id, { code: 'cancelled', message: 'run cancelled' });
      return;
    }
    let text = scenarioText(scenario);
    if (calibration) {  // the engine's own way in (api::apply_calibration), as `run --calibration`
      const applied = JSON.parse(engine.applyCalibration(text, JSON.stringify(calibration)));
      if (!applied.ok) {
        postError(id, applied.error);
        return;
      }
      text = JSON.stringify(applied.result);
    }
    const started = JSON.parse(startRun(engine, text, how));
    if (!started.ok) {
      postError(id, started.error);
      return;
    }
    handle = started.result.handle;
    let units = 1;
    for (;;) {
      if (cancelled.delete(id)) {
        engine.cancel(handle);
        postError(id, { code: 'cancelled', message: 'run cancelled' });
        return;
      }
      const t0 = performance.now();
      const stepped = JSON.parse(engine.step(handle, units));
      const dt = performance.now() - t0;
      if (!stepped.ok) {
        engine.cancel(handle);
        postError(id, stepped.error);
        return;
      }
      const { done, progress } = stepped.result;
      post(id, MSG.PROGRESS, { progress: Math.min(1, Math.max(0, Number(progress) || 0)) });
      if (done) break;
      if (dt < SLICE_TARGET_MS / 2 && units < MAX_UNITS) units *= 2;
      else if (dt > SLICE_TARGET_MS * 2 && units > 1) units = Math.max(1, units >> 1);
      await yieldToEventLoop();
    }
    // A candidate's limit facts are read before result(), which frees the handle.
    const facts = how.candidate ? JSON.parse(engine.limitFacts(handle)) : null;
    envelopeToMessage(id, JSON.parse(engine.result(handle)), facts ? { limitFacts: facts.ok ? facts.result : { opaque: true } } : {});
  } catch (err) {
    crash(id, err);
  } finally {
    runs.delete(id);
    cancelled.delete(id);
  }
}

self.onmessage = (event) => {
  const msg = event.data || {};
  const { id, type } = msg;
  const payload = msg.payload || {};
  switch (type) {
    case MSG.MODULE:
      if (receiveModule) receiveModule(payload.module instanceof WebAssembly.Module ? payload.module : null);
      receiveModule = null;
      break;
    case MSG.RUN:
      run(id, payload.scenario, { centralOnly: Boolean(payload.centralOnly), bound: payload.bound, candidate: Boolean(payload.candidate) },
        payload.calibration || null);
      break;
    case MSG.CANCEL:
      // A RUN always arrives before its CANCEL; ids of finished runs are ignored.
      if (runs.has(payload.id)) cancelled.add(payload.id);
      break;
    case MSG.PRESETS:
      simple(id, (engine) => engine.listPresets(String(payload.kind)));
      break;
    case MSG.REGISTRIES:
      simple(id, (engine) => engine.listRegistries());
      break;
    case MSG.VALIDATE:
      simple(id, (engine) => engine.validateScenario(scenarioText(payload.scenario)));
      break;
    case MSG.ESTIMATE:
      // Timed here, around the engine's call alone: its probe's units per millisecond on this machine.
      simple(id, (engine) => {
        const t = performance.now();
        const env = JSON.parse(engine.estimateWork(scenarioText(payload.scenario), Boolean(payload.centralOnly)));
        if (env.ok) env.result.ms = performance.now() - t;
        return JSON.stringify(env);
      });
      break;
    case MSG.INSPECT:
      simple(id, (engine) => engine.inspectModel(scenarioText(payload.model)));
      break;
    case MSG.SEARCH_PLAN:
      simple(id, (engine) => engine.searchPlan(JSON.stringify(payload.question)));
      break;
    case MSG.SEARCH_REUSE:
      simple(id, (engine) => engine.searchReuse(JSON.stringify(payload.question), JSON.stringify(payload.runs),
        JSON.stringify(payload.calibration === undefined ? null : payload.calibration)));
      break;
    case MSG.SEARCH_INTERVALS:
      simple(id, (engine) => engine.searchIntervals(JSON.stringify(payload.question), JSON.stringify(payload.results)));
      break;
    case MSG.SEARCH_RANK:
      simple(id, (engine) => engine.searchRank(JSON.stringify(payload.question), JSON.stringify(payload.results),
        JSON.stringify(payload.boundResults)));
      break;
    case MSG.TEST_HOOK_ABORT:
      simple(id, (engine) => engine.testHookAbort());
      break;
    default:
      postError(id, { code: 'bad_request', message: `unknown message type '${type}'` });
  }
};
