// The view of `training` results (one optimizer step of a parallel training
// run): headline cards, the step-time breakdown, memory per GPU by category,
// the pipeline timeline per rank, the scenario's key numbers, and the compare
// variants and scaling curve when the scenario asks for them. Every number is
// a <span data-metric="train.…"> with three decimals; all text goes through
// textContent.
import { chartView } from '../charts/registry.js';
import { stackedBarsConfig } from '../charts/bars.js';
import { timelineConfig, pipelineSegments } from '../charts/timeline.js';
import { xyConfig } from '../charts/xy.js';
import { numericLeaves } from '../result-values.js';
import { fixed3, gpuName, percent, quantity, sig3, unitName } from '../format.js';
import { headlineCards, memoryPart, stepPart, metricInfo, metricKey, metricList, metricValue, metricWords } from '../catalogue.js';
import { $, cell, kpiCard, metricSpan, setMetric } from '../dom.js';


const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : NaN);

// ---- step-time breakdown -------------------------------------------------------------

const COMPUTE_COLORS = {
  gemm: '#2f6fdb', attention: '#17a589', norm: '#e0a526', rope: '#8e6fd8', elementwise: '#7f8c2d',
  embedding: '#3fb6d3', loss: '#1f4e9c', moe_router: '#c2579a',
};
// Chart colours of the step parts; their words come from the engine's catalogue (step_parts).
const COMM_COLORS = { tp: '#5d6d7e', ep: '#7d5ba6', cp: '#4a8c8c', fsdp: '#9b7b4f', dp: '#34495e' };
const OTHER_COLORS = [
  ['recompute', '#e67e22'], ['pipeline_bubble', '#d9534f'], ['optimizer', '#c0a000'], ['cpu_offload', '#a04000'],
  ['framework', '#6c7a89'], ['overhead', '#9aa6b8'],
];

/** The parts of a step_breakdown_ms as [{key, label, value, color, title}] (zeros kept). */
export function stepParts(b) {
  const parts = [];
  const compute = (b && b.compute) || {};
  const c = stepPart('compute');
  for (const k of Object.keys(compute)) {
    parts.push({ key: `compute.${k}`, label: `${c.label}: ${k}`, value: num(compute[k]), color: COMPUTE_COLORS[k], title: `${c.description} (${k})` });
  }
  const comm = (b && b.exposed_comm) || {};
  for (const k of Object.keys(comm)) {
    const p = stepPart(`exposed_comm/${k}`);
    parts.push({ key: `exposed_comm.${k}`, label: p.label, value: num(comm[k]), color: COMM_COLORS[k], title: p.description });
  }
  for (const [k, color] of OTHER_COLORS) {
    if (!b || !(k in b)) continue;
    const p = stepPart(k);
    parts.push({ key: k, label: p.label, value: num(b[k]), color, title: p.description });
  }
  return parts;
}

function renderStep(result) {
  const b = result.step_breakdown_ms || {};
  const parts = stepParts(b);
  const total = parts.reduce((s, p) => s + (Number.isFinite(p.value) ? p.value : 0), 0);
  const shown = parts.filter((p) => p.value > 0);
  const view = chartView('step', $('chart-step'), { height: 190 });
  const rankNote = typeof b.rank === 'number' ? ` (pipeline rank ${b.rank}, the slowest)` : '';
  $('train-step-note').textContent = `One optimizer step on one GPU${rankNote}; the parts add up to the step time.`;
  if (!shown.length) view.clear('Step-time breakdown: no data');
  else {
    view.render(() => stackedBarsConfig({
      categories: ['Step'],
      series: shown.map((p) => ({ key: p.key, label: p.label, values: [p.value], color: p.color })),
      unit: 'ms',
    }), `Step-time breakdown, ${sig3(total)} ms: ${shown.map((p) => `${p.label} ${sig3(p.value)} ms`).join(', ')}`);
  }
  const rows = parts.filter((p) => p.value > 0 || p.key.startsWith('compute.gemm')).map((p) => {
    const tr = document.createElement('tr');
    tr.title = p.title;
    const th = cell('th', undefined);
    th.scope = 'row';
    const sw = cell('span', undefined, 'swatch');
    sw.style.background = p.color || '#9aa6b8';
    th.append(sw, document.createTextNode(p.label));
    const td = cell('td', undefined, 'num');
    td.append(metricSpan(`train.step.${p.key}`, p.value));
    tr.append(th, td, cell('td', percent(total > 0 ? p.value / total : NaN), 'num muted'));
    return tr;
  });
  const tr = document.createElement('tr');
  tr.className = 'total';
  const th = cell('th', 'Step');
  th.scope = 'row';
  const td = cell('td', undefined, 'num');
  td.append(metricSpan('train.step.total', total));
  tr.append(th, td, cell('td', '100%', 'num muted'));
  $('train-step-table').querySelector('tbody').replaceChildren(...rows, tr);
}

