// The view of `serving_simulation` results (the discrete-event serving
// simulator): headline cards, TTFT / TPOT / E2E CDFs drawn from the per-request
// records with the engine's p50/p90/p99 marked, time series of the queue, the
// batch, tokens per step, KV-cache use and the steps' MFU and MBU, GPU busy
// time by kernel family, memory per GPU, the scenario's compare block and key
// metrics. Every number is
// a <span data-metric="serve.…"> with three decimals; all text goes through
// textContent.
import { chartView } from '../charts/registry.js';
import { stackedBarsConfig } from '../charts/bars.js';
import { xyConfig } from '../charts/xy.js';
import { numericLeaves } from '../result-values.js';
import { display, gpuName, quantity, sig3, unitName } from '../format.js';
import { distributionInfo, distributionList, headlineCards, memoryPart, metricAt, metricKey, metricList, metricInfo, metricValue, valueAt } from '../catalogue.js';
import { $, cell, kpiCard, metricSpan } from '../dom.js';

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : NaN);

function row(label, key, value, unit, title) {
  const tr = document.createElement('tr');
  if (title) tr.title = title;
  const th = cell('th', label);
  th.scope = 'row';
  const td = cell('td', undefined, 'num');
  const span = metricSpan(key, value);
  td.append(span);
  // In the unit a person would use: a share as a percentage, 500 s as 8.33 min (data-value stays exact).
  const q = typeof value === 'number' && Number.isFinite(value) ? quantity(value, unit || '') : null;
  if (q) span.textContent = q.text;
  tr.append(th, td, cell('td', q ? q.unit : unitName(unit || ''), 'unitcell'));
  return tr;
}

const get = (obj, path) => path.split('.').reduce((o, k) => (o && typeof o === 'object' ? o[k] : undefined), obj);

// ---- per-request records ---------------------------------------------------------------

/** The per-request records as objects, with TTFT (ms), TPOT (ms), E2E (s) and queueing (ms) added. */
export function requestRecords(result) {
  const req = (result && result.requests) || {};
  const cols = Array.isArray(req.columns) ? req.columns : [];
  const rows = Array.isArray(req.rows) ? req.rows : [];
  return rows.map((r) => {
    const o = {};
    cols.forEach((c, i) => { o[c] = r[i]; });
    const arrival = num(o.arrival_s);
    const first = num(o.first_token_s);
    const done = num(o.completion_s);
    const out = num(o.output_tokens);
    o.ttft_ms = (first - arrival) * 1000;
    o.tpot_ms = out > 1 ? ((done - first) * 1000) / (out - 1) : NaN;
    o.e2e_s = done - arrival;
    o.queueing_ms = (num(o.first_scheduled_s) - arrival) * 1000;
    return o;
  });
}

/** Empirical CDF points of values (sorted), at most `max` points. */
export function cdfPoints(values, max = 600) {
  const v = values.filter(Number.isFinite).sort((a, b) => a - b);
  const n = v.length;
  if (!n) return [];
  const stride = Math.max(1, Math.ceil(n / max));
  const pts = [];
  for (let i = 0; i < n; i += stride) pts.push({ x: v[i], y: (i + 1) / n });
  if (pts[pts.length - 1].y !== 1) pts.push({ x: v[n - 1], y: 1 });
  return pts;
}

// ---- headline ---------------------------------------------------------------------------

// The headline cards are the engine's choice (result.headline_metrics, with
// max_qps where a capacity search ran); the catalogue gives their words and units.
function headlineEntries(result) {
  return headlineCards(result).map((h) => ({ ...h, value: num(h.value) }));
}

function renderKpis(result) {
  $('serving-kpis').replaceChildren(...headlineEntries(result).map((h) => kpiCard(h, `serve.${h.key}`)));
}

// ---- verdict and overload (result.headline) --------------------------------------------

/**
 * The engine's verdict line against the SLO (or the stable/overloaded line
 * without one), throughput and goodput over the steady arrival window, and a
 * banner when arrivals outrun the service rate, with the capacity the run
 * shows. Offline batches have no headline: both stay hidden.
 */
