// Renders engine results, errors and run status into the page. Engine and user
// strings only ever go through textContent, never innerHTML.
import { fixed3, gpuName, integer, percent } from './format.js';
import { $, cell, metricSpan, setMetric } from './dom.js';
import { memoryPart } from './catalogue.js';


function setField(key, text) {
  for (const node of document.querySelectorAll(`[data-field="${CSS.escape(key)}"]`)) node.textContent = text;
}

export function showVersion(version) {
  setField('engine_version', version && version.engine_version ? String(version.engine_version) : 'unknown');
}

// ---- run status --------------------------------------------------------------

export function setStatus(state, text) {
  const status = $('run-status');
  status.dataset.state = state;
  status.textContent = text;
  const running = state === 'running';
  $('cancel').disabled = !running;
  $('results').setAttribute('aria-busy', running ? 'true' : 'false');
  $('output').classList.toggle('stale', running || state === 'error');
  if (!running) $('progress').value = state === 'done' ? 1 : 0;
}

export function setProgress(fraction) {
  $('progress').value = fraction;
  const status = $('run-status');
  if (status.dataset.state === 'running') status.textContent = `Running… ${Math.round(fraction * 100)}%`;
}

// ---- errors ------------------------------------------------------------------

export function showError(err, fieldLabel) {
  $('error-code').textContent = err.code || 'error';
  $('error-path').textContent = err.path || '(whole scenario)';
  $('error-message').textContent = (err.message || String(err)) + (fieldLabel ? ` (field: ${fieldLabel})` : '');
  $('error').hidden = false;
}

export function hideError() {
  $('error').hidden = true;
}

// ---- results -----------------------------------------------------------------

// The memory parts of a latency result, in stacking order; words from the engine's catalogue.
const MEMORY_PARTS = ['weights_GiB', 'kv_cache_GiB', 'activations_GiB', 'runtime_overhead_GiB', 'free_GiB'];

/** [[key, label, description]] of the latency memory parts. */
export function memoryRows() {
  return MEMORY_PARTS.map((id) => {
    const p = memoryPart('latency', id);
    return [id, p.label, p.description];
  });
}

function renderMemory(mem) {
  const body = $('memory-table').querySelector('tbody');
  const capacity = mem.capacity_GiB;
  const rows = [];
  for (const [key, label, title] of memoryRows()) {
    if (!(key in mem)) continue;
    const value = mem[key];
    const share = capacity > 0 ? value / capacity : NaN;
    const tr = document.createElement('tr');
    tr.title = title;
    const th = cell('th', undefined);
    th.scope = 'row';
    const swatch = cell('span', undefined, `swatch mem-${key}`);
    th.append(swatch, document.createTextNode(label));
    const td = cell('td', undefined, 'num');
    td.append(metricSpan(key, value));
    tr.append(th, td, cell('td', percent(share), 'num muted'));
    rows.push(tr);
  }
  const total = document.createElement('tr');
  total.className = 'total';
  const th = cell('th', memoryPart('latency', 'capacity_GiB').label);
  th.scope = 'row';
  const td = cell('td', undefined, 'num');
  td.append(metricSpan('capacity_GiB', capacity));
  total.append(th, td, cell('td', '100%', 'num muted'));
  rows.push(total);
  body.replaceChildren(...rows);
}

let lastResult = null;
let phase = 'decode';

