// The Search tab's words and small numbers, apart from the DOM (Node tests import
// this module): a deployment's name as people say it ("2 × NVIDIA H200, TP4
// each"), the time estimate of a search before it runs, the best deployment so
// far while it runs, and the Pareto chart's clipped axis.
import { display } from './format.js';

/**
 * "2 × NVIDIA H200, TP4 each" (a colocated deployment) or "1 prefill + 3 decode × NVIDIA H100 SXM,
 * TP8 each" (disaggregated pools); PP is named only when above 1.
 */
export function deploymentName(row, gpuName) {
  const split = `TP${row.tp}${row.pp > 1 ? ` × PP${row.pp}` : ''} each`;
  if (Number.isInteger(row.prefill_replicas) && Number.isInteger(row.decode_replicas)) {
    return `${row.prefill_replicas} prefill + ${row.decode_replicas} decode × ${gpuName}, ${split}`;
  }
  return `${row.replicas} × ${gpuName}, ${split}`;
}

/** The settings beside a deployment's name: "batch limit 256, chunked prefill". */
export function deploymentSettingsText(row) {
  const parts = [`batch limit ${row.max_num_seqs}`, row.chunked_prefill ? 'chunked prefill' : 'continuous batching'];
  if (Number.isInteger(row.chunk_size)) parts.push(`chunks of ${row.chunk_size} tokens`);
  if (Number.isInteger(row.max_num_batched_tokens)) parts.push(`${row.max_num_batched_tokens} tokens a step`);
  if (row.weights) parts.push(`${row.weights} weights`);
  if (row.kv_cache) parts.push(`${row.kv_cache} KV cache`);
  return parts.join(', ');
}

/** A duration in the unit a person would use: "40 s", "2.5 min", "1.2 h". */
export function formatDuration(ms) {
  const s = ms / 1000;
  if (s < 1) return '< 1 s';
  if (s < 90) return `${display(Math.round(s))} s`;
  if (s < 5400) return `${display(s / 60)} min`;
  return `${display(s / 3600)} h`;
}

/**
 * How long the candidates will take on `workers` workers, from the measured cost of a run on this
 * machine: `fixedMs` a run (set-up, whatever its size) plus `msPerRequest` each simulated request.
 * Each target-rate candidate runs its first run's requests, and while its verdict is undecided one
 * or more longer runs up to its steady-state cap (the high end counts one run at the cap); a budget
 * candidate runs a capacity search of several rates, so only its lower end is known.
 * Returns {lowMs, highMs (null: unbounded ahead of time), requestsLow, requestsHigh}.
 */
export function estimateSearch(scenarios, { fixedMs, msPerRequest }, workers) {
  let low = 0;
  let high = 0;
  let runsLow = 0;
  let runsHigh = 0;
  let bounded = true;
  for (const s of scenarios) {
    const sv = (s && s.serving) || {};
    const first = (sv.workload && sv.workload.num_requests) || 1000;
    if (sv.max_qps_search) {
      low += sv.max_qps_search.num_requests || first;
      runsLow += 1;
      bounded = false;
    } else {
      const cap = (sv.steady_state && sv.steady_state.max_requests) || first;
      low += first;
      high += cap > first ? first + cap : first;
      runsLow += 1;
      runsHigh += cap > first ? 2 : 1;
    }
  }
  const w = Math.max(1, workers);
  // The pool hands out whole candidates: the last one can leave the other workers idle.
  return {
    lowMs: (runsLow * fixedMs + low * msPerRequest) / w,
    highMs: bounded ? (runsHigh * fixedMs + high * msPerRequest) / w : null,
    requestsLow: low,
    requestsHigh: bounded ? high : null,
  };
}

/**
 * The best candidate among those finished: at a target rate every candidate carries the same
 * tokens, so the cheapest per hour meeting the SLO is the cheapest per token (the engine's order,
 * fewer GPUs first on ties); within a GPU budget, the lowest $/h per req/s at each one's highest
 * rate within the SLO. `usdPerHour(i)` prices candidate i. Returns {index, usdPerHour, qps} or null.
 */
export function bestSoFar(outcomes, usdPerHour, gpusOf) {
  let best = null;
  outcomes.forEach((o, i) => {
    const r = o && o.result;
    if (!r) return;
    let qps = null;
    if (r.max_qps && Number.isFinite(r.max_qps.qps)) {
      if (!(r.max_qps.qps > 0)) return;
      qps = r.max_qps.qps;
    } else if (!(r.steady_state && r.steady_state.meets_slo)) return;
    const cost = usdPerHour(i);
    const key = qps ? cost / qps : cost;
    if (!best || key < best.key - 1e-12 || (Math.abs(key - best.key) <= 1e-12 && gpusOf(i) < gpusOf(best.index))) {
      best = { index: i, usdPerHour: cost, qps, key };
    }
  });
  return best;
}

/**
 * A readable end of a chart axis: a point far beyond the deployments that matter (a miss at 80 s
 * beside answers under 1 s) no longer sets it. The axis ends at 1.5x the furthest point that meets
 * the SLO, or at 1.5x the SLO bound when that is further (`limit`); points past it are drawn at the
 * edge. Returns {max, clipped: count of points past it} or {max: null} when nothing needs clipping.
 */
export function clipAxis(keep, all, limit = 0) {
  const finite = (xs) => xs.filter((x) => Number.isFinite(x));
  const k = finite(keep);
  const a = finite(all);
  if (!a.length) return { max: null, clipped: 0 };
  const reach = Math.max(k.length ? Math.max(...k) : 0, Number.isFinite(limit) ? limit : 0);
  if (!(reach > 0)) return { max: null, clipped: 0 };
  const max = reach * 1.5;
  const clipped = a.filter((x) => x > max).length;
  return clipped ? { max, clipped } : { max: null, clipped: 0 };
}