// ---- memory ---------------------------------------------------------------------------

// The memory parts of a training GPU, in stacking order, with their chart colours;
// words from the engine's catalogue.
const MEMORY_COLORS = [
  ['params_GiB', '#2f6fdb'], ['grads_GiB', '#3fb6d3'], ['optimizer_states_GiB', '#8e6fd8'], ['activations_GiB', '#e0a526'],
  ['temporary_GiB', '#e67e22'], ['runtime_overhead_GiB', '#5d6d7e'], ['free_GiB', '#dfe4ec'],
];
const MEMORY_EXTRA = ['activations_stored_GiB', 'activations_working_GiB', 'logits_GiB', 'host_optimizer_states_GiB'];
const memoryWords = (id) => {
  const p = memoryPart('training', id);
  return [p.label, p.description];
};

/** [[key, label, colour, description]] of the parts stacked in the memory chart. */
export function trainMemory() {
  return MEMORY_COLORS.map(([id, color]) => [id, memoryWords(id)[0], color, memoryWords(id)[1]]);
}

function renderMemory(result) {
  const mem = result.memory_per_gpu || {};
  const capacity = num(mem.capacity_GiB);
  const total = num(mem.total_GiB);
  const present = trainMemory().filter(([key]) => Number.isFinite(mem[key]) && (key !== 'free_GiB' || mem[key] > 0));
  const view = chartView('train-memory', $('chart-train-memory'), { height: 150 });
  if (!present.length) view.clear('Memory per GPU: no data');
  else {
    view.render(() => stackedBarsConfig({
      categories: [mem.fits === false ? 'GPU (over capacity)' : 'GPU'],
      series: present.map(([key, label, color]) => ({ key, label, values: [mem[key]], color })),
      unit: 'GiB',
      max: mem.fits !== false && capacity > 0 ? capacity : undefined,
    }), `Memory per GPU, ${sig3(total)} GiB of ${sig3(capacity)}: ${present.map(([k, l]) => `${l} ${sig3(mem[k])}`).join(', ')}`);
  }
  const rows = [];
  const row = (key, label, title, className, swatch) => {
    const tr = document.createElement('tr');
    tr.title = title;
    if (className) tr.className = className;
    const th = cell('th', undefined);
    th.scope = 'row';
    if (swatch) {
      const sw = cell('span', undefined, 'swatch');
      sw.style.background = swatch;
      th.append(sw);
    }
    th.append(document.createTextNode(label));
    const td = cell('td', undefined, 'num');
    td.append(metricSpan(`train.memory.${key}`, mem[key]));
    tr.append(th, td, cell('td', capacity > 0 ? percent(mem[key] / capacity) : '—', 'num muted'));
    rows.push(tr);
  };
  for (const [key, label, color, title] of trainMemory()) {
    if (key in mem && (key !== 'free_GiB' || mem[key] >= 0)) row(key, label, title, '', color);
  }
  if (mem.fits === false) row('overflow_GiB', ...memoryWords('overflow_GiB'), 'over');
  for (const key of MEMORY_EXTRA) if (Number(mem[key]) > 0) row(key, ...memoryWords(key), 'sub');
  row('total_GiB', ...memoryWords('total_GiB'), 'total');
  row('capacity_GiB', ...memoryWords('capacity_GiB'), 'total');
  $('train-memory-table').querySelector('tbody').replaceChildren(...rows);
  const recompute = mem.max_micro_batch_by_recompute || {};
  const parts = ['none', 'selective', 'full'].filter((k) => Number.isFinite(recompute[k]));
  $('train-memory-note').textContent = parts.length
    ? `Largest micro-batch that fits, by recomputation: ${parts.map((k) => `${k} ${recompute[k]}`).join(', ')}.`
    : '';
}