function renderVerdict(result) {
  const h = result && result.headline && typeof result.headline === 'object' ? result.headline : null;
  const panel = $('serve-verdict');
  const banner = $('serve-overload');
  panel.hidden = !h || typeof h.line !== 'string' || h.line === '';
  banner.hidden = !h || h.overloaded !== true;
  if (!h) return;
  panel.dataset.verdict = typeof h.verdict === 'string' ? h.verdict : 'none';
  const line = String(h.line || '');
  $('serve-verdict-line').textContent = line ? line.charAt(0).toUpperCase() + line.slice(1) : '';
  const steady = [];
  if (Number.isFinite(h.throughput_qps)) steady.push(`throughput ${sig3(h.throughput_qps)} req/s`);
  if (Number.isFinite(h.goodput_qps)) steady.push(`goodput ${sig3(h.goodput_qps)} req/s`);
  $('serve-steady').textContent = ((steady.length
    ? `Over the steady arrival window (${display(h.window_requests)} requests, warm-up and drain left out): ${steady.join(', ')}.`
    : '') + growthText(result.steady_state)).trim();
  $('serve-steady').title = String(h.meaning || '');
  if (h.overloaded === true) {
    const offered = Number.isFinite(h.arrival_rate_qps) ? `${sig3(h.arrival_rate_qps)} req/s` : 'the offered rate';
    // A run too short to complete anything while overloaded has no rate to show.
    const cap = h.estimated_capacity_qps > 0 ? `about ${sig3(h.estimated_capacity_qps)} req/s`
      : 'not measurable in this run (too few completions while overloaded: run more requests)';
    $('serve-overload-text').textContent = `arrivals (${offered}) outrun the service rate, so the queue keeps growing and ` +
      `latencies depend on how long the run lasts. Estimated capacity: ${cap}.`;
    banner.dataset.capacity = String(h.estimated_capacity_qps);
  }
}

/**
 * How serving.steady_state grew the run (result.steady_state.runs: each run's requests and
 * verdict), so that the request count shown is not read as the form's; empty without growth.
 */
function growthText(steady) {
  const runs = steady && Array.isArray(steady.runs) ? steady.runs : [];
  if (runs.length < 2) return '';
  const first = runs[0].requests;
  const last = runs[runs.length - 1];
  const decided = last.verdict === 'meets' || last.verdict === 'fails';
  return ` The run grew from ${display(first)} to ${display(last.requests)} requests ` +
    (decided ? 'until the verdict was decided.' : 'as far as it may grow (three times, up to serving.steady_state.max_requests), and the verdict is still undecided.');
}

// ---- distributions ----------------------------------------------------------------------

// The distributions drawn as CDFs: [chart id, catalogue distribution id (also the record field)].
const CDFS = [['cdf-ttft', 'ttft_ms'], ['cdf-tpot', 'tpot_ms'], ['cdf-e2e', 'e2e_s']];
const MARKS = [['p50', '#17a589'], ['p90', '#e0a526'], ['p99', '#d9534f']];

function renderCdfs(result, records) {
  const m = (result && result.metrics) || {};
  for (const [id, field] of CDFS) {
    const { label, unit: rawUnit, pointer } = distributionInfo(field);
    const unit = unitName(rawUnit);
    const view = chartView(id, $(`chart-${id}`), { height: 220 });
    const pts = cdfPoints(records.map((r) => r[field]));
    if (!pts.length) {
      view.clear(`${label} distribution: no completed requests`);
      continue;
    }
    const stats = valueAt(result, pointer) || {};
    const series = [{ label: `${label} CDF`, points: pts, line: true, pointRadius: 0, color: '#2f6fdb' }];
    for (const [p, color] of MARKS) {
      const x = num(stats[p]);
      if (!Number.isFinite(x)) continue;
      series.push({ label: `${p} ${sig3(x)} ${unit}`, points: [{ x, y: 0 }, { x, y: 1 }], line: true, dashed: true, pointRadius: 0, color });
    }
    view.render(() => xyConfig({ series, xLabel: `${label} (${unit})`, yLabel: 'share of requests', range: { y: [0, 1] } }),
      `${label} CDF over ${records.length} requests: ${MARKS.map(([p]) => `${p} ${sig3(num(stats[p]))} ${unit}`).join(', ')}`);
  }
}

