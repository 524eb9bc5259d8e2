// The one definition of the messages between the page and its engine worker
// (imported by both web/src/worker/worker.js and web/src/client/engine-client.js, so neither
// spells a message type of its own). Every message is {id, type, payload}:
//
//   page -> worker   RUN {scenario, centralOnly?, bound?, candidate?, calibration?}   sliced run: PROGRESS* then RESULT | ERROR
//                                     (calibration: a cluster calibration the engine puts into the
//                                     scenario's cost model first, api::apply_calibration)
//                                     (centralOnly: the central cost bound alone, no intervals;
//                                     bound "low" | "high": one run at that cost bound, no intervals;
//                                     candidate: a deployment search's candidate, run as the CLI runs
//                                     one (Engine::start_search_candidate); its RESULT adds limitFacts)
//                    CANCEL {id}       cancel the run whose request id is `id`
//                    PRESETS {kind}    RESULT {result: [preset records]} (kind: one of PRESET_KINDS)
//                    VALIDATE {scenario}  RESULT {result: resolved scenario}
//                    ESTIMATE {scenario, centralOnly?}  RESULT {result: the run's work estimate
//                                     (api::estimate_work) and ms: how long this worker took to make it}
//                    INSPECT {model}   RESULT {result: what the engine understood of a model}
//                    REGISTRIES {}     RESULT {result: the engine's policy registries}
//                    SEARCH_PLAN {question}   RESULT {result: the deployment search's candidates}
//                    SEARCH_REUSE {question, runs, calibration}   RESULT {result: which candidates take a
//                                     sibling's run, and the next round's runs (api::search_reuse)}
//                    SEARCH_INTERVALS {question, results}   RESULT {result: the runs at the cost
//                                     bounds that the ranking's intervals need (api::search_intervals)}
//                    SEARCH_RANK {question, results, boundResults}   RESULT {result: the ranked answer}
//                    MODULE {module}   the engine's wasm module (a WebAssembly.Module) fetched and
//                                     compiled by the page as it downloads (compileStreaming),
//                                     or null when the page could not; sent first, and only
//                                     to a worker started with the name MODULE_FROM_PAGE, which waits
//                                     for it instead of fetching its own
//                    TEST_HOOK_ABORT {}   test hook: aborts the wasm module for real (the
//                                     worker then dies and the page restarts it); only the
//                                     worker test sends it
//   page -> calibration worker (worker/calibrate-worker.js, the Calibrate tab's module)
//                    IMPORT_BENCH {name, text}   RESULT {result: the runs of a benchmark result
//                                     file (api::import_bench_file)}
//                    FIT {request}     PROGRESS* then RESULT {result: the calibration (api::fit_calibration;
//                                     request {base, base_name, files: [{name, text}], id})}
//   worker -> page   READY {version, features, loadMs}   once the wasm module is instantiated (id null);
//                                     features.search: the module has the deployment search;
//                                     loadMs: ms from the worker's start to then
//                    PROGRESS {progress}   0..1
//                    RESULT {result, warnings, limitFacts?}   (limitFacts: a candidate run's,
//                                     Engine::limit_facts; {opaque: true} when the run failed)
//                    ERROR {code, path, message}

export const MSG = Object.freeze({
  RUN: 'RUN',
  CANCEL: 'CANCEL',
  PRESETS: 'PRESETS',
  VALIDATE: 'VALIDATE',
  ESTIMATE: 'ESTIMATE',
  INSPECT: 'INSPECT',
  REGISTRIES: 'REGISTRIES',
  IMPORT_BENCH: 'IMPORT_BENCH',
  FIT: 'FIT',
  SEARCH_PLAN: 'SEARCH_PLAN',
  SEARCH_REUSE: 'SEARCH_REUSE',
  SEARCH_INTERVALS: 'SEARCH_INTERVALS',
  SEARCH_RANK: 'SEARCH_RANK',
  MODULE: 'MODULE',
  TEST_HOOK_ABORT: 'TEST_HOOK_ABORT',
  READY: 'READY',
  PROGRESS: 'PROGRESS',
  RESULT: 'RESULT',
  ERROR: 'ERROR',
});

/** The kinds of preset records PRESETS lists (and web/build.mjs writes to presets.json). */
export const PRESET_KINDS = Object.freeze(['scenarios', 'models', 'gpus', 'interconnects', 'kv_tiers', 'validation']);

/**
 * The files web/build.mjs writes beside the wasm module with what REGISTRIES and
 * PRESETS answer (every kind's list), so the page reads them without waiting for
 * its engine (engine-client.js; index.html's boot script asks for both).
 */
export const CATALOGUE_FILES = Object.freeze({ registries: 'registries.json', presets: 'presets.json' });

/** A message of the protocol. */
export function message(id, type, payload) {
  return { id, type, payload };
}

/** The worker's script, started as a module worker (it imports this module). */
export const WORKER_OPTIONS = Object.freeze({ type: 'module' });

/**
 * The name (Worker options' `name`) of an engine worker whose wasm module the
 * page fetches, compiles and posts to it (MODULE): the page asks for it as it
 * parses its HTML (a preload) and compiles it as it downloads (off the page's
 * thread), so neither waits for the page's scripts and the worker's own to load;
 * the worker only instantiates it.
 */
export const MODULE_FROM_PAGE = 'sightline-engine:module-from-page';
