// The page's side of the worker protocol: request ids, promises, progress
// callbacks, cancel, and restarting a crashed worker. The main thread never
// runs the engine itself. The messages are shared/protocol.js's.
import { MSG, message, WORKER_OPTIONS, MODULE_FROM_PAGE, PRESET_KINDS, CATALOGUE_FILES } from '../shared/protocol.js';

export class EngineError extends Error {
  constructor(code, path, message) {
    super(message);
    this.name = 'EngineError';
    this.code = code || 'engine_error';
    this.path = path || '';
  }
}

export class EngineClient extends EventTarget {
  /**
   * @param {string|URL} workerUrl  URL of the classic worker script
   * @param {{maxRestarts?: number, wasmModule?: Promise<WebAssembly.Module|null>}} [options]
   *   maxRestarts: consecutive crashes (without a READY in between) after which the
   *   client gives up instead of restarting; wasmModule: the engine's module fetched
   *   and compiled by the page, handed to the first worker this client starts (null:
   *   that worker fetches its own, as a restarted one does); worker: that first worker,
   *   already started from workerUrl (index.html's boot script starts it while the HTML
   *   is parsed), named MODULE_FROM_PAGE when wasmModule is given; fetched: {file name: a
   *   promise of its parsed JSON, or of null} of the CATALOGUE_FILES already asked for
   *   (by the boot script), read instead of fetching them again
   */
  constructor(workerUrl, { maxRestarts = 3, wasmModule = null, worker = null, fetched = {} } = {}) {
    super();
    this.workerUrl = workerUrl;
    this._wasmModule = wasmModule;
    this._startedWorker = worker;
    this._fetched = fetched;
    // registries.json and presets.json sit beside the wasm module, at the site's root: one
    // folder up from the worker script (worker/worker.js imports ../sightline.mjs).
    // A worker made from a blob: or data: URL has no folder: its client asks the engine.
    try {
      this._siteBase = new URL('../', new URL(String(workerUrl), typeof location !== 'undefined' ? location.href : 'http://localhost/'));
    } catch {
      this._siteBase = null;
    }
    this._registries = null;
    this._presetsFile = null;  // presets.json's {kind: [records]}, or null where it cannot be read
    this.maxRestarts = maxRestarts;
    this.restarts = 0;          // total restarts, for diagnostics and tests
    this.version = null;
    this.features = {};         // what this engine build offers (READY's features)
    this.failed = null;         // EngineError once the engine cannot be used
    this._crashStreak = 0;
    this._nextId = 1;
    this._pending = new Map();  // id -> {resolve, reject, onProgress, type}
    this._spawn();
  }

  /** Resolves with the engine version object once the worker is ready. */
  get ready() {
    return this._ready;
  }

  _spawn() {
    this._ready = new Promise((resolve, reject) => {
      this._resolveReady = resolve;
      this._rejectReady = reject;
    });
    this._ready.catch(() => {});  // observed through callers
    const compiled = this._wasmModule;
    const started = this._startedWorker;
    this._wasmModule = null;  // handed over once: a restarted worker fetches its own
    this._startedWorker = null;
    const worker = started || new Worker(this.workerUrl, compiled ? { ...WORKER_OPTIONS, name: MODULE_FROM_PAGE } : WORKER_OPTIONS);
    if (compiled || started) {  // a started worker waits for its module: null when there is none
      Promise.resolve(compiled).then((m) => (m instanceof WebAssembly.Module ? m : null), () => null)
        .then((m) => worker.postMessage(message(null, MSG.MODULE, { module: m })));
    }
    worker.onmessage = (event) => this._onMessage(event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      const where = event.filename ? ` at ${event.filename.split('/').pop()}:${event.lineno}` : '';
      this._crash(`${event.message || 'uncaught error'}${where}`);
    };
    worker.onmessageerror = () => this._crash('a message could not be deserialized');
    this.worker = worker;
  }

