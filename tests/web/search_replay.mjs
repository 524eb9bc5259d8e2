// The Search tab's runs replayed on a pool of workers, to judge its time left
// (web/src/search-words.js timeLeft) against the time the runs then took, on
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
export function replay(words, { candidates, intervals, after_ms: afterMs = [] }, { workers, order, fraction, estimator = words.timeLeft }) {
  const estimates = candidates.map((c) => ({ units: { low: c.units_low, high: c.units_high }, probe: { units: c.probe_units }, ms: c.estimate_ms }));
  const { pointLowMs } = words.estimateSearch(estimates, { workers, intervalPoints: 8 });
  const free = new Array(workers).fill(0);
  const runs = [];
  const dispatch = (items) => {
    for (const [i, ms] of items) {
      const w = free.indexOf(Math.min(...free));
      runs.push({ i, start: free[w], end: free[w] + ms });
      free[w] += ms;
    }
  };
  const barrier = () => free.fill(Math.max(...free));
  dispatch(order.map((i) => [i, candidates[i].run_ms]));
  const central = runs.slice();
  barrier();
  dispatch(intervals.flatMap((p) => [[p.candidate, p.low_ms], [p.candidate, p.high_ms]]));
  barrier();
  dispatch(afterMs.map((ms) => [-1, ms]));
  const total = Math.max(...free);
  const k = Math.max(1, Math.ceil(fraction * candidates.length));
  const t = central.map((r) => r.end).sort((a, b) => a - b)[k - 1];
  const done = candidates.map(() => null);
  const running = [];
  for (const r of central) {
    if (r.end <= t) done[r.i] = { ms: candidates[r.i].run_ms, met: candidates[r.i].meets_slo };
    else if (r.start <= t) running.push({ index: r.i, elapsedMs: t - r.start });
  }
  return { estimateMs: estimator(pointLowMs, done, { workers, running, intervalPoints: 8 }), actualMs: total - t, finished: done.filter(Boolean).length };
}