// ---- headline cards -------------------------------------------------------------------

// The engine's headline cards (result.headline_metrics, with the time to train
// where the scenario gives tokens to train), numbers tagged train.<metric id>;
// peak memory per GPU is drawn as the fits verdict against the capacity.
function renderKpis(result) {
  const mem = result.memory_per_gpu || {};
  const fit = $('train-kpi-fit');
  const cards = headlineCards(result).map((h) => (h.key === 'memory_per_gpu_GiB' ? fit : kpiCard(h, `train.${h.key}`)));
  fit.hidden = !cards.includes(fit);
  $('train-kpis').replaceChildren(...cards, ...(fit.hidden ? [fit] : []));
  const fits = mem.fits !== false;
  const verdict = $('train-fits');
  verdict.textContent = fits ? 'Fits' : 'Does not fit';
  verdict.dataset.fits = String(fits);
  $('train-kpi-fit').classList.toggle('bad', !fits);
  setMetric('train.kpi.total_GiB', mem.total_GiB);
  setMetric('train.kpi.capacity_GiB', mem.capacity_GiB);
  setMetric('train.kpi.overflow_GiB', mem.overflow_GiB);
  $('train-overflow').hidden = fits;
  setMetric('train.kpi.max_micro_batch', mem.max_micro_batch);
}

// ---- key numbers and throughput ---------------------------------------------------------

function keyValue(v) {
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return null;
}

function renderKeyMetrics(result) {
  const list = Array.isArray(result.key_metrics) ? result.key_metrics : [];
  const rows = list.map((k) => {
    const tr = document.createElement('tr');
    tr.title = k.description || k.id;
    const th = cell('th', String(k.label || k.id));
    th.scope = 'row';
    const td = cell('td', undefined, 'num');
    const text = keyValue(k.value);
    if (text !== null) {
      const span = cell('span', text);
      span.dataset.key = String(k.id);
      td.append(span);
    } else td.append(metricSpan(`train.key.${k.id}`, k.value));
    tr.append(th, td, cell('td', String(k.unit || ''), 'unitcell'));
    return tr;
  });
  $('train-key-table').querySelector('tbody').replaceChildren(...rows);
  $('train-key-empty').hidden = rows.length > 0;
}

// Throughput and run totals shown as a table: ids of the engine's metric catalogue.
const THROUGHPUT = ['tokens_per_s', 'samples_per_s', 'model_tflops_per_gpu', 'hardware_tflops_per_gpu', 'hfu_pct',
  'time_to_train_hours', 'gpu_hours', 'energy_MWh', 'cost_usd'];

/** Table rows of catalogued training metrics the result has: label, value (data-metric train.<place>), unit. */
function catalogueRows(result, ids) {
  return ids.map((id) => metricInfo('training', id)).filter((m) => Number.isFinite(metricValue(result, m))).map((m) => {
    const tr = document.createElement('tr');
    tr.title = m.description || m.label;
    const th = cell('th', m.label);
    th.scope = 'row';
    const td = cell('td', undefined, 'num');
    const span = metricSpan(`train.${metricKey(m)}`, metricValue(result, m));
    // In the unit a person would use (399 h as 16.6 days); data-value stays exact.
    const q = quantity(metricValue(result, m), unitName(m.unit));
    span.textContent = q.text;
    td.append(span);
    tr.append(th, td, cell('td', q.unit, 'unitcell'));
    return tr;
  });
}

function renderThroughput(result) {
  const rows = catalogueRows(result, THROUGHPUT);
  $('train-throughput-table').querySelector('tbody').replaceChildren(...rows);
  for (const [field, value] of [['train_cost_tier', result.cost_tier], ['train_engine_version', result.engine_version], ['train_seed', result.seed]]) {
    for (const node of document.querySelectorAll(`[data-field="${field}"]`)) node.textContent = String(value ?? '—');
  }
  $('train-flops').textContent = String(result.flop_convention || '');
}

// ---- pipeline -----------------------------------------------------------------------------