function renderPercentiles(result) {
  const dists = distributionList();
  const stats = dists.length ? dists[0].stats : [];
  const head = document.createElement('tr');
  head.append(cell('th', 'Metric'), ...stats.map((l) => cell('th', l, 'num')), cell('th', 'Unit'));
  for (const th of head.children) th.scope = 'col';
  $('serve-pct-table').querySelector('thead').replaceChildren(head);
  const rows = dists.map((d) => [d, valueAt(result, d.pointer)]).filter(([, v]) => v && typeof v === 'object').map(([d, v]) => {
    const tr = document.createElement('tr');
    tr.title = d.description || d.label;
    const th = cell('th', d.label);
    th.scope = 'row';
    tr.append(th);
    for (const st of stats) {
      const td = cell('td', undefined, 'num');
      td.append(metricSpan(`serve.${d.id}.${st}`, num(v[st])));
      tr.append(td);
    }
    tr.append(cell('td', unitName(d.unit), 'unitcell'));
    return tr;
  });
  $('serve-pct-table').querySelector('tbody').replaceChildren(...rows);
}

// ---- time series ------------------------------------------------------------------------

function seriesOf(ts, key, scale = 1) {
  const t = Array.isArray(ts.t_s) ? ts.t_s : [];
  const v = Array.isArray(ts[key]) ? ts[key] : [];
  return t.map((x, i) => ({ x, y: num(v[i]) * scale })).filter((p) => Number.isFinite(p.y));
}

function renderTimeSeries(result) {
  const ts = (result && result.time_series) || {};
  const bucket = num(ts.bucket_s);
  const charts = [
    ['queue', 'requests', [['running', 'Running', '#2f6fdb'], ['waiting', 'Waiting', '#d9534f'], ['batch_size', 'Batch size', '#17a589']]],
    ['tokens', 'tokens per step', [['tokens_per_step', 'Tokens per step', '#8e6fd8']]],
    ['kv', 'KV blocks in use (%)', [['kv_block_utilization', 'KV blocks in use', '#17a589', 100]]],
    ['util', '% of peak', [['mfu', 'MFU (compute)', '#2f6fdb', 100], ['mbu', 'MBU (HBM bandwidth)', '#e0a526', 100]]],
  ];
  for (const [id, yLabel, defs] of charts) {
    const view = chartView(id, $(`chart-${id}`), { height: 200 });
    const series = defs.map(([key, label, color, scale]) => ({ label, color, line: true, pointRadius: 0, points: seriesOf(ts, key, scale || 1) }))
      .filter((s) => s.points.length);
    if (!series.length) {
      view.clear(`${yLabel}: no time series`);
      continue;
    }
    const peak = (s) => s.points.reduce((a, p) => Math.max(a, p.y), 0);
    view.render(() => xyConfig({ series, xLabel: 'simulated time (s)', yLabel, legend: series.length > 1 }),
      `${series.map((s) => `${s.label}: peak ${sig3(peak(s))}`).join(', ')}; means over ${sig3(bucket)} s buckets`);
  }
}

// ---- busy time and memory ---------------------------------------------------------------

function renderBusy(result) {
  const view = chartView('busy', $('chart-busy'), { height: 200 });
  const own = get(result, 'metrics.gpu.busy_time_s_by_family') || {};
  const base = result.compare && result.compare.baseline ? get(result.compare.baseline, 'metrics.gpu.busy_time_s_by_family') : null;
  const sets = [['This scenario', own]];
  if (base && typeof base === 'object') sets.push([`Baseline: ${String(result.compare.label || 'compare')}`, base]);
  const families = [...new Set(sets.flatMap(([, o]) => Object.keys(o)))];
  if (!families.length) return view.clear('GPU busy time: no data');
  view.render(() => stackedBarsConfig({
    categories: sets.map(([l]) => l),
    series: families.map((f) => ({ key: f, label: f, values: sets.map(([, o]) => num(o[f]) || 0) })),
    unit: 's',
  }), `GPU busy time by kernel family (seconds, all GPUs): ${families.map((f) => `${f} ${sig3(num(own[f]))}`).join(', ')}`);
}