function renderOps() {
  const body = $('ops-table').querySelector('tbody');
  const foot = $('ops-table').querySelector('tfoot');
  const breakdown = (lastResult && lastResult.breakdown) || {};
  const key = phase === 'decode' ? 'decode_per_step' : 'prefill';
  const ops = Array.isArray(breakdown[key]) ? breakdown[key] : [];
  const total = ops.reduce((s, op) => s + (Number(op.time_us) || 0), 0);
  const seen = new Map();
  const rows = ops.map((op) => {
    const name = String(op.name);
    const n = (seen.get(name) || 0) + 1;
    seen.set(name, n);
    const metricBase = `${phase}.${n > 1 ? `${name}#${n}` : name}`;
    const tr = document.createElement('tr');
    tr.dataset.op = name;
    const share = total > 0 ? op.time_us / total : 0;
    const nameCell = cell('th', name);
    nameCell.scope = 'row';
    const time = cell('td', undefined, 'num');
    time.append(metricSpan(`${metricBase}.time_us`, op.time_us));
    const shareCell = cell('td', undefined, 'share');
    const wrap = cell('div', undefined, 'share-wrap');
    const meter = cell('span', undefined, 'meter');
    const fill = cell('span', undefined, 'meter-fill');
    fill.style.width = `${(share * 100).toFixed(2)}%`;
    meter.append(fill);
    wrap.append(meter, cell('span', percent(share), 'muted'));
    shareCell.append(wrap);
    const gflop = cell('td', undefined, 'num');
    gflop.append(metricSpan(`${metricBase}.gflop`, op.flops / 1e9));
    const mib = cell('td', undefined, 'num');
    mib.append(metricSpan(`${metricBase}.mib`, op.bytes / 1048576));
    const bound = cell('td', undefined);
    const boundClass = ['compute', 'memory', 'communication'].includes(op.bound) ? op.bound : 'other';
    bound.append(cell('span', String(op.bound || '—'), `chip bound-${boundClass}`));
    tr.append(nameCell, cell('td', String(op.family || ''), 'muted'), cell('td', integer(op.count), 'num muted'), time, shareCell, gflop, mib, bound);
    return tr;
  });
  body.replaceChildren(...rows);
  const tr = document.createElement('tr');
  const label = cell('th', phase === 'decode' ? 'Total, one decode step' : 'Total, prefill');
  label.scope = 'row';
  label.colSpan = 3;
  const time = cell('td', undefined, 'num');
  time.append(metricSpan(`${phase}.total.time_us`, total));
  tr.append(label, time, cell('td', ''), cell('td', ''), cell('td', ''), cell('td', ''));
  foot.replaceChildren(tr);
  for (const p of ['decode', 'prefill']) $(`phase-${p}`).setAttribute('aria-pressed', String(p === phase));
}

export function setPhase(next) {
  phase = next === 'prefill' ? 'prefill' : 'decode';
  renderOps();
}

/** `ctx`: {scenario, gpus} (the GPU presets by id), for the GPU's name. */
function summaryText(r, ctx) {
  const d = r.deployment || {};
  const model = (r.model && (r.model.name || r.model.id)) || 'model';
  const params = r.model && Number.isFinite(r.model.params_B) ? ` (${r.model.params_B.toFixed(2)}B params)` : '';
  const w = r.workload || {};
  const gpu = gpuName(d.gpu, ctx);
  return `${model}${params} on ${d.gpus ?? '?'} × ${gpu} · TP ${d.tp ?? '?'} · PP ${d.pp ?? '?'} · ` +
    `weights ${d.weights ?? '?'}, KV ${d.kv_cache ?? '?'} · batch ${w.batch_size ?? '?'}, ` +
    `${w.prompt_tokens ?? '?'} → ${w.output_tokens ?? '?'} tokens`;
}

export function renderResult(result, warnings, ctx = {}) {
  lastResult = result;
  const m = result.metrics || {};
  // The throughput rows (the headline cards are the view's, from result.headline_metrics).
  for (const key of ['decode_tokens_per_s', 'prefill_tokens_per_s', 'prefill_mfu', 'decode_mbu', 'energy_J_per_output_token']) setMetric(key, m[key]);
  const floors = result.floors || {};
  for (const key of ['decode_weight_read_ms', 'prefill_compute_ms']) setMetric(key, floors[key]);
  renderMemory(result.memory_per_gpu || {});
  renderOps();
  setField('cost_tier', String(result.cost_tier ?? '—'));
  setField('result_engine_version', String(result.engine_version ?? '—'));
  setField('seed', String(result.seed ?? '—'));
  $('summary').textContent = summaryText(result, ctx);
  $('results').dataset.scenario = (result.scenario && result.scenario.id) || '';
  const list = $('warnings');
  const items = (warnings || []).map((w) => cell('li', typeof w === 'string' ? w : (w.message || JSON.stringify(w))));
  list.replaceChildren(...items);
  list.hidden = items.length === 0;
}
