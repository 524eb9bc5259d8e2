// The deployment-search question as the engine reads it (`sightline search`,
// api::search_plan): a serving "simulate" base scenario (model, workload, SLO),
// the target rate, the GPU budget, the GPU types with their price per GPU-hour,
// and the axes of the space. This module builds it from the Search form's
// values and checks them; nothing here touches the DOM, so Node tests import it.

/** Axes the page searches (the engine's defaults for the rest). */
export const TP_OPTIONS = [1, 2, 4, 8];
/** At most this many candidates are simulated in the page (each one a full serving run): the CLI example's whole space (144 after pruning) fits, and the time estimate shows before any runs. */
export const MAX_SEARCH_POINTS = 200;
/** A candidate that runs longer than this in a page worker is stopped and counted as a miss. */
export const POINT_BUDGET_MS = 60000;

export class QuestionError extends Error {
  constructor(input, message) {
    super(message);
    this.input = input;  // the id of the form input at fault
  }
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function positive(value, input, what) {
  const n = Number(value);
  if (String(value ?? '').trim() === '' || !Number.isFinite(n) || n <= 0) throw new QuestionError(input, `${what} must be a number above 0`);
  return n;
}

function wholeList(text, input, what) {
  const tokens = String(text ?? '').split(/[\s,;]+/).filter(Boolean);
  if (!tokens.length) throw new QuestionError(input, `${what}: enter at least one whole number, separated by commas`);
  const out = [];
  for (const t of tokens) {
    const n = Number(t);
    if (!Number.isInteger(n) || n < 1) throw new QuestionError(input, `${what}: "${t.slice(0, 20)}" is not a whole number above 0`);
    if (!out.includes(n)) out.push(n);
  }
  return out;
}

/** The joint bounds' attainment when the form leaves it empty (a P99-like share). */
export const DEFAULT_ATTAINMENT = 0.99;

/** The mean of a workload length (a number, or a distribution with a mean, or a uniform one's midpoint). */
export function meanLength(spec) {
  if (Number.isFinite(spec)) return spec;
  if (isObject(spec) && Number.isFinite(spec.mean)) return spec.mean;
  if (isObject(spec) && Number.isFinite(spec.min) && Number.isFinite(spec.max)) return (spec.min + spec.max) / 2;
  return null;
}

/**
 * A workload length with its mean moved to `mean` tokens: a fixed length is replaced; a
 * distribution keeps its shape (cv, min) and its cap moves with the mean, so a tail that was
 * cut at 8x the mean is still cut at 8x (Llama-3-70B chat's 512-token prompts capped at 4096
 * from I2.3's 256 capped at 2048); a uniform range moves and scales about its midpoint.
 */
export function withMeanLength(spec, mean) {
  if (!isObject(spec)) return mean;
  const old = meanLength(spec);
  const out = { ...spec };
  const k = old > 0 ? mean / old : 1;
  if (Number.isFinite(spec.mean)) out.mean = mean;
  if (Number.isFinite(spec.max)) out.max = Math.max(Math.round(spec.max * k), Math.ceil(mean));
  if (!Number.isFinite(spec.mean) && Number.isFinite(spec.min)) out.min = Math.max(1, Math.round(spec.min * k));
  return out;
}

/**
 * The question from the form's values:
 *   {question: 'rate' (cheapest at the target rate) | 'budget' (best within the GPU budget),
 *    workload: scenario record (simulate), model, rate, maxGpus, promptTokens, outputTokens (means), ttftMs, tpotMs,
 *    ttftPct, tpotPct ('joint' | 'p50' … 'p99', default joint), attainment (of the joint bounds),
 *    gpus: [{gpu, price, intra_node, inter_node, node_gpus}] (node_gpus: the node size its values propose, gpu-links.js), maxNumSeqs: "64, 128", chunked: 'both'|'on'|'off',
 *    ratios: "colocated, 1:1" (prefill:decode pools; empty: colocated only), mixed: boolean (mixed pools),
 *    adp: "1, 4" (attention data-parallel group sizes, MoE models; empty: the workload's own)}
 * The optional axes are written as `sightline search` reads them (prefill_decode_ratio, mixed_pools,
 * attention_data_parallel) and only when asked, so a question without them is the same as before; their
 * values are the engine's to check (a bad ratio, mixed pools without a P:D ratio, wide EP on a dense
 * model: a located error the page marks on the input).
 * Throws QuestionError naming the input at fault.
 */
export function buildQuestion(v) {
  if (!isObject(v.workload) || !v.workload.serving || v.workload.serving.mode !== 'simulate') {
    throw new QuestionError('q-workload', 'choose a serving-simulation scenario for the workload');
  }
  if (!v.model) throw new QuestionError('q-model', 'choose a model');
  const budget = v.question === 'budget';
  const target = budget ? null : positive(v.rate, 'q-rate', 'The target rate');
  const maxGpus = positive(v.maxGpus, 'q-max-gpus', 'The GPU budget');
  if (!Number.isInteger(maxGpus) || maxGpus > 4096) throw new QuestionError('q-max-gpus', 'The GPU budget must be a whole number from 1 to 4096');
  const ttft = String(v.ttftMs ?? '').trim() === '' ? 0 : positive(v.ttftMs, 'q-ttft', 'The TTFT SLO');
  const tpot = String(v.tpotMs ?? '').trim() === '' ? 0 : positive(v.tpotMs, 'q-tpot', 'The TPOT SLO');
  if (!ttft && !tpot) throw new QuestionError('q-ttft', 'give a TTFT or a TPOT SLO (or both)');
  // 'joint' is the engine's default (serving.slo.percentiles); any other choice is the engine's to check.
  const pct = { ttft: String(v.ttftPct || 'joint'), tpot: String(v.tpotPct || 'joint') };
  const joint = (ttft && pct.ttft === 'joint') || (tpot && pct.tpot === 'joint');
  let attainment = DEFAULT_ATTAINMENT;
  if (joint && String(v.attainment ?? '').trim() !== '') {
    attainment = Number(v.attainment);
    if (!Number.isFinite(attainment) || attainment < 0.01 || attainment > 1) {
      throw new QuestionError('q-attainment', 'The attainment must be a share from 0.01 to 1 (0.99: 99% of requests within every joint bound)');
    }
  }
  if (!v.gpus || !v.gpus.length) throw new QuestionError('q-gpus', 'tick at least one GPU type');
  const gpus = v.gpus.map((g) => {
    const option = { gpu: g.gpu, usd_per_hour: positive(g.price, `q-price-${g.gpu}`, `The price of ${g.gpu}`) };
    if (g.intra_node) option.intra_node = g.intra_node;
    if (g.inter_node) option.inter_node = g.inter_node;
    return option;
  });
  const seqs = wholeList(v.maxNumSeqs, 'q-seqs', 'Batch limits');
  const tp = v.tp === undefined ? TP_OPTIONS : wholeList(v.tp, 'q-tp', 'Tensor-parallel splits');
  const tps = tp.filter((t) => t <= maxGpus);
  if (!tps.length) throw new QuestionError('q-tp', `every tensor-parallel split is above the GPU budget (${maxGpus})`);
  const chunked = { both: [false, true], on: [true], off: [false] }[v.chunked] || [false, true];
  const ratios = String(v.ratios ?? '').split(/[\s,;]+/).filter(Boolean);
  const adp = String(v.adp ?? '').trim() === '' ? [] : wholeList(v.adp, 'q-adp', 'Attention data-parallel groups');

  const base = structuredClone(v.workload);
  delete base.source;
  base.id = 'search-base';
  base.title = `Deployment search: ${v.model}`;
  base.model = v.model;
  // The engine's SLO object, as the serving form and the CLI write it.
  const slo = joint ? { attainment } : {};
  if (ttft) slo.ttft_ms = ttft;
  if (tpot) slo.tpot_ms = tpot;
  const percentiles = {};
  if (ttft && pct.ttft !== 'joint') percentiles.ttft = pct.ttft;
  if (tpot && pct.tpot !== 'joint') percentiles.tpot = pct.tpot;
  if (Object.keys(percentiles).length) slo.percentiles = percentiles;
  base.serving.slo = slo;
  // The budget question has no target rate: each layout's capacity search sets its own.
  base.serving.workload.arrival = { process: 'poisson', rate_qps: target || base.serving.workload.arrival.rate_qps || 1 };
  for (const [key, input, what] of [['prompt_tokens', 'q-prompt', 'The mean prompt length'], ['output_tokens', 'q-output', 'The mean output length']]) {
    const raw = key === 'prompt_tokens' ? v.promptTokens : v.outputTokens;
    if (raw === undefined || String(raw).trim() === '') continue;  // the workload's own
    const mean = positive(raw, input, what);
    if (!Number.isInteger(mean)) throw new QuestionError(input, `${what} must be a whole number of tokens`);
    if (mean !== meanLength(base.serving.workload[key])) base.serving.workload[key] = withMeanLength(base.serving.workload[key], mean);
  }
  // The base must validate on its own: the search replaces hardware and layout per candidate.
  // One node of the first GPU: its own node size (node_gpus, from its values),
  // or, for a GPU that states none, the largest split the question asks for.
  const perNode = Number.isInteger(v.gpus[0].node_gpus) && v.gpus[0].node_gpus > 0 ? v.gpus[0].node_gpus : Math.max(...tps);
  base.hardware = { gpu: gpus[0].gpu, gpus_per_node: perNode };
  if (perNode > 1 && gpus[0].intra_node) base.hardware.intra_node = gpus[0].intra_node;
  base.serving.parallelism = { tp: perNode, pp: 1 };
  delete base.serving.cluster;
  const question = { base };
  if (!budget) question.target_qps = target;
  Object.assign(question, { max_gpus: maxGpus, gpus, tp: tps, max_num_seqs: seqs, chunked_prefill: chunked });
  if (ratios.length) question.prefill_decode_ratio = ratios;
  if (v.mixed) question.mixed_pools = true;
  if (adp.length) question.attention_data_parallel = adp;
  return question;
}

/** The form values a question came from (for a shared link). */
export function formValuesOf(question) {
  const base = question.base || {};
  const slo = (base.serving && base.serving.slo) || {};
  const chunked = question.chunked_prefill || [false, true];
  const wl = (base.serving && base.serving.workload) || {};
  const budget = !Number.isFinite(question.target_qps);
  return {
    question: budget ? 'budget' : 'rate',
    model: typeof base.model === 'string' ? base.model : '',
    rate: budget ? '' : question.target_qps,
    promptTokens: meanLength(wl.prompt_tokens) ?? '',
    outputTokens: meanLength(wl.output_tokens) ?? '',
    tp: (question.tp || TP_OPTIONS).join(', '),
    maxGpus: question.max_gpus,
    ttftMs: slo.ttft_ms ?? '',
    tpotMs: slo.tpot_ms ?? '',
    ttftPct: (slo.percentiles && slo.percentiles.ttft) || 'joint',
    tpotPct: (slo.percentiles && slo.percentiles.tpot) || 'joint',
    attainment: slo.attainment ?? DEFAULT_ATTAINMENT,
    gpus: (question.gpus || []).map((g) => ({ gpu: g.gpu, price: g.usd_per_hour })),
    maxNumSeqs: (question.max_num_seqs || []).join(', '),
    chunked: chunked.length === 2 ? 'both' : chunked[0] ? 'on' : 'off',
    ratios: (question.prefill_decode_ratio || []).join(', '),
    mixed: question.mixed_pools === true,
    adp: (question.attention_data_parallel || []).join(', '),
  };
}

/** Checks a question read from a link has the shape buildQuestion() makes (it is untrusted input). */
export function isQuestion(q) {
  return isObject(q) && isObject(q.base) && isObject(q.base.serving) && (q.target_qps === undefined || Number.isFinite(q.target_qps))
    && Number.isInteger(q.max_gpus) && Array.isArray(q.gpus) && q.gpus.length > 0
    && q.gpus.every((g) => isObject(g) && typeof g.gpu === 'string' && Number.isFinite(g.usd_per_hour))
    && Array.isArray(q.max_num_seqs) && Array.isArray(q.chunked_prefill);
}

/** The form input an engine error about the question points at (its JSON pointer's first key), if any. */
export function inputForPath(path) {
  const key = String(path || '').split('/')[1];
  return {
    target_qps: 'q-rate', max_gpus: 'q-max-gpus', tp: 'q-tp', max_num_seqs: 'q-seqs', chunked_prefill: 'q-chunked',
    prefill_decode_ratio: 'q-ratios', mixed_pools: 'q-mixed', attention_data_parallel: 'q-adp', gpus: 'q-gpus',
  }[key] || null;
}