  _crash(reason) {
    this.worker.terminate();
    const error = new EngineError(
      'worker_crashed', '',
      `The engine worker crashed (${reason}). It has been restarted; the request was abandoned, run it again.`);
    this._rejectAll(error);
    this._crashStreak += 1;
    if (this._crashStreak > this.maxRestarts) {
      this.failed = new EngineError('engine_unavailable', '',
        `The engine worker crashed ${this._crashStreak} times in a row; reload the page to try again.`);
      this._rejectReady(this.failed);
      this.dispatchEvent(new CustomEvent('failed', { detail: this.failed }));
      return;
    }
    this.restarts += 1;
    this._spawn();
    this.dispatchEvent(new CustomEvent('restart', { detail: error }));
  }

  _rejectAll(error) {
    const pending = [...this._pending.values()];
    this._pending.clear();
    for (const p of pending) p.reject(error);
  }

  _onMessage(msg) {
    if (!msg || typeof msg !== 'object') return;
    const { id, type, payload = {} } = msg;
    if (id === null || id === undefined) {
      if (type === MSG.READY) {
        this._crashStreak = 0;
        this.version = payload.version;
        this.features = payload.features || {};
        this.loadMs = Number.isFinite(payload.loadMs) ? payload.loadMs : null;  // the worker's start to its engine's
        this._resolveReady(payload.version);
        this.dispatchEvent(new CustomEvent('ready', { detail: payload.version }));
      } else if (type === MSG.ERROR) {
        // The worker could not load the engine at all.
        this.failed = new EngineError(payload.code, payload.path, payload.message);
        this._rejectReady(this.failed);
        this._rejectAll(this.failed);
        this.dispatchEvent(new CustomEvent('failed', { detail: this.failed }));
      }
      return;
    }
    const pending = this._pending.get(id);
    if (!pending) return;  // cancelled or superseded: ignore late messages
    if (type === MSG.PROGRESS) {
      if (pending.onProgress) pending.onProgress(Number(payload.progress) || 0);
    } else if (type === MSG.RESULT) {
      this._pending.delete(id);
      pending.resolve(payload);
    } else if (type === MSG.ERROR) {
      this._pending.delete(id);
      pending.reject(new EngineError(payload.code, payload.path, payload.message));
    }
  }

  _request(type, payload, onProgress) {
    const id = this._nextId++;
    const promise = new Promise((resolve, reject) => {
      if (this.failed) {
        reject(this.failed);
        return;
      }
      this._pending.set(id, { resolve, reject, onProgress, type });
      this.worker.postMessage(message(id, type, payload));
    });
    return { id, promise };
  }

  /**
   * Starts a sliced run. Returns {id, promise}; the promise resolves with
   * {result, warnings} (and, for a search `candidate`, limitFacts) or rejects with an EngineError
   * (code 'cancelled' when cancelled). `calibration`: a cluster calibration the run is priced with
   * (as `run --calibration`); `candidate`: a deployment search's candidate (protocol.js RUN).
   */
  run(scenario, onProgress, { centralOnly = false, bound = null, candidate = false, calibration = null } = {}) {
    const payload = candidate ? { scenario, candidate } : bound ? { scenario, bound } : { scenario, centralOnly };
    if (calibration) payload.calibration = calibration;
    return this._request(MSG.RUN, payload, onProgress);
  }

  /** Cancels the run with request id `id`; its promise rejects at once. */
  cancel(id) {
    const pending = this._pending.get(id);
    if (!pending) return false;
    this._pending.delete(id);
    this.worker.postMessage(message(this._nextId++, MSG.CANCEL, { id }));
    pending.reject(new EngineError('cancelled', '', 'run cancelled'));
    return true;
  }

  /**
   * Preset records of one kind (PRESET_KINDS), a fresh copy each time. The build
   * writes them next to the wasm module (presets.json, from that module), so the
   * page has them without waiting for its engine to load; where the file cannot be
   * read, the worker's engine answers instead.
   */
  presets(kind) {
    const fromEngine = () => this._request(MSG.PRESETS, { kind }).promise.then((r) => r.result);
    if (!this._presetsFile) {
      this._presetsFile = this._siteFile(CATALOGUE_FILES.presets, (all) => PRESET_KINDS.every((k) => Array.isArray(all[k])));
    }
    return this._presetsFile.then((all) => (all ? structuredClone(all[kind]) : fromEngine()));
  }