const TIMELINE_KINDS = [
  { key: 'busy', label: 'Forward + backward (busy)', color: '#2f6fdb' },
  { key: 'fwd', label: 'Forward pass', color: '#2f6fdb' },
  { key: 'bwd', label: 'Backward pass', color: '#17a589' },
  { key: 'idle', label: 'Idle (bubble)', color: '#f2b8b5' },
  { key: 'tail', label: 'After the last pass (gradient sync, optimizer)', color: '#e0a526' },
  { key: 'step_end', label: 'Step end of the rank', color: '#1c2330' },
];

const PIPELINE_FACTS = ['pp_bubble_pct', 'pp_bubble_formula_pct', 'pp_mean_idle_pct', 'pp_makespan_ms', 'pp_p2p_transfer_us'];

const RANK_COLUMNS = [
  ['fwd_ms', 'Fwd', 'ms', 'Forward pass of one micro-batch through this rank’s layers (all its chunks)'],
  ['bwd_ms', 'Bwd', 'ms', 'Backward pass of one micro-batch (recomputation included)'],
  ['busy_ms', 'Busy', 'ms', 'All forward and backward passes of the step'],
  ['idle_ms', 'Idle', 'ms', 'Makespan minus busy: this rank’s share of the bubble'],
  ['dp_comm_ms', 'DP comm', 'ms', 'Gradient-sync time on the communication stream (overlapped or not)'],
  ['step_end_ms', 'Step end', 'ms', 'When this rank finishes the step (after its gradient sync and optimizer)'],
  ['peak_micro_batches_in_flight', 'Peak in flight', '', 'Micro-batch chunks whose activations this rank holds at its worst moment'],
];

function renderPipeline(result) {
  const p = result.pipeline || {};
  const ranks = Array.isArray(p.per_rank) ? p.per_rank : [];
  const schedule = { gpipe: 'GPipe', '1f1b': '1F1B', interleaved_1f1b: 'Interleaved 1F1B' }[p.schedule] || String(p.schedule ?? '—');
  $('train-pipeline-summary').textContent = `${schedule} · ${p.stages ?? '?'} stage${p.stages === 1 ? '' : 's'}` +
    `${p.virtual_stages > 1 ? ` × ${p.virtual_stages} chunks` : ''} · ${p.micro_batches ?? '?'} micro-batches per step`;
  const facts = catalogueRows(result, PIPELINE_FACTS);
  $('train-pipeline-facts').querySelector('tbody').replaceChildren(...facts);

  const { segments, perPass } = pipelineSegments(p);
  const rows = ranks.map((r, i) => `Rank ${r.rank ?? i}`);
  const kinds = TIMELINE_KINDS.filter((k) => segments.some((s) => s.kind === k.key));
  const height = Math.min(560, Math.max(150, 80 + 28 * rows.length));
  const view = chartView('timeline', $('chart-timeline'), { height });
  view.wrap.style.height = `${height}px`;
  if (!segments.length) view.clear('Pipeline timeline: no data');
  else {
    view.render(() => timelineConfig({ rows, segments, kinds, unit: 'ms', xLabel: 'time in the step (ms)' }),
      `Pipeline timeline of ${rows.length} rank${rows.length === 1 ? '' : 's'}` +
      (perPass ? ', every forward and backward pass' : `: ${ranks.map((r, i) => `rank ${r.rank ?? i} busy ${sig3(r.busy_ms)} ms, idle ${sig3(r.idle_ms)} ms`).join('; ')}`));
  }
  $('timeline-note').textContent = perPass
    ? 'Each bar is one forward or backward pass, as the engine simulated it.'
    : 'The engine reports each rank’s totals, not the start and end of every pass: each bar shows the rank’s busy time ' +
      '(forward and backward passes) from 0, its idle time (the bubble, spread over fill and drain in the real schedule) up to ' +
      'the makespan, the work after the last pass (gradient sync, optimizer) when it ends later, and a dark mark where the rank ends its step.';

  const head = document.createElement('tr');
  const h0 = cell('th', 'Rank');
  h0.scope = 'col';
  head.append(h0, ...RANK_COLUMNS.map(([, label, unit, title]) => {
    const th = cell('th', undefined, 'num');
    th.scope = 'col';
    th.title = title;
    th.append(document.createTextNode(label));
    if (unit) th.append(document.createTextNode(' '), cell('span', unit, 'unit'));
    return th;
  }));
  $('train-pipeline-table').querySelector('thead').replaceChildren(head);
  const body = ranks.map((r, i) => {
    const tr = document.createElement('tr');
    const id = r.rank ?? i;
    tr.dataset.rank = String(id);
    const th = cell('th', String(id), 'num');
    th.scope = 'row';
    tr.append(th, ...RANK_COLUMNS.map(([key]) => {
      const td = cell('td', undefined, 'num');
      td.append(metricSpan(`train.pipeline.rank${id}.${key}`, r[key]));
      return td;
    }));
    return tr;
  });
  $('train-pipeline-table').querySelector('tbody').replaceChildren(...body);
}

