// What every engine worker says to the page (worker.js, the page's engine, and
// calibrate-worker.js, the Calibrate tab's): loading the wasm module and
// announcing READY, results, located errors, and crashing for real after a
// throw out of wasm so the page's EngineClient restarts a fresh worker. The
// messages are shared/protocol.js's.
import { MSG, message } from '../shared/protocol.js';

export function post(id, type, payload) {
  self.postMessage(message(id, type, payload));
}

export function postError(id, error) {
  post(id, MSG.ERROR, {
    code: String((error && error.code) || 'engine_error'),
    path: String((error && error.path) || ''),
    message: String((error && error.message) || error || 'unknown engine error'),
  });
}

// A throw out of the wasm module (trap, abort, bad_alloc that escaped) leaves
// the instance unusable: report it for the request, then crash the worker for
// real so the page's onerror restarts a fresh one.
export function crash(id, err) {
  postError(id, { code: 'engine_crashed', path: '', message: `the engine crashed: ${err && err.message ? err.message : err}` });
  setTimeout(() => { throw err instanceof Error ? err : new Error(String(err)); });
}

/** `extra`: more of the RESULT's payload beside the result and its warnings (a candidate's limitFacts). */
export function envelopeToMessage(id, envelope, extra = {}) {
  if (envelope.ok) post(id, MSG.RESULT, { result: envelope.result, warnings: envelope.warnings || [], ...extra });
  else postError(id, envelope.error);
}

/**
 * Instantiates a wasm module (`create`, an Emscripten glue's factory) whose
 * .wasm sits one folder above the worker script at `workerUrl` (or is `compiled`,
 * that file already compiled: a WebAssembly.Module), then posts
 * READY {version, features: features(engine), loadMs: ms from the worker's start}; a failure is reported once.
 */
export function loadEngine(create, workerUrl, features = () => ({}), compiled = null) {
  // Emscripten looks for the .wasm beside the worker's script unless told where it is.
  const locateFile = (file) => new URL(`../${file}`, workerUrl).href;
  // Emscripten's hook for a module compiled elsewhere: instantiate it with the glue's
  // imports. The glue does not hear of the hook's failure: it is raced against it.
  let instantiateFailed = null;
  const failed = new Promise((_, reject) => { instantiateFailed = reject; });
  const instantiateWasm = (imports, receive) => {
    WebAssembly.instantiate(compiled, imports).then((instance) => receive(instance, compiled), instantiateFailed);
    return {};
  };
  const created = compiled ? Promise.race([create({ locateFile, instantiateWasm }), failed]) : create({ locateFile });
  return created.then((engine) => {
    let version = null;
    try {
      const env = JSON.parse(engine.version());
      version = env.ok ? env.result : null;
    } catch (_) { /* reported as null */ }
    post(null, MSG.READY, { version, features: features(engine), loadMs: performance.now() });
    return engine;
  }, (err) => {
    postError(null, { code: 'engine_load_failed', message: `could not load the WebAssembly engine: ${err && err.message ? err.message : err}` });
    throw err;
  });
}

/** Answers request `id` with the envelope (JSON text) that `call(engine)` returns. */
export async function simple(enginePromise, id, call) {
  let engine;
  try {
    engine = await enginePromise;
  } catch (_) {
    return;  // engine_load_failed was already reported
  }
  try {
    envelopeToMessage(id, JSON.parse(call(engine)));
  } catch (err) {
    crash(id, err);
  }
}