// The memory parts of a pool, in stacking order; words from the engine's catalogue.
const MEMORY = ['weights_GiB', 'kv_cache_GiB', 'activations_GiB', 'draft_weights_GiB', 'lora_adapters_GiB',
  'runtime_overhead_GiB', 'unused_GiB'];
const memoryWords = (id) => [id, memoryPart('serving', id).label];

function renderMemory(result) {
  const pools = Array.isArray(result.memory_per_gpu) ? result.memory_per_gpu : [];
  const view = chartView('serve-memory', $('chart-serve-memory'), { height: 90 + 40 * Math.max(1, pools.length) });
  const present = MEMORY.map(memoryWords).filter(([k]) => pools.some((p) => num(p[k]) > 0));
  const cap = Math.max(0, ...pools.map((p) => num(p.capacity_GiB) || 0));
  if (!pools.length || !present.length) view.clear('Memory per GPU: no data');
  else {
    view.render(() => stackedBarsConfig({
      categories: pools.map((p) => `Pool ${String(p.pool)}`),
      series: present.map(([key, label]) => ({ key: key === 'unused_GiB' ? 'free_GiB' : key, label, values: pools.map((p) => num(p[key]) || 0) })),
      unit: 'GiB',
      max: cap || undefined,
    }), `Memory per GPU: ${pools.map((p) => `${p.pool}: ${present.map(([k, l]) => `${l} ${sig3(num(p[k]))}`).join(', ')} of ${sig3(num(p.capacity_GiB))} GiB`).join('; ')}`);
  }
  const head = document.createElement('tr');
  head.append(cell('th', 'GiB per GPU'), ...pools.map((p) => cell('th', String(p.pool), 'num')));
  for (const th of head.children) th.scope = 'col';
  $('serve-memory-table').querySelector('thead').replaceChildren(head);
  const rows = [...present, memoryWords('usable_GiB'), memoryWords('capacity_GiB')].map(([k, label]) => {
    const tr = document.createElement('tr');
    const th = cell('th', label);
    th.scope = 'row';
    tr.append(th, ...pools.map((p, i) => {
      const td = cell('td', undefined, 'num');
      td.append(metricSpan(`serve.memory.${i}.${k}`, num(p[k])));
      return td;
    }));
    return tr;
  });
  $('serve-memory-table').querySelector('tbody').replaceChildren(...rows);
}

// ---- tables -----------------------------------------------------------------------------

function renderKeyMetrics(result) {
  const list = Array.isArray(result && result.key_metrics) ? result.key_metrics.filter((k) => k && typeof k === 'object') : [];
  const rows = list.map((k) => (typeof k.value === 'number'
    ? row(String(k.label || k.id), `serve.key.${k.id}`, k.value, String(k.unit || ''), k.id)
    : (() => {
      const tr = document.createElement('tr');
      const th = cell('th', String(k.label || k.id));
      th.scope = 'row';
      tr.append(th, cell('td', k.value === null || k.value === undefined ? '—' : String(k.value), 'num'), cell('td', String(k.unit || ''), 'unitcell'));
      return tr;
    })()));
  $('serve-key-table').querySelector('tbody').replaceChildren(...rows);
  $('serve-key-empty').hidden = rows.length > 0;
}

// More numbers of the run, as ids of the engine's metric catalogue.
const FACTS = ['requests_per_s', 'input_tokens_per_s', 'total_tokens_per_s', 'running_mean', 'running_max',
  'queue_depth_max', 'batch_size_mean', 'kv_peak_utilization', 'kv_fragmentation', 'preemptions', 'gpu_utilization',
  'mfu_wall', 'mfu_busy', 'mfu_step_p50', 'mfu_step_p90', 'mbu_wall', 'mbu_busy', 'mbu_step_p50', 'mbu_step_p90',
  'mean_power_per_gpu_W', 'requests_completed', 'duration_s', 'usd_per_million_output_tokens', 'energy_per_output_token_J'];

function renderFacts(result) {
  const rows = FACTS.map((id) => metricInfo('serving', id)).filter((m) => typeof metricValue(result, m) === 'number')
    .map((m) => row(m.label, `serve.${metricKey(m)}`, metricValue(result, m), unitName(m.unit), m.description || metricKey(m)));
  $('serve-facts-table').querySelector('tbody').replaceChildren(...rows);
}