// ---- compare variants and scaling -----------------------------------------------------

// Columns of the variants table: [field of a compare entry, catalogue metric id giving its words].
const COMPARE_COLUMNS = [
  ['step_time_ms', 'step_time_ms'], ['tokens_per_s_per_gpu', 'tokens_per_s_per_gpu'], ['mfu_pct', 'mfu_pct'],
  ['memory_per_gpu_GiB', 'memory_per_gpu_GiB'], ['base_over_variant_throughput', 'compare_throughput_ratio'],
];

function compareRows(result) {
  const m = result.metrics || {};
  const mem = result.memory_per_gpu || {};
  const base = {
    label: 'This scenario', step_time_ms: m.step_time_ms, tokens_per_s_per_gpu: m.tokens_per_s_per_gpu, mfu_pct: m.mfu_pct,
    memory_per_gpu_GiB: mem.total_GiB, base_over_variant_throughput: 1, fits: mem.fits, step_breakdown_ms: result.step_breakdown_ms,
  };
  return [base, ...(Array.isArray(result.compare) ? result.compare : [])];
}

function renderCompare(result) {
  const has = Array.isArray(result.compare) && result.compare.length > 0;
  $('train-compare-card').hidden = !has;
  if (!has) return;
  const rows = compareRows(result);
  const head = document.createElement('tr');
  const h0 = cell('th', 'Variant');
  h0.scope = 'col';
  const hf = cell('th', 'Fits');
  hf.scope = 'col';
  head.append(h0, ...COMPARE_COLUMNS.map(([, id]) => {
    const { label, unit, title } = metricWords('training', id);
    const th = cell('th', undefined, 'num');
    th.scope = 'col';
    th.title = title;
    th.append(document.createTextNode(label));
    if (unit) th.append(document.createTextNode(' '), cell('span', unit, 'unit'));
    return th;
  }), hf);
  $('train-compare-table').querySelector('thead').replaceChildren(head);
  const body = rows.map((r, i) => {
    const tr = document.createElement('tr');
    const id = i === 0 ? 'base' : String(i - 1);
    tr.dataset.variant = id;
    const th = cell('th', String(r.label ?? `variant ${i}`));
    th.scope = 'row';
    tr.append(th, ...COMPARE_COLUMNS.map(([key]) => {
      const td = cell('td', undefined, 'num');
      td.append(metricSpan(`train.compare.${id}.${key}`, r[key]));
      return td;
    }), cell('td', r.fits === false ? 'no' : r.fits === true ? 'yes' : '—', r.fits === false ? 'status-bad' : ''));
    return tr;
  });
  $('train-compare-table').querySelector('tbody').replaceChildren(...body);

  const parts = rows.map((r) => stepParts(r.step_breakdown_ms || {}));
  const keys = [];
  for (const list of parts) for (const p of list) if (p.value > 0 && !keys.some((k) => k.key === p.key)) keys.push(p);
  const view = chartView('train-compare', $('chart-train-compare'), { height: 90 + 36 * rows.length });
  view.wrap.style.height = `${90 + 36 * rows.length}px`;
  if (!keys.length) return view.clear('Variants: no data');
  const labels = rows.map((r) => String(r.label ?? ''));
  view.render(() => stackedBarsConfig({
    categories: labels,
    series: keys.map((k) => ({
      key: k.key, label: k.label, color: k.color,
      values: parts.map((list) => (list.find((p) => p.key === k.key) || {}).value || 0),
    })),
    unit: 'ms',
  }), `Step time of each variant by part: ${rows.map((r) => `${r.label} ${sig3(r.step_time_ms)} ms`).join(', ')}`);
}

