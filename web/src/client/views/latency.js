// The view of `serving_latency` results (one batch, no queue): headline cards,
// memory per GPU, per-family latency of prefill and of one decode step, the
// roofline, and the operator table.
import { renderResult, memoryRows } from '../render.js';
import { chartView } from '../charts/registry.js';
import { stackedBarsConfig, groupSum } from '../charts/bars.js';
import { rooflineConfig, rooflinePoints } from '../charts/roofline.js';
import { numericLeaves } from '../result-values.js';
import { sig3 } from '../format.js';
import { $, kpiCard } from '../dom.js';
import { headlineCards } from '../catalogue.js';

const PHASES = [['prefill', 'Prefill'], ['decode_per_step', 'Decode step']];

let familyScale = 'ms';  // 'ms' | '%'

function ops(result, key) {
  const b = (result && result.breakdown) || {};
  return Array.isArray(b[key]) ? b[key] : [];
}

function renderMemoryChart(result) {
  const mem = result.memory_per_gpu || {};
  const gpus = (result.deployment && result.deployment.gpus) || 1;
  const present = memoryRows().filter(([key]) => typeof mem[key] === 'number');
  const view = chartView('memory', $('chart-memory'), { height: 150 });
  if (!present.length) return view.clear('Memory per GPU: no data');
  const category = gpus > 1 ? `Each of ${gpus} GPUs` : 'GPU';
  view.render(() => stackedBarsConfig({
    categories: [category],
    series: present.map(([key, label]) => ({ key, label, values: [mem[key]] })),
    unit: 'GiB',
    max: mem.capacity_GiB || undefined,
  }), `Memory per GPU, GiB of ${sig3(mem.capacity_GiB)}: ${present.map(([k, l]) => `${l} ${sig3(mem[k])}`).join(', ')}`);
}

function renderFamilyChart(result) {
  const view = chartView('families', $('chart-families'), { height: 190 });
  const sums = PHASES.map(([key]) => groupSum(ops(result, key), 'family', 'time_us'));
  const families = [...new Set(sums.flatMap((m) => [...m.keys()]))];
  if (!families.length) return view.clear('Latency by operator family: no data');
  const series = families.map((f) => ({ key: f, label: f, values: sums.map((m) => (m.get(f) || 0) / 1000) }));
  const normalize = familyScale === '%';
  view.render(() => stackedBarsConfig({
    categories: PHASES.map(([, label]) => label),
    series,
    unit: 'ms',
    normalize,
  }), `Latency by operator family for prefill and one decode step (${normalize ? 'share of the phase' : 'milliseconds'}): ` +
    PHASES.map(([, label], i) => `${label}: ${families.map((f) => `${f} ${sig3((sums[i].get(f) || 0) / 1000)} ms`).join(', ')}`).join('; '));
}

/** The GPU record behind a result: a custom spec in the scenario, else the preset. */
function gpuRecord(result, ctx) {
  const hw = (ctx.scenario && ctx.scenario.hardware) || {};
  if (hw.gpu && typeof hw.gpu === 'object') return hw.gpu;
  const id = (result.deployment && result.deployment.gpu) || hw.gpu;
  return (ctx.gpus && ctx.gpus.get(id)) || null;
}

function renderRoofline(result, ctx) {
  const view = chartView('roofline', $('chart-roofline'), { height: 300 });
  const gpu = gpuRecord(result, ctx);
  const dtype = (ctx.scenario && ctx.scenario.precision && ctx.scenario.precision.activations) || 'bf16';
  const peaks = (gpu && gpu.peak_tflops) || {};
  const peak = Number(peaks[dtype]) > 0 ? Number(peaks[dtype]) : Number(peaks.bf16) || 0;
  const bw = Number(gpu && gpu.hbm_bandwidth_GBps) || 0;
  let skipped = 0;
  const groups = PHASES.map(([key, label], i) => {
    const r = rooflinePoints(ops(result, key));
    skipped += r.skipped;
    return { label, points: r.points, color: ['#e0a526', '#2f6fdb'][i] };
  });
  const note = $('roofline-note');
  const gpuName = (gpu && (gpu.name || gpu.id)) || 'unknown GPU';
  note.textContent = `${gpuName}: ${sig3(peak)} TFLOP/s (${Number(peaks[dtype]) > 0 ? dtype : 'bf16'}) and ${sig3(bw)} GB/s` +
    `, ridge at ${peak > 0 && bw > 0 ? sig3((peak * 1000) / bw) : '—'} FLOP/byte.` +
    (skipped ? ` ${skipped} operator${skipped === 1 ? '' : 's'} with no FLOPs (e.g. KV-cache writes) not shown.` : '');
  if (!groups.some((g) => g.points.length)) return view.clear('Roofline: no operators with FLOPs');
  view.render(() => rooflineConfig({ groups, peakTflops: peak, bandwidthGBps: bw, roofLabel: `${gpuName} roof` }),
    `Roofline of ${gpuName}: ${groups.map((g) => `${g.points.length} ${g.label} operators`).join(' and ')}; ` +
    `compute roof ${sig3(peak)} TFLOP/s, memory slope ${sig3(bw)} GB/s`);
}

let lastRender = null;

export const view = {
  kind: 'serving_latency',
  title: 'Single-batch latency',
  section: 'latency-view',
  charts: [
    { id: 'memory', title: 'Memory per GPU', unit: 'GiB', what: 'memory chart' },
    { id: 'families', title: 'Latency by operator family', what: 'operator-family chart' },
    { id: 'roofline', title: 'Roofline', what: 'roofline' },
  ],

  headline(result) {
    return headlineCards(result);
  },

  render(result, warnings, ctx = {}) {
    lastRender = { result, ctx };
    renderResult(result, warnings, ctx);
    // The engine's headline cards (result.headline_metrics), numbers tagged by metric id.
    $('latency-kpis').replaceChildren(...headlineCards(result).map((h) => kpiCard(h, h.key)));
    renderMemoryChart(result);
    renderFamilyChart(result);
    renderRoofline(result, ctx);
  },

  /** Switches the family chart between milliseconds and shares. */
  setFamilyScale(scale) {
    familyScale = scale === '%' ? '%' : 'ms';
    for (const [id, s] of [['family-ms', 'ms'], ['family-pct', '%']]) $(id).setAttribute('aria-pressed', String(s === familyScale));
    if (lastRender) renderFamilyChart(lastRender.result);
  },

  rows(result) {
    const rows = [];
    for (const [key, label] of PHASES) {
      for (const op of ops(result, key)) rows.push({ phase: label, ...op });
    }
    return [{ name: 'operators', rows }];
  },

  compare(result) {
    const out = [];
    for (const group of ['metrics', 'memory_per_gpu', 'floors']) {
      for (const [k, v] of numericLeaves(result && result[group])) out.push([group, k, v]);
    }
    return out;
  },
};