// Multi-turn sessions and KV offload tiers: the catalogue's metrics that need
// serving.workload.sessions or serving.kv_cache.offload, where the run has them;
// a tier's metric is labelled with the tier's own name from the result.
const SESSION_AND_TIER_NEEDS = new Set(['sessions', 'kv_offload']);

function tierLabel(result, m) {
  const tier = /^(\/metrics\/kv_offload\/tiers\/\d+)\//.exec(m.pointer);
  const name = tier ? valueAt(result, `${tier[1]}/name`) : undefined;
  return typeof name === 'string' && name ? `${m.label} (${name})` : m.label;
}

function renderSessionsAndTiers(result) {
  const rows = metricList('serving').filter((m) => SESSION_AND_TIER_NEEDS.has(m.needs) && typeof metricValue(result, m) === 'number')
    .map((m) => row(tierLabel(result, m), `serve.${metricKey(m)}`, metricValue(result, m), unitName(m.unit), m.description || metricKey(m)));
  $('serve-sessions-card').hidden = rows.length === 0;
  $('serve-sessions-table').querySelector('tbody').replaceChildren(...rows);
}

function renderCompare(result) {
  const c = result && result.compare;
  const card = $('serve-compare-card');
  card.hidden = !c;
  if (!c) {
    $('serve-compare-table').querySelector('tbody').replaceChildren();
    return;
  }
  $('serve-compare-label').textContent = `against the baseline “${String(c.label || '')}”`;
  $('serve-compare-meaning').textContent = String(c.ratio_meaning || '');
  const head = document.createElement('tr');
  head.append(cell('th', 'Metric'), cell('th', 'Ratio', 'num'));
  for (const th of head.children) th.scope = 'col';
  $('serve-compare-table').querySelector('thead').replaceChildren(head);
  const rows = [];
  for (const group of ['speedup', 'ratio']) {
    for (const [k, v] of Object.entries(c[group] || {})) {
      const entry = metricAt('serving', `/compare/${group}/${k}`);
      const label = entry ? entry.label : `${group}: ${k}`;
      if (typeof v === 'number') rows.push(row(label, `serve.compare.${group}.${k}`, v, unitName(entry ? entry.unit : 'x'), k));
      else {
        const tr = document.createElement('tr');
        const th = cell('th', label);
        th.scope = 'row';
        tr.append(th, cell('td', '—', 'num'), cell('td', '', 'unitcell'));
        rows.push(tr);
      }
    }
  }
  $('serve-compare-table').querySelector('tbody').replaceChildren(...rows);
}

function renderMaxQps(result) {
  const mq = result && result.max_qps;
  $('serve-maxqps-card').hidden = !mq;
  if (!mq) {
    $('serve-maxqps-table').querySelector('tbody').replaceChildren();
    return;
  }
  $('serve-maxqps-note').textContent = `${String(mq.criterion || '')}${mq.note ? ` (${String(mq.note)})` : ''}`;
  const head = document.createElement('tr');
  head.append(cell('th', 'QPS', 'num'), cell('th', 'SLO attainment', 'num'), cell('th', 'All completed'), cell('th', 'Meets the SLO'));
  for (const th of head.children) th.scope = 'col';
  $('serve-maxqps-table').querySelector('thead').replaceChildren(head);
  const rows = (Array.isArray(mq.runs) ? mq.runs : []).map((r, i) => {
    const tr = document.createElement('tr');
    const a = cell('td', undefined, 'num');
    a.append(metricSpan(`serve.max_qps.${i}.qps`, num(r.qps)));
    const b = cell('td', undefined, 'num');
    b.append(metricSpan(`serve.max_qps.${i}.slo_attainment`, num(r.slo_attainment)));
    tr.append(a, b, cell('td', r.completed_all ? 'yes' : 'no'), cell('td', r.meets_slo ? 'yes' : 'no'));
    return tr;
  });
  $('serve-maxqps-table').querySelector('tbody').replaceChildren(...rows);
}

// ---- the view ---------------------------------------------------------------------------

