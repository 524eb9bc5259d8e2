// The Search tab's runs replayed on a pool of workers, to judge its time left
// (web/src/client/search-words.js timeLeft) against the time the runs then took, on
// durations given rather than measured now: tests/web/search_time_left.test.mjs
// replays the canonical search's native CPU times, tests/web/search.test.mjs a
// page search's work (its runs' event counts, the same in any browser).
//
// `measured`: {candidates: [{units_low, units_high, probe_units, estimate_ms,
// run_ms, meets_slo}], intervals: [{low_ms, high_ms}] (the Pareto points' two
// bound runs), after_ms: [] (runs after those, optional)}. Each worker takes the
// next candidate in `order` when it is free; then the bound runs, then the runs
// after, likewise. At the moment the `fraction` of the candidates have
// finished: the time left the page would show (`estimator`, default timeLeft)
// and the time actually left.
//
// With `reuse` ({families, reusedFrom}, see centralRuns), the candidates run as
// search.js runCentral hands them out: each family's runs one after another,
// the others taking a run when the run they take finishes (and done then). The
// figure is the first shown (timeLeft gives none until enough runs finished)
// once the `fraction` of the candidates are done. `perFamily: false` replays the
// rounds the page took before (a family's next run named once every family's
// run of the round finished).
export function replay(words, { candidates, intervals, after_ms: afterMs = [] }, { workers, order, fraction, estimator = words.timeLeft, reuse = null, perFamily = true }) {
  const estimates = candidates.map((c) => ({ units: { low: c.units_low, high: c.units_high }, probe: { units: c.probe_units }, ms: c.estimate_ms }));
  const { pointLowMs } = words.estimateSearch(estimates, { workers, intervalPoints: 8 });
  const runMs = candidates.map((c) => c.run_ms);
  const { runs: central, free } = reuse
    ? centralRuns({ ...reuse, runMs }, { workers, order, perFamily })
    : centralRuns({ families: order.map((i) => [i]), reusedFrom: runMs.map(() => -1), runMs }, { workers, order: order.map((_, k) => k), perFamily: true });
  const runs = [];
  const dispatch = (items) => {
    for (const [i, ms] of items) {
      const w = free.indexOf(Math.min(...free));
      runs.push({ i, start: free[w], end: free[w] + ms });
      free[w] += ms;
    }
  };
  const barrier = () => free.fill(Math.max(...free));
  barrier();
  dispatch(intervals.flatMap((p) => [[p.candidate, p.low_ms], [p.candidate, p.high_ms]]));
  barrier();
  dispatch(afterMs.map((ms) => [-1, ms]));
  const total = Math.max(...free);
  const reusedFrom = reuse ? reuse.reusedFrom : [];
  const known = new Map(central.map((r) => [r.i, r.known]));
  const doneAt = candidates.map((_, i) => (reusedFrom[i] >= 0 ? known.get(reusedFrom[i]) : central.find((r) => r.i === i).end)).sort((a, b) => a - b);
  // The first figure shown once `fraction` of the candidates are done (a run taken counts as done).
  for (let k = Math.max(1, Math.ceil(fraction * candidates.length)); ; k += 1) {
    const t = doneAt[k - 1];
    const { done, options } = stateAt(central, t, { candidates, runMs, reusedFrom, known, workers, reuse });
    const estimateMs = estimator(pointLowMs, done, options);
    if (estimateMs !== null || k === candidates.length) return { estimateMs, actualMs: total - t, elapsedMs: t, totalMs: total, finished: done.filter(Boolean).length };
  }
}

/** What the page knows at time t of the central runs: the candidates done and timeLeft's options. */
function stateAt(central, t, { candidates, runMs, reusedFrom, known, workers, reuse }) {
  const done = candidates.map(() => null);
  const running = [];
  const named = new Set();
  const waitedNamed = new Set();
  for (const r of central) {
    if (r.named > t) continue;
    named.add(r.i);
    if (r.waited) waitedNamed.add(r.i);
    if (r.end <= t) done[r.i] = { ms: runMs[r.i], met: candidates[r.i].meets_slo, ...(r.waited ? { waited: true } : {}) };
    else if (r.start <= t) running.push({ index: r.i, elapsedMs: t - r.start });
  }
  reusedFrom.forEach((from, i) => {
    if (from >= 0 && known.get(from) <= t) done[i] = { ms: 0, reusedFrom: from, waited: true, met: candidates[from].meets_slo };
  });
  const options = { workers, running, intervalPoints: 8 };
  if (reuse) {
    options.waiting = candidates.flatMap((_, i) => (done[i] || named.has(i) ? [] : [i]));
    options.waitedNamed = [...waitedNamed].filter((i) => !done[i]).length;
  }
  return { done, options };
}

/**
 * A search's central runs on `workers`, the runs of each family one after another: `families` are
 * plan indices, each family's by batch limit from the largest; `reusedFrom[i]` is whose run
 * candidate i took (-1: it ran); `runMs[i]` how long its run takes. Each family's first run is
 * handed out in `order` (indices into `families`); a family's next run is named when its previous
 * one finishes and, `perFamily` (search.js runCentral), handed to the next free worker then, or
 * else (the rounds before it) only once every run of its round has finished. Returns the runs
 * ({i, named, start, end, known: when the engine learns of it, waited: not a family's first}), the
 * workers' free times at the end,
 * the worker time idle before the last run ends, and the waits: how many times a worker that
 * finished a run found nothing to take while some run was still to be named.
 */
export function centralRuns({ families, reusedFrom, runMs }, { workers, order, perFamily }) {
  const chains = order.map((f) => families[f].filter((i) => reusedFrom[i] < 0));
  const free = new Array(workers).fill(0);
  const runs = [];
  let waits = 0;
  let queue = chains.filter((c) => c.length).map((c) => ({ i: c[0], named: 0, chain: c, step: 0 }));
  let later = [];  // the rounds' next round
  const start = (item, at) => {
    const w = free.indexOf(Math.min(...free));
    const begin = Math.max(at, free[w], item.named);
    const run = { i: item.i, named: item.named, start: begin, end: begin + runMs[item.i], waited: item.step > 0 };
    run.known = run.end;  // when the engine is told of it (in rounds: once its round ends, below)
    runs.push(run);
    free[w] = run.end;
    const next = item.chain[item.step + 1];
    if (next !== undefined) (perFamily ? queue : later).push({ i: next, named: run.end, chain: item.chain, step: item.step + 1 });
    if (perFamily) queue.sort((a, b) => a.named - b.named);  // handed out in the order named
  };
  let roundStart = 0;
  while (queue.length) {
    const roundFirst = runs.length;
    while (queue.length) {
      const soonest = Math.min(...free);
      // A worker free before the next run is named waits on another's run (in rounds: at the round's end, below).
      if (perFamily && queue[0].named > soonest) waits += 1;
      start(queue.shift(), roundStart);
    }
    const end = Math.max(...free);
    if (!perFamily) for (const r of runs.slice(roundFirst)) r.known = end;
    if (later.length) {
      waits += free.filter((f) => f < end).length;
      roundStart = end;
      queue = later.map((item) => ({ ...item, named: end }));  // the engine is asked once the round ends
      later = [];
    }
  }
  const end = Math.max(0, ...runs.map((r) => r.end));
  const idle = workers * end - runs.reduce((a, r) => a + runMs[r.i], 0);
  return { runs, free, idle, waits, end };
}