  /**
   * The JSON file `name` beside the wasm module, parsed, when `valid` says it is
   * whole; null when it cannot be had (no folder to read it from, an HTTP error,
   * not JSON, not whole).
   */
  _siteFile(name, valid) {
    const fetched = this._fetched[name];
    delete this._fetched[name];  // taken once
    if (!fetched && !this._siteBase) return Promise.resolve(null);
    return (fetched || fetch(new URL(name, this._siteBase)).then((r) => (r.ok ? r.json() : null)))
      .then((json) => (json && typeof json === 'object' && valid(json) ? json : null))
      .catch(() => null);
  }

  /**
   * The engine's registries (dtypes, cost tiers, serving policies, metrics,
   * parameter schema), as `sightline registries` prints them. The build writes
   * them next to the wasm module (registries.json, from that module, with the
   * form's words, which ship there only); where the file cannot be read (a host
   * that serves only some files), the worker's engine answers instead, without
   * the words.
   */
  registries() {
    if (!this._registries) {
      const fromEngine = () => this._request(MSG.REGISTRIES, {}).promise.then((r) => r.result);
      this._registries = this._siteFile(CATALOGUE_FILES.registries, (reg) => Array.isArray(reg.metrics))
        .then((reg) => reg || fromEngine());
    }
    return this._registries;
  }

  /** Resolves with the resolved scenario, or rejects with the located error. */
  validate(scenario) {
    return this._request(MSG.VALIDATE, { scenario }).promise.then((r) => r.result);
  }

  /** A run's work estimate (api::estimate_work) and the ms the worker took to make it (its probe's speed). */
  estimateWork(scenario, { centralOnly = false } = {}) {
    return this._request(MSG.ESTIMATE, { scenario, centralOnly }).promise.then((r) => r.result);
  }

  /** What the engine understood of a model (api::inspect_model). */
  inspect(model) {
    return this._request(MSG.INSPECT, { model }).promise.then((r) => r.result);
  }

  /** The runs of one benchmark result file, or its located refusal (api::import_bench_file). */
  importBench(name, text) {
    return this._request(MSG.IMPORT_BENCH, { name, text }).promise.then((r) => r.result);
  }

  /**
   * Fits a cluster calibration (api::fit_calibration): request {base, base_name,
   * files: [{name, text}], id}; onProgress gets 0..1. Returns {id, promise}.
   */
  fit(request, onProgress) {
    const { id, promise } = this._request(MSG.FIT, { request }, onProgress);
    return { id, promise: promise.then((r) => r.result) };
  }

  /** The deployment search's candidates for a question (api::search_plan). */
  searchPlan(question) {
    return this._request(MSG.SEARCH_PLAN, { question }).promise.then((r) => r.result);
  }

  /**
   * Which candidates take a sibling's run proven the same, and the next round's runs, from the runs so far
   * (api::search_reuse): `runs[i]` is null while candidate i has not run, else its run's limitFacts.
   */
  searchReuse(question, runs, calibration = null) {
    return this._request(MSG.SEARCH_REUSE, { question, runs, calibration }).promise.then((r) => r.result);
  }

  /** The runs at the cost bounds the ranking's intervals need, from the central results (api::search_intervals). */
  searchIntervals(question, results) {
    return this._request(MSG.SEARCH_INTERVALS, { question, results }).promise.then((r) => r.result);
  }

  /**
   * The ranked answer from the candidates' central results, in plan order, and the
   * bound runs' results in searchIntervals' order (api::search_rank: it runs nothing).
   */
  searchRank(question, results, boundResults) {
    return this._request(MSG.SEARCH_RANK, { question, results, boundResults }).promise.then((r) => r.result);
  }

  terminate() {
    this.worker.terminate();
    this._rejectAll(new EngineError('terminated', '', 'the engine client was shut down'));
  }
}