const SCALING_COLUMNS = [
  ['gpus', 'GPUs', ''], ['global_batch_size', 'Global batch', 'seq'],
  ['step_time_ms', 'Step time', 'ms'], ['tokens_per_s_per_gpu', 'Tokens/s/GPU', ''], ['speedup', 'Speedup', '×'],
  ['ideal_speedup', 'Ideal', '×'], ['efficiency_pct', 'Efficiency', '%'], ['exposed_dp_comm_ms', 'Exposed DP comm', 'ms'],
  ['memory_per_gpu_GiB', 'Memory/GPU', 'GiB'],
];

function renderScaling(result) {
  const s = result.scaling;
  const points = s && Array.isArray(s.points) ? s.points : [];
  $('train-scaling-card').hidden = points.length === 0;
  if (!points.length) return;
  const axis = String(s.axis || 'dp');
  $('train-scaling-note').textContent = `${s.mode === 'weak' ? 'Weak' : 'Strong'} scaling over ${axis.toUpperCase()}. ${s.efficiency_definition || ''}`;
  const head = document.createElement('tr');
  const h0 = cell('th', axis.toUpperCase(), 'num');
  h0.scope = 'col';
  const hf = cell('th', 'Fits');
  hf.scope = 'col';
  head.append(h0, ...SCALING_COLUMNS.map(([, label, unit]) => {
    const th = cell('th', undefined, 'num');
    th.scope = 'col';
    th.append(document.createTextNode(label));
    if (unit) th.append(document.createTextNode(' '), cell('span', unit, 'unit'));
    return th;
  }), hf);
  $('train-scaling-table').querySelector('thead').replaceChildren(head);
  const body = points.map((pt, i) => {
    const tr = document.createElement('tr');
    tr.dataset.point = String(i);
    const th = cell('th', String(pt[axis] ?? i), 'num');
    th.scope = 'row';
    tr.append(th, ...SCALING_COLUMNS.map(([key]) => {
      const td = cell('td', undefined, 'num');
      td.append(metricSpan(`train.scaling.${i}.${key}`, pt[key]));
      return td;
    }), cell('td', pt.fits === false ? 'no' : 'yes', pt.fits === false ? 'status-bad' : ''));
    return tr;
  });
  $('train-scaling-table').querySelector('tbody').replaceChildren(...body);
  const view = chartView('scaling', $('chart-scaling'), { height: 240 });
  const xs = points.map((pt) => ({ x: pt.gpus, speedup: pt.speedup, ideal: pt.ideal_speedup, label: `${axis.toUpperCase()} ${pt[axis]}, ${pt.gpus} GPUs, efficiency ${sig3(pt.efficiency_pct)}%` }));
  view.render(() => xyConfig({
    series: [
      { label: 'Speedup', points: xs.map((p) => ({ x: p.x, y: p.speedup, label: p.label })), line: true, color: '#2f6fdb' },
      { label: 'Ideal', points: xs.map((p) => ({ x: p.x, y: p.ideal, label: `ideal at ${p.x} GPUs` })), line: true, dashed: true, color: '#9aa6b8', pointRadius: 0 },
    ],
    xLabel: 'GPUs', yLabel: 'Speedup (×)', range: { y: [0, undefined] },
  }), `Scaling over ${axis}: ${points.map((pt) => `${pt.gpus} GPUs speedup ${sig3(pt.speedup)} of ${sig3(pt.ideal_speedup)}`).join(', ')}`);
}

// ---- the view ---------------------------------------------------------------------------

const PASS_ROWS = [
  ['forward_per_micro_batch', 'forward'], ['backward_per_micro_batch', 'backward'],
  ['recompute_per_micro_batch', 'recompute'], ['communication_per_micro_batch', 'communication'],
];

