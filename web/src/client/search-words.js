// The Search tab's words and small numbers, apart from the DOM (Node tests import
// this module): a deployment's name as people say it ("2 × NVIDIA H200, TP4
// each"), the time estimate of a search before it runs and the time left while it runs, the best deployment so
// far while it runs, and the Pareto chart's clipped axis.
import { display } from './format.js';

/**
 * "2 × NVIDIA H200, TP4 each" (a colocated deployment) or "1 prefill + 3 decode × NVIDIA H100 SXM,
 * TP8 each" (disaggregated pools); with mixed pools (the row's decode_gpu / decode_tp differ) each pool
 * is named: "1 prefill × NVIDIA H100 SXM, TP8 + 1 decode × NVIDIA A100, TP4"; wide expert parallelism
 * adds its groups: "4 × NVIDIA H100 SXM, TP1 each, attention data-parallel groups of 4, EP4".
 * PP is named only when above 1. `decodeGpuName`: the decode pool's GPU (default: `gpuName`).
 */
export function deploymentName(row, gpuName, decodeGpuName = gpuName) {
  const pp = row.pp > 1 ? ` × PP${row.pp}` : '';
  const split = `TP${row.tp}${pp} each`;
  if (Number.isInteger(row.prefill_replicas) && Number.isInteger(row.decode_replicas)) {
    const decodeTp = Number.isInteger(row.decode_tp) ? row.decode_tp : row.tp;
    if (decodeGpuName !== gpuName || decodeTp !== row.tp) {
      return `${row.prefill_replicas} prefill × ${gpuName}, TP${row.tp}${pp} + ${row.decode_replicas} decode × ${decodeGpuName}, TP${decodeTp}${pp}`;
    }
    return `${row.prefill_replicas} prefill + ${row.decode_replicas} decode × ${gpuName}, ${split}`;
  }
  const wide = row.attention_data_parallel > 1 ? `, attention data-parallel groups of ${row.attention_data_parallel}, EP${row.expert_parallel}` : '';
  return `${row.replicas} × ${gpuName}, ${split}${wide}`;
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
 * How long a search will take, from the engine's work estimate of each candidate (api::estimate_work:
 * units of work from its fewest to its most requests) at the speed its own probe ran at on this
 * machine (probe units over the ms the worker took), as a range:
 *   candidates: on `workers` workers, whole candidates at a time; at the low end every verdict is
 *     decided by its first run, at the high end every undecided run grows to its cap (never past
 *     `budgetMs`, where the page stops a point);
 *   ranking: the Pareto deployments run again at the low and high cost bounds, as runs of their own
 *     on the workers: one deployment's two runs side by side at the low end, `intervalPoints` of the
 *     longest (two runs each) at the high end.
 * `estimates[i]` is {units: {low, high}, probe: {units}, ms}. Returns {lowMs, highMs, pointLowMs[],
 * candidates: {lowMs, highMs}, ranking: {lowMs, highMs}}.
 */
export function estimateSearch(estimates, { workers, budgetMs = Infinity, intervalPoints = 8 }) {
  const w = Math.max(1, workers);
  const low = [];
  const high = [];
  for (const e of estimates) {
    const msPerUnit = e.ms / Math.max(1, e.probe && e.probe.units);
    low.push(Math.min(budgetMs, e.units.low * msPerUnit));
    high.push(Math.min(budgetMs, e.units.high * msPerUnit));
  }
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  const n = estimates.length;
  const candidates = n ? {
    lowMs: Math.max(sum(low) / w, Math.max(...low)),
    highMs: sum(high) / w + Math.max(...high) * (1 - 1 / w),
  } : { lowMs: 0, highMs: 0 };
  const longest = [...high].sort((x, y) => y - x).slice(0, Math.min(intervalPoints, n));
  const ranking = n ? {
    lowMs: (2 * Math.min(...low)) / Math.min(w, 2),
    highMs: (2 * sum(longest)) / w + Math.max(...longest) * (1 - 1 / w),
  } : { lowMs: 0, highMs: 0 };
  return {
    lowMs: candidates.lowMs + ranking.lowMs, highMs: candidates.highMs + ranking.highMs, pointLowMs: low, candidates, ranking,
  };
}