/** Flat numbers a sweep can plot: every catalogued serving metric the result has, by its id. */
function flatMetrics(result) {
  const out = {};
  for (const m of metricList('serving')) {
    const v = metricValue(result, m);
    if (typeof v === 'number' && Number.isFinite(v)) out[m.id] = v;
  }
  return out;
}

let lastRecords = { result: null, records: [] };

function recordsOf(result) {
  if (lastRecords.result !== result) lastRecords = { result, records: requestRecords(result) };
  return lastRecords.records;
}

export const view = {
  kind: 'serving_simulation',
  title: 'Serving simulation',
  section: 'serving-view',
  charts: [
    { id: 'cdf-ttft', title: 'TTFT distribution', unit: 'CDF, ms', what: 'TTFT distribution chart' },
    { id: 'cdf-tpot', title: 'TPOT distribution', unit: 'CDF, ms', what: 'TPOT distribution chart' },
    { id: 'cdf-e2e', title: 'E2E latency distribution', unit: 'CDF, s', what: 'E2E distribution chart' },
    { id: 'queue', title: 'Requests and batch', unit: 'mean per time bucket', what: 'requests and batch chart' },
    { id: 'kv', title: 'KV-cache blocks in use', unit: '%', what: 'KV-cache use chart' },
    { id: 'tokens', title: 'Tokens per step', unit: 'mean per time bucket', what: 'tokens per step chart' },
    { id: 'busy', title: 'GPU busy time by kernel family', unit: 's', what: 'GPU busy time chart' },
    { id: 'util', title: 'GPU utilization per step: MFU and MBU', unit: '% of peak, mean per time bucket', what: 'GPU utilization chart', tip: "MFU: the steps' FLOPs at dense peak / their time; MBU: their HBM bytes at peak bandwidth / their time. The busy fraction counts a step as busy however little of the GPU it uses" },
    { id: 'serve-memory', title: 'Memory per GPU', unit: 'GiB', what: 'memory chart' },
  ],
  embedCharts: ['cdf-ttft', 'queue'],
  csvLabel: 'Requests CSV',
  csvTitle: 'Download one CSV row per request (arrival, first token, completion, TTFT, TPOT, E2E…)',

  headline(result) {
    return headlineEntries(result);
  },

  summary(result, ctx) {
    const d = (result && result.deployment) || {};
    const w = (result && result.workload) || {};
    const model = (result && result.model && (result.model.name || result.model.id)) || 'model';
    const gpus = num(d.gpus);
    const pools = Array.isArray(d.pools) ? d.pools : [];
    const gpu = pools.length ? pools[0].gpu : '';
    const trunc = result && result.requests && result.requests.truncated ? ' (request records truncated)' : '';
    return `${model} on ${Number.isFinite(gpus) ? gpus : '?'} × ${gpuName(gpu, ctx)}: ${w.requests ?? '?'} requests, ${w.arrival || '?'} arrivals, ` +
      `${d.scheduler || '?'} scheduler, ${d.kv_allocation || '?'} KV cache, router ${d.router || '?'}${trunc}`;
  },

  render(result, warnings) {
    const records = recordsOf(result);
    renderKpis(result);
    renderVerdict(result);
    renderCdfs(result, records);
    renderPercentiles(result);
    renderTimeSeries(result);
    renderBusy(result);
    renderMemory(result);
    renderKeyMetrics(result);
    renderFacts(result);
    renderSessionsAndTiers(result);
    renderCompare(result);
    renderMaxQps(result);
    const { requests, ...rest } = result || {};
    $('serving-json').textContent = JSON.stringify({ ...rest, warnings: warnings || rest.warnings }, null, 2);
  },

  /** Wires the view's own controls (none yet besides the chart exports, handled by the page). */

  sweepMetrics(result) {
    return flatMetrics(result);
  },

  rows(result) {
    const rows = recordsOf(result).map((r) => ({ ...r }));
    return [{ name: 'requests', rows }];
  },

  compare(result) {
    const out = [];
    for (const [k, v] of numericLeaves(result && result.metrics)) out.push(['metrics', k, v]);
    for (const [i, p] of ((result && result.memory_per_gpu) || []).entries()) {
      for (const [k, v] of numericLeaves(p)) out.push(['memory_per_gpu', `${i}.${k}`, v]);
    }
    return out;
  },
};