export const view = {
  kind: 'training',
  title: 'Training step',
  section: 'training-view',
  charts: [
    { id: 'step', title: 'Step-time breakdown', unit: 'ms', what: 'step-time breakdown' },
    { id: 'train-memory', title: 'Memory per GPU', unit: 'GiB', what: 'memory chart' },
    { id: 'timeline', title: 'Pipeline', unitId: 'train-pipeline-summary', what: 'pipeline timeline' },
    { id: 'train-compare', title: 'Variants', unit: 'the scenario’s compare list, step time by part', what: 'variants chart' },
    { id: 'scaling', title: 'Scaling', what: 'scaling chart' },
  ],
  embedCharts: ['step', 'train-memory'],
  csvTitle: 'Download two CSVs: one row per operator of one micro-batch (forward, backward, recompute), and one row per pipeline rank',

  headline(result) {
    // The engine's cards; peak memory per GPU reads as the fits verdict.
    const mem = (result && result.memory_per_gpu) || {};
    return headlineCards(result).map((h) => (h.key !== 'memory_per_gpu_GiB' ? h : {
      key: 'memory_fits', label: h.label, unit: mem.fits === false ? 'GiB over' : `of ${fixed3(mem.capacity_GiB)} GiB`,
      value: mem.fits === false ? mem.overflow_GiB : mem.total_GiB,
      text: mem.fits === false ? `Does not fit, ${fixed3(mem.overflow_GiB)}` : `Fits, ${fixed3(mem.total_GiB)}`,
      title: 'Peak memory on the most loaded GPU against its capacity',
    }));
  },

  summary(result, ctx) {
    const d = result.deployment || {};
    const b = result.batch || {};
    const model = (result.model && (result.model.name || result.model.id)) || 'model';
    const params = result.model && Number.isFinite(result.model.params_B) ? ` (${result.model.params_B.toFixed(2)}B params)` : '';
    const axes = [['DP', d.dp], ['TP', d.tp], ['PP', d.pp], ['CP', d.cp], ['EP', d.ep]]
      .filter(([name, v]) => v !== undefined && (v > 1 || ['DP', 'TP', 'PP'].includes(name))).map(([name, v]) => `${name} ${v}`);
    const extras = [];
    if (d.zero_stage) extras.push(`ZeRO-${d.zero_stage}`);
    if (d.sequence_parallel) extras.push('SP');
    if (d.recompute && d.recompute !== 'none') extras.push(`recompute ${d.recompute}`);
    if (d.fp8 && d.fp8 !== 'none') extras.push(`FP8 ${d.fp8}`);
    if (d.lora) extras.push('LoRA');
    if (d.cpu_offload) extras.push('CPU offload');
    return `${model}${params} on ${d.gpus ?? '?'} × ${gpuName(d.gpu, ctx)} · ${axes.join(' · ')}${extras.length ? ` · ${extras.join(', ')}` : ''} · ` +
      `seq ${b.seq_len ?? '?'} · micro-batch ${b.micro_batch_size ?? '?'} × ${b.micro_batches_per_step ?? '?'} per step (global ${b.global_batch_size ?? '?'})`;
  },

  render(result, warnings) {
    renderKpis(result);
    renderStep(result);
    renderMemory(result);
    renderKeyMetrics(result);
    renderThroughput(result);
    renderPipeline(result);
    renderCompare(result);
    renderScaling(result);
    const list = $('warnings');
    const items = (warnings || []).map((w) => cell('li', typeof w === 'string' ? w : (w.message || JSON.stringify(w))));
    list.replaceChildren(...items);
    list.hidden = items.length === 0;
    $('training-json').textContent = JSON.stringify(result, null, 2);
  },

  /** Numbers a sweep can plot: every catalogued training metric the result has, by its id. */
  sweepMetrics(result) {
    const out = {};
    for (const m of metricList('training')) {
      const v = metricValue(result, m);
      if (typeof v === 'number' && Number.isFinite(v)) out[m.id] = v;
    }
    return out;
  },

  rows(result) {
    const b = (result && result.breakdown) || {};
    const ops = [];
    for (const [key, pass] of PASS_ROWS) {
      for (const op of Array.isArray(b[key]) ? b[key] : []) ops.push({ pass, ...op });
    }
    const ranks = (result && result.pipeline && Array.isArray(result.pipeline.per_rank)) ? result.pipeline.per_rank : [];
    return [
      { name: 'operators per micro-batch', rows: ops },
      { name: 'pipeline ranks', rows: ranks.map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => typeof v !== 'object'))) },
    ];
  },

  compare(result) {
    const out = [];
    for (const group of ['metrics', 'memory_per_gpu', 'step_breakdown_ms', 'pipeline', 'training_run']) {
      for (const [k, v] of numericLeaves(result && result[group])) out.push([group, k, v]);
    }
    return out;
  },
};
