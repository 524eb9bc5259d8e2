// The page's engine, started by index.html's first script: the page fetches the
// wasm module (index.html preloads it) and compiles it as it downloads while its
// own modules (app.js and the thirty it imports) and the worker's are still
// loading, and hands the compiled module to the worker, which instantiates it.
// The catalogue and the preset lists are static files the build writes from that
// module (registries.json, presets.json), asked for at once, so the page builds its
// form while the engine loads; the default scenario's run is asked for as soon as
// its preset's record is here (firstRun below). web/budgets.mjs reports where the
// first result's time goes. app.js imports this module too: the same instance, one worker.
import { EngineClient } from './engine-client.js';
import { PRESET_KINDS } from '../shared/protocol.js';
import * as calibration from './calibration-store.js';

/** The scenario a visitor with no link and nothing stored sees first. */
export const DEFAULT_SCENARIO = 'I1.1';
/** localStorage key of the last scenario shown (a share link's text), reopened on the next visit. */
export const STORAGE_KEY = 'sightline.scenario';

export const workerUrl = new URL('../worker/worker.js', import.meta.url);
// The worker index.html's boot script started while the HTML was parsed (web/build.mjs
// writes that script, allowed by its hash in the page's CSP), and the wasm module it
// compiles: {worker, module (a promise, of null when it could not), url, startedMs,
// json: {file name: a promise of its parsed JSON or null} of the catalogue files},
// taken when it is this module's worker; otherwise (no boot script, or it could not
// start one) this module starts it.
const boot = self.sightlineBoot && self.sightlineBoot.worker && self.sightlineBoot.url === workerUrl.href ? self.sightlineBoot : null;
// When the worker was created, ms after navigation: the engine's start waits for it
// (web/budgets.mjs reports it in the first result's breakdown).
const startedMs = boot ? boot.startedMs : performance.now();
// The module, preloaded by index.html and compiled as its bytes arrive (off the
// page's thread), by the boot script or else here; the worker instantiates it. null (the worker then fetches its
// own) when it cannot be had here (an HTTP error, a host that does not serve
// .wasm as application/wasm).
const wasmModule = boot ? boot.module : WebAssembly.compileStreaming(fetch(new URL('../sightline.wasm', import.meta.url)))
  .catch(() => null);
// The catalogue files the boot script asked for (and parsed as they came), when it did.
const fetched = boot && boot.json && typeof boot.json === 'object' ? boot.json : {};
export const client = new EngineClient(workerUrl, { wasmModule, worker: boot && boot.worker, fetched });

/** The engine's catalogue (registries.json) and its preset lists by kind, asked for now. */
export const startup = {
  startedMs,      // when the worker was created, ms after navigation
  readyMs: null,  // when the engine said READY, ms after navigation
  registries: client.registries(),
  presets: Object.fromEntries(PRESET_KINDS.map((kind) => [kind, client.presets(kind)])),
};
client.addEventListener('ready', () => { if (startup.readyMs === null) startup.readyMs = performance.now(); });
// app.js awaits each one and reports a failure; until then a rejection is not unhandled.
for (const p of [startup.registries, ...Object.values(startup.presets)]) p.catch(() => {});

// The default scenario's run, asked for as soon as the scenario presets are here
// when nothing will open another scenario first (a link, ?preset=, an embed, a
// stored scenario): the engine runs it as soon as it is loaded, while app.js
// builds the form. It is the request app.js would make (the preset's record as
// the form reads it back, with the applied calibration); app.js takes it only
// when its own request is the same text, byte for byte (takeFirstRun), so what it
// shows is what its own run would have given.
let firstRun = null;  // {text, id, promise, progress, onProgress}

function opensDefault() {
  const params = new URLSearchParams(location.search);
  if (location.hash.length > 1 || params.has('preset') || params.get('embed') === '1') return false;
  try {
    return localStorage.getItem(STORAGE_KEY) === null;
  } catch (_) {
    return true;  // storage disabled: nothing stored
  }
}

if (opensDefault()) {
  const cal = calibration.applied();
  startup.presets.scenarios.then((scenarios) => {
    const preset = scenarios.find((s) => s.id === DEFAULT_SCENARIO);
    if (!preset) return;
    const run = { text: JSON.stringify([preset, cal]), progress: 0, onProgress: null };
    const { id, promise } = client.run(preset, (p) => {
      run.progress = p;
      if (run.onProgress) run.onProgress(p);
    }, { calibration: cal });
    promise.catch(() => {});  // observed by app.js once taken; a cancelled one by nobody
    firstRun = Object.assign(run, { id, promise });
  }, () => {});
}

/**
 * The run started ahead, as {id, promise} of client.run(), when `text` (the JSON
 * of [scenario, calibration] app.js is about to run) is its request; null
 * otherwise, and the run ahead is cancelled. Asked once: the first run of the
 * page takes it or lets it go. `onProgress` gets its progress from now on.
 */
export function takeFirstRun(text, onProgress) {
  const run = firstRun;
  firstRun = null;
  if (!run) return null;
  if (run.text !== text) {
    client.cancel(run.id);
    return null;
  }
  run.onProgress = onProgress;
  queueMicrotask(() => onProgress(run.progress));  // once the caller holds the run: where it has got to
  return { id: run.id, promise: run.promise };
}
