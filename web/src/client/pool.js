// A small pool of engine workers for sweeps: each worker runs one scenario at a
// time; runs are handed out as workers become free. The page's main worker is
// not part of the pool, so a sweep never delays the main result.
import { EngineClient } from './engine-client.js';

export function defaultPoolSize() {
  const cores = Number(navigator.hardwareConcurrency) || 2;
  return Math.max(2, Math.min(4, cores - 1));
}

export class EnginePool {
  constructor(workerUrl, size = defaultPoolSize()) {
    this.clients = Array.from({ length: size }, () => new EngineClient(workerUrl));
  }

  get size() {
    return this.clients.length;
  }

  get ready() {
    return Promise.all(this.clients.map((c) => c.ready));
  }

  /**
   * Calls task(client, item) for every item, one call at a time per worker, as workers become
   * free; resolves with the answers in input order (rejects with the first error).
   */
  each(items, task) {
    const out = new Array(items.length);
    let next = 0;
    const drain = async (client) => {
      while (next < items.length) {
        const i = next++;
        out[i] = await task(client, items[i]);
      }
    };
    return Promise.all(this.clients.map(drain)).then(() => out);
  }

  /**
   * Runs every scenario. onPoint(index, {result, warnings, limitFacts?, ms} | {error, ms}) is called
   * as each finishes; onProgress(fraction) as runs advance. Returns
   * {promise, cancel()}: the promise resolves with the outcomes in input order
   * once all finished, or rejects with code 'cancelled'. centralOnly runs each
   * scenario at the central cost bound alone; bounds[i] ("low" | "high"), where
   * given, runs scenario i once at that cost bound instead; `candidate` runs each as a deployment search's
   * candidate (its outcome has the run's limitFacts); a run past budgetMs
   * is stopped and its outcome is a limit_exceeded error. `order` (a permutation of the indices)
   * is the order the scenarios are handed out in (default: as given). The returned running() lists
   * [{index, elapsedMs}] of the scenarios on a worker now.
   */
  map(scenarios, { bounds = null, order = null, ...options } = {}) {
    const job = this.stream(options);
    for (let k = 0; k < scenarios.length; k += 1) {
      const i = order ? order[k] : k;
      job.add(i, scenarios[i], bounds ? bounds[i] : null);
    }
    job.close();
    return job;
  }

  /**
   * A job whose runs are named while it runs (the search's reuse: a family's next run is known
   * once its previous one finished): add(index, scenario, bound?) queues a run, handed to the next
   * free worker in the order added; close() says none will follow. The promise resolves with the
   * outcomes by index once it is closed and every run added finished. The options and the rest of
   * the job are map's; onProgress's fraction is of the runs added so far.
   */
  stream({ onPoint = () => {}, onProgress = () => {}, centralOnly = false, candidate = false, budgetMs = 0, calibration = null } = {}) {
    const queue = [];  // [index, scenario, bound] not yet handed out
    const progress = new Map();  // index -> fraction done
    const outcomes = [];
    const inflight = new Map();  // client -> request id
    const started = new Map();  // scenario index -> performance.now() when handed out
    const idle = new Set(this.clients);
    let added = 0;
    let finished = 0;
    let closed = false;
    let cancelled = false;
    let settle;
    const promise = new Promise((resolve, reject) => { settle = { resolve, reject }; });
    const report = () => onProgress(added ? [...progress.values()].reduce((a, b) => a + b, 0) / added : 1);
    const resolveIfDone = () => { if (closed && finished === added) settle.resolve(outcomes); };

    const pump = (client) => {
      if (cancelled) return;
      if (!queue.length) {
        idle.add(client);
        resolveIfDone();
        return;
      }
      idle.delete(client);
      const [i, scenario, bound] = queue.shift();
      const t0 = performance.now();
      started.set(i, t0);
      const { id, promise: run } = client.run(scenario, (p) => {
        progress.set(i, p);
        report();
      }, { centralOnly, bound, candidate, calibration });
      inflight.set(client, id);
      const timer = budgetMs > 0 ? setTimeout(() => client.cancel(id), budgetMs) : 0;
      const overBudget = { code: 'limit_exceeded', path: '', message: `the run took longer than the page's ${budgetMs / 1000} s per point` };
      run.then((value) => (value.limitFacts ? { result: value.result, warnings: value.warnings, limitFacts: value.limitFacts }
        : { result: value.result, warnings: value.warnings }),
        (error) => ({ error: error.code === 'cancelled' && !cancelled ? overBudget : error }))
        .then((outcome) => {
          clearTimeout(timer);
          if (cancelled) return;
          inflight.delete(client);
          started.delete(i);
          outcome.ms = performance.now() - t0;  // how long this point took on its worker
          outcomes[i] = outcome;
          progress.set(i, 1);
          finished += 1;
          onPoint(i, outcome);
          report();
          pump(client);
        });
    };
    const add = (index, scenario, bound = null) => {
      if (cancelled || closed) return;
      queue.push([index, scenario, bound]);
      progress.set(index, 0);
      added += 1;
      const [free] = idle;
      if (free) pump(free);
    };
    const close = () => {
      closed = true;
      resolveIfDone();
    };
    const cancel = () => {
      if (cancelled || (closed && finished === added)) return false;
      cancelled = true;
      for (const [client, id] of inflight) client.cancel(id);
      inflight.clear();
      const err = new Error('sweep cancelled');
      err.code = 'cancelled';
      err.outcomes = outcomes;
      settle.reject(err);
      return true;
    };
    const running = () => [...started].map(([index, t0]) => ({ index, elapsedMs: performance.now() - t0 }));
    return { promise, cancel, running, add, close };
  }

  terminate() {
    for (const c of this.clients) c.terminate();
  }
}