/**
 * The order the page hands the candidates to its workers: a stride through the plan (about n/phi,
 * coprime with n), so that the first ones to finish sample every part of it (each GPU type, tp,
 * batch limit and replica count) rather than its first GPU's smallest deployments. The plan lists a
 * layout's fewest replicas first, and those fail fast where the larger ones meet the SLO and grow
 * their runs: finished in plan order, they made the first time left several times too short.
 * The answer does not depend on the order (each outcome keeps its candidate's index).
 */
export function spreadOrder(n) {
  if (n < 3) return Array.from({ length: n }, (_, i) => i);
  const gcd = (a, b) => (b ? gcd(b, a % b) : a);
  let stride = Math.max(1, Math.round(n / 1.618034));
  while (gcd(stride, n) !== 1) stride += 1;
  return Array.from({ length: n }, (_, k) => (k * stride) % n);
}

/**
 * The time left while the candidates run, from the runs so far (not from the first one): the
 * finished ones' time over their estimates' low ends (how much slower this machine, and how much
 * longer their grown runs, made them) scales the low end of every candidate not finished; a running
 * one is expected to take that long in all, less the time it has run (none once past it). Then the
 * ranking: the Pareto deployments (at most `intervalPoints`) run again at the low and high cost
 * bounds, each run as long as the mean finished run that met the SLO (or, before one has, the mean
 * finished run). All of it over `workers`. `done[i]` is null or {ms}; `running` is [{index,
 * elapsedMs}] for the candidates on a worker now. A finished one met the SLO when its `met` says so,
 * or its run's result does (steady_state.meets_slo; within a GPU budget, a max_qps above 0).
 * Null until twice as many runs as workers have finished (or all but one): the first one or two
 * are the fastest of their batch (a deployment that fails fast), and on the canonical search they
 * made the time left three times too short (tests/web/search_time_left.test.mjs).
 *
 * Reuse (search.js runCentral): a candidate that took a sibling's run (`reusedFrom` set) is done
 * and took no time of its own, so it neither scales the rest nor counts as a finished run. Those
 * not finished and `waiting` (not yet named to run, so a sibling's run may yet settle them) each
 * count the share of the candidates the engine decided after they waited that run rather than
 * take a run: the finished ones that `waited`, and `waitedNamed` more named to run after waiting
 * but not finished (each family's first run settles some of its siblings and names the next at
 * once, so the share is known early); all of them until one such is known.
 */
function metSlo(o) {
  if (typeof o.met === 'boolean') return o.met;
  const r = o.result;
  return Boolean(r && ((r.steady_state && r.steady_state.meets_slo) || (r.max_qps && r.max_qps.qps > 0)));
}

const tookRun = (o) => o.reusedFrom !== undefined;

/**
 * Of the candidates decided after waiting on their family's runs (the finished ones that `waited`,
 * and `named` more to run), the share that run; 1 before one is known.
 */
function waitedRunShare(done, named) {
  const waited = done.filter((o) => o && o.waited);
  const decided = waited.length + named;
  return decided ? (waited.filter((o) => !tookRun(o)).length + named) / decided : 1;
}

export function timeLeft(pointLowMs, done, { workers, running = [], intervalPoints = 8, waiting = [], waitedNamed = 0 }) {
  const w = Math.max(1, workers);
  let spent = 0;
  let planned = 0;
  let met = 0;
  let metMs = 0;
  pointLowMs.forEach((ms, i) => {
    if (!done[i] || tookRun(done[i])) return;
    spent += done[i].ms;
    planned += ms;
    if (metSlo(done[i])) {
      met += 1;
      metMs += done[i].ms;
    }
  });
  const finished = done.filter((o) => o && !tookRun(o)).length;
  const took = done.filter((o) => o && tookRun(o)).length;
  if (finished < Math.min(pointLowMs.length - took - 1, 2 * w)) return null;
  const ratio = planned > 0 ? spent / planned : 1;
  const elapsed = new Map(running.map((r) => [r.index, r.elapsedMs]));
  const waits = new Set(waiting);
  const share = waitedRunShare(done, waitedNamed);
  let left = 0;
  pointLowMs.forEach((ms, i) => {
    if (!done[i]) left += Math.max(0, ratio * ms - (elapsed.get(i) || 0)) * (waits.has(i) ? share : 1);
  });
  const perBoundRun = met ? metMs / met : finished ? spent / finished : ratio * Math.min(...pointLowMs);
  const ranking = (2 * Math.min(intervalPoints, pointLowMs.length) * perBoundRun) / w;
  return left / w + ranking;
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
