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
import { numericLeaves } from '../kinds.js';
import { fixed3, metricLabel, sig3 } from '../format.js';
import { $, cell, metricSpan } from '../dom.js';

const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : NaN);

function row(label, key, value, unit, title) {
  const tr = document.createElement('tr');
  if (title) tr.title = title;
  const th = cell('th', label);
  th.scope = 'row';
  const td = cell('td', undefined, 'num');
  td.append(metricSpan(key, value));
  tr.append(th, td, cell('td', unit || '', 'unitcell'));
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

const HEADLINE = [
  ['ttft_p50_ms', 'TTFT p50', 'ms', 'ttft_ms.p50', 'Time to first token, median over requests'],
  ['ttft_p99_ms', 'TTFT p99', 'ms', 'ttft_ms.p99', 'Time to first token, 99th percentile'],
  ['tpot_p50_ms', 'TPOT p50', 'ms', 'tpot_ms.p50', 'Time per output token after the first, median over requests'],
  ['e2e_p99_s', 'E2E p99', 's', 'e2e_s.p99', 'End-to-end latency, 99th percentile'],
  ['output_tokens_per_s', 'Output throughput', 'tok/s', 'throughput.output_tokens_per_s', 'Output tokens per second, whole cluster'],
  ['output_tokens_per_s_per_gpu', 'Per GPU', 'tok/s/GPU', 'throughput.output_tokens_per_s_per_gpu', 'Output tokens per second per GPU'],
  ['goodput_requests_per_s', 'Goodput', 'req/s', 'goodput.requests_per_s', 'Requests per second that meet the SLO'],
  ['slo_attainment_pct', 'SLO attainment', '%', null, 'Share of requests that meet the SLO'],
];

function headlineEntries(result) {
  const m = (result && result.metrics) || {};
  const out = HEADLINE.map(([key, label, unit, path, title]) => ({
    key, label, unit, title,
    value: path ? num(get(m, path)) : num(get(m, 'goodput.slo_attainment')) * 100,
  }));
  const mq = result && result.max_qps;
  if (mq && typeof mq.qps === 'number') {
    out.push({ key: 'max_qps', label: 'Max QPS under SLO', unit: 'req/s', title: mq.criterion || 'Highest arrival rate that meets the SLO', value: mq.qps });
  }
  return out;
}

function renderKpis(result) {
  const cards = headlineEntries(result).map((h) => {
    const card = cell('div', undefined, 'kpi panel');
    card.title = h.title;
    const value = cell('div', undefined, 'kpi-value');
    value.append(metricSpan(`serve.${h.key}`, h.value), cell('span', h.unit, 'unit'));
    card.append(cell('div', h.label, 'kpi-label'), value);
    return card;
  });
  $('serving-kpis').replaceChildren(...cards);
}

// ---- distributions ----------------------------------------------------------------------

const DISTS = [
  ['ttft', 'cdf-ttft', 'TTFT', 'ms', 'ttft_ms', 'ttft_ms', 1],
  ['tpot', 'cdf-tpot', 'TPOT', 'ms', 'tpot_ms', 'tpot_ms', 1],
  ['e2e', 'cdf-e2e', 'E2E latency', 's', 'e2e_s', 'e2e_s', 1],
];
const MARKS = [['p50', '#17a589'], ['p90', '#e0a526'], ['p99', '#d9534f']];

function renderCdfs(result, records) {
  const m = (result && result.metrics) || {};
  for (const [, id, label, unit, field, metricKey] of DISTS) {
    const view = chartView(id, $(`chart-${id}`), { height: 220 });
    const pts = cdfPoints(records.map((r) => r[field]));
    if (!pts.length) {
      view.clear(`${label} distribution: no completed requests`);
      continue;
    }
    const stats = m[metricKey] || {};
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

const STATS = [['mean', 'mean'], ['p50', 'p50'], ['p90', 'p90'], ['p99', 'p99'], ['max', 'max']];
const PCT_ROWS = [
  ['ttft_ms', 'TTFT', 'ms'], ['tpot_ms', 'TPOT', 'ms'], ['itl_ms', 'Inter-token latency', 'ms'],
  ['e2e_s', 'E2E latency', 's'], ['queueing_ms', 'Queueing', 'ms'],
];

function renderPercentiles(result) {
  const m = (result && result.metrics) || {};
  const head = document.createElement('tr');
  head.append(cell('th', 'Metric'), ...STATS.map(([, l]) => cell('th', l, 'num')), cell('th', 'Unit'));
  for (const th of head.children) th.scope = 'col';
  $('serve-pct-table').querySelector('thead').replaceChildren(head);
  const rows = PCT_ROWS.filter(([k]) => m[k] && typeof m[k] === 'object').map(([k, label, unit]) => {
    const tr = document.createElement('tr');
    const th = cell('th', label);
    th.scope = 'row';
    tr.append(th);
    for (const [s] of STATS) {
      const td = cell('td', undefined, 'num');
      td.append(metricSpan(`serve.${k}.${s}`, num(m[k][s])));
      tr.append(td);
    }
    tr.append(cell('td', unit, 'unitcell'));
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

const MEMORY = [
  ['weights_GiB', 'Weights'], ['kv_cache_GiB', 'KV cache'], ['activations_GiB', 'Activations'],
  ['draft_weights_GiB', 'Draft model'], ['lora_adapters_GiB', 'LoRA adapters'], ['runtime_overhead_GiB', 'Runtime'],
  ['unused_GiB', 'Unused'],
];

function renderMemory(result) {
  const pools = Array.isArray(result.memory_per_gpu) ? result.memory_per_gpu : [];
  const view = chartView('serve-memory', $('chart-serve-memory'), { height: 90 + 40 * Math.max(1, pools.length) });
  const present = MEMORY.filter(([k]) => pools.some((p) => num(p[k]) > 0));
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
  const rows = [...present, ['usable_GiB', 'Usable (utilization × capacity)'], ['capacity_GiB', 'Capacity']].map(([k, label]) => {
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

const FACTS = [
  ['throughput.requests_per_s', 'Requests', 'req/s'],
  ['throughput.input_tokens_per_s', 'Input tokens', 'tok/s'],
  ['throughput.total_tokens_per_s', 'Total tokens', 'tok/s'],
  ['concurrency.running_mean', 'Running (mean)', 'req'],
  ['concurrency.running_max', 'Running (max)', 'req'],
  ['concurrency.waiting_max', 'Queue depth (max)', 'req'],
  ['concurrency.batch_size_mean', 'Batch size (mean)', 'seq'],
  ['kv_cache.peak_block_utilization', 'KV blocks, peak use', 'fraction'],
  ['kv_cache.fragmentation', 'KV fragmentation', 'fraction'],
  ['kv_cache.preemptions', 'Preemptions', 'count'],
  ['gpu.busy_fraction', 'GPU busy (any step running)', 'fraction'],
  ['gpu.mfu.over_wall_time', 'MFU over the run (compute)', 'fraction'],
  ['gpu.mfu.over_busy_time', 'MFU while busy', 'fraction'],
  ['gpu.mfu.per_step.p50', 'MFU per step, p50', 'fraction'],
  ['gpu.mfu.per_step.p90', 'MFU per step, p90', 'fraction'],
  ['gpu.mbu.over_wall_time', 'MBU over the run (HBM bandwidth)', 'fraction'],
  ['gpu.mbu.over_busy_time', 'MBU while busy', 'fraction'],
  ['gpu.mbu.per_step.p50', 'MBU per step, p50', 'fraction'],
  ['gpu.mbu.per_step.p90', 'MBU per step, p90', 'fraction'],
  ['energy.mean_power_per_gpu_W', 'Mean power per GPU', 'W'],
  ['requests.completed', 'Completed requests', 'count'],
  ['duration_s', 'Simulated duration', 's'],
  ['cost.usd_per_million_output_tokens', 'Cost per million output tokens', 'USD'],
  ['energy.per_output_token_J', 'Energy per output token', 'J'],
];

function renderFacts(result) {
  const m = (result && result.metrics) || {};
  const rows = FACTS.filter(([p]) => typeof get(m, p) === 'number').map(([p, label, unit]) => row(label, `serve.${p}`, get(m, p), unit, p));
  $('serve-facts-table').querySelector('tbody').replaceChildren(...rows);
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
      const label = `${group === 'speedup' ? 'Speedup' : 'Ratio'}: ${metricLabel(k).label}`;
      if (typeof v === 'number') rows.push(row(label, `serve.compare.${group}.${k}`, v, '×', k));
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

/** Flat numbers a sweep can plot (names as the engine's key-metric registry). */
function flatMetrics(result) {
  const m = (result && result.metrics) || {};
  const out = {};
  const put = (k, v) => { if (typeof v === 'number' && Number.isFinite(v)) out[k] = v; };
  for (const [k, unit] of [['ttft_ms', 'ms'], ['tpot_ms', 'ms'], ['itl_ms', 'ms'], ['e2e_s', 's'], ['queueing_ms', 'ms']]) {
    const stem = k.slice(0, -unit.length - 1);
    for (const s of ['mean', 'p50', 'p90', 'p99']) put(`${stem}_${s}_${unit}`, get(m, `${k}.${s}`));
  }
  put('output_tokens_per_s', get(m, 'throughput.output_tokens_per_s'));
  put('output_tokens_per_s_per_gpu', get(m, 'throughput.output_tokens_per_s_per_gpu'));
  put('total_tokens_per_s', get(m, 'throughput.total_tokens_per_s'));
  put('requests_per_s', get(m, 'throughput.requests_per_s'));
  put('goodput_requests_per_s', get(m, 'goodput.requests_per_s'));
  put('slo_attainment', get(m, 'goodput.slo_attainment'));
  put('running_mean', get(m, 'concurrency.running_mean'));
  put('queue_depth_max', get(m, 'concurrency.waiting_max'));
  put('kv_peak_block_utilization', get(m, 'kv_cache.peak_block_utilization'));
  put('preemptions', get(m, 'kv_cache.preemptions'));
  if (result && result.max_qps) put('max_qps', result.max_qps.qps);
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
    { id: 'cdf-ttft', title: 'TTFT distribution' },
    { id: 'cdf-tpot', title: 'TPOT distribution' },
    { id: 'cdf-e2e', title: 'E2E distribution' },
    { id: 'queue', title: 'Requests and batch' },
    { id: 'kv', title: 'KV-cache use' },
    { id: 'tokens', title: 'Tokens per step' },
    { id: 'busy', title: 'GPU busy time by kernel family' },
    { id: 'util', title: 'GPU utilization per step (MFU, MBU)' },
    { id: 'serve-memory', title: 'Memory per GPU' },
  ],
  embedCharts: ['cdf-ttft', 'queue'],
  csvLabel: 'Requests CSV',
  csvTitle: 'Download one CSV row per request (arrival, first token, completion, TTFT, TPOT, E2E…)',

  headline(result) {
    return headlineEntries(result);
  },

  summary(result) {
    const d = (result && result.deployment) || {};
    const w = (result && result.workload) || {};
    const model = (result && result.model && (result.model.name || result.model.id)) || 'model';
    const gpus = num(d.gpus);
    const pools = Array.isArray(d.pools) ? d.pools : [];
    const gpu = pools.length ? pools[0].gpu : '';
    const trunc = result && result.requests && result.requests.truncated ? ' (request records truncated)' : '';
    return `${model} on ${Number.isFinite(gpus) ? gpus : '?'} × ${gpu}: ${w.requests ?? '?'} requests, ${w.arrival || '?'} arrivals, ` +
      `${d.scheduler || '?'} scheduler, ${d.kv_allocation || '?'} KV cache, router ${d.router || '?'}${trunc}`;
  },

  render(result, warnings) {
    const records = recordsOf(result);
    renderKpis(result);
    renderCdfs(result, records);
    renderPercentiles(result);
    renderTimeSeries(result);
    renderBusy(result);
    renderMemory(result);
    renderKeyMetrics(result);
    renderFacts(result);
    renderCompare(result);
    renderMaxQps(result);
    const { requests, ...rest } = result || {};
    $('serving-json').textContent = JSON.stringify({ ...rest, warnings: warnings || rest.warnings }, null, 2);
  },

  /** Wires the view's own controls (none yet besides the chart exports, handled by the page). */
  bind() {},

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
