// Sweeps: one numeric form field over a range or a list, each point a full
// engine run on a small pool of workers; the chosen metric against the swept
// value, and a throughput-vs-latency view with the Pareto front.
import { EnginePool } from './pool.js';
import { fieldsOf, fieldLabel, fieldApplies, writeField, getAt } from './form.js';
import { chartView } from './charts/registry.js';
import { xyConfig, paretoFront } from './charts/xy.js';
import { viewFor } from './kinds.js';
import { metricLabel, sig3, fixed3, unitName } from './format.js';
import { catalogueKind, hasCatalogue, metricList } from './catalogue.js';
import { toCsv, download } from './export.js';
import { $, cell, setRunStatus, showFormError } from './dom.js';
import { defaultIntraNode, defaultInterNode, nodeGpus } from './gpu-links.js';

export const MAX_POINTS = 200;

const isThroughput = (k) => /per_s(_per_gpu)?$/.test(k);
const isLatency = (k) => /_(ms|us|s)$/.test(k) && !isThroughput(k);

function option(value, text) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = text;
  return o;
}

/**
 * The values of a sweep spec: {mode: 'range', start, stop, steps, scale} or
 * {mode: 'list', list}. Integer fields are rounded and deduplicated. Returns
 * {values} or {error, input} (the id of the input at fault).
 */
export function sweepValues(spec, integer = true) {
  let values;
  if (spec.mode === 'list') {
    const tokens = String(spec.list || '').split(/[\s,;]+/).filter(Boolean);
    if (!tokens.length) return { error: 'enter at least one value, separated by commas', input: 'sweep-list' };
    values = [];
    for (const t of tokens) {
      const v = Number(t);
      if (!Number.isFinite(v)) return { error: `"${t.slice(0, 20)}" is not a number`, input: 'sweep-list' };
      values.push(v);
    }
  } else {
    const start = Number(spec.start);
    const stop = Number(spec.stop);
    const steps = Number(spec.steps);
    if (String(spec.start).trim() === '' || !Number.isFinite(start)) return { error: 'start must be a number', input: 'sweep-start' };
    if (String(spec.stop).trim() === '' || !Number.isFinite(stop)) return { error: 'stop must be a number', input: 'sweep-stop' };
    if (!Number.isInteger(steps) || steps < 2 || steps > MAX_POINTS) return { error: `steps must be a whole number from 2 to ${MAX_POINTS}`, input: 'sweep-steps' };
    const log = spec.scale === 'log';
    if (log && !(start > 0 && stop > 0)) return { error: 'a log scale needs start and stop above 0', input: 'sweep-start' };
    values = Array.from({ length: steps }, (_, i) => {
      const f = i / (steps - 1);
      return log ? Math.exp(Math.log(start) + f * (Math.log(stop) - Math.log(start))) : start + f * (stop - start);
    });
  }
  if (integer) {
    const bad = values.find((v) => spec.mode === 'list' && !Number.isInteger(v));
    if (bad !== undefined) return { error: `${bad} is not a whole number; this field takes integers`, input: 'sweep-list' };
    values = values.map((v) => Math.round(v));
  }
  values = [...new Set(values)];
  if (values.length > MAX_POINTS) return { error: `at most ${MAX_POINTS} points per sweep (got ${values.length})`, input: spec.mode === 'list' ? 'sweep-list' : 'sweep-steps' };
  return { values };
}

/** The numbers of a result a sweep can plot (the view's choice, else result.metrics). */
export function metricsOf(result) {
  if (!result) return {};
  const v = viewFor(result);
  const m = v.sweepMetrics ? v.sweepMetrics(result) : result.metrics;
  return m && typeof m === 'object' ? m : {};
}

let wordsKind = null;  // the catalogue kind of the results being swept

/** A sweep metric's words: the catalogue's for a catalogued kind, else read from the key (result kinds the engine does not catalogue). */
function sweepWords(key) {
  const m = wordsKind && hasCatalogue() ? metricList(wordsKind).find((e) => e.id === key) : null;
  return m ? { label: m.label, unit: unitName(m.unit) } : metricLabel(key);
}

function metricNames(result) {
  const m = metricsOf(result);
  return Object.keys(m).filter((k) => typeof m[k] === 'number' && Number.isFinite(m[k]));
}

/**
 * The hardware of a training scenario after a parallelism change: dp×tp×pp×cp
 * GPUs, min(the GPU's node_gpus capped by its link's domain, that) per node (or the largest divisor of it that keeps
 * whole TP groups in a node when it does not divide it) and nodes accordingly; links added
 * where the new shape needs one and the scenario has none.
 */
export function trainingHardware(s, getGpu = () => null, getLink = () => null) {
  const par = (s.training && s.training.parallelism) || {};
  const deg = (k) => (par[k] === undefined ? 1 : par[k]);
  const [dp, tp, pp, cp] = ['dp', 'tp', 'pp', 'cp'].map(deg);
  if (![dp, tp, pp, cp].every((v) => Number.isInteger(v) && v >= 1)) return;  // the engine reports it
  const n = dp * tp * pp * cp;
  const hw = { ...(s.hardware || {}) };
  const gpu = typeof hw.gpu === 'object' ? hw.gpu : getGpu(hw.gpu);
  // The GPU's own server size, no more than its intra-node link joins (the
  // scenario's link, else the GPU's own); a custom GPU stating none: all in
  // one node, for the engine to check.
  const link = hw.intra_node && typeof hw.intra_node === 'object' ? hw.intra_node : getLink(hw.intra_node || defaultIntraNode(gpu));
  const server = nodeGpus(gpu, link || undefined) ?? n;
  let perNode = Math.min(server, n);
  if (n % perNode !== 0) {
    for (let d = server; d >= 1; d--) {
      if (n % d === 0 && (d % tp === 0 || tp > server)) {
        perNode = d;
        break;
      }
    }
  }
  const nodes = Math.ceil(n / perNode);
  hw.gpus_per_node = perNode;
  if (nodes > 1 || hw.nodes !== undefined) hw.nodes = nodes;
  if (perNode > 1 && !hw.intra_node) hw.intra_node = defaultIntraNode(gpu);
  if (nodes > 1 && !hw.inter_node) hw.inter_node = defaultInterNode(gpu);
  s.hardware = hw;
}

/**
 * The scenario of one sweep point: `value` written through the field. Serving:
 * TP×PP GPUs kept in step on one node. Training: a parallelism degree sets the
 * hardware to dp×tp×pp×cp GPUs (see trainingHardware).
 */
export function pointScenario(base, field, value, getGpu, getLink) {
  const s = structuredClone(base);
  writeField(s, field, value);
  if (field.gpus && getAt(s, '/training')) trainingHardware(s, getGpu, getLink);
  if (field.id === 'tp' || field.id === 'pp') {
    const par = (s.serving && s.serving.parallelism) || {};
    const hw = s.hardware || {};
    if (!(hw.nodes > 1) && Number.isInteger(par.tp || 1) && Number.isInteger(par.pp || 1)) {
      s.hardware = { ...hw, gpus_per_node: (par.tp || 1) * (par.pp || 1) };
    }
  }
  return s;
}

export class Sweep {
  /**
   * @param {{workerUrl: URL, getScenario: () => object, getCalibration?: () => object | null,
   *   onDone?: (ms: number) => void}} options  getCalibration: the applied cluster calibration every point uses
   */
  constructor({ workerUrl, getScenario, getGpu = () => null, getLink = () => null, getCalibration = () => null, onDone = () => {} }) {
    this.getCalibration = getCalibration;
    this.workerUrl = workerUrl;
    this.getScenario = getScenario;
    this.getGpu = getGpu;
    this.getLink = getLink;
    this.section = 'latency';
    this.onDone = onDone;
    this.pool = null;
    this.job = null;
    this.points = [];   // [{value, outcome}]
    this.field = null;
    this.metrics = [];
    this.lastDurationMs = null;
  }

  /** The numeric fields of the form's current section (serving or training). */
  get sweepable() {
    return fieldsOf(this.section).filter((f) => (f.kind === 'int' || f.kind === 'number') && !f.group);
  }

  fieldLabel(field) {
    return fieldLabel(field.id);
  }

  fillFields() {
    const sel = $('sweep-field');
    const keep = sel.value;
    const list = this.sweepable;
    sel.replaceChildren(...list.map((f) => option(f.id, this.fieldLabel(f))));
    const preferred = { training: 'train_mbs', simulate: 'sim_rate' }[this.section] || 'batch_size';
    sel.value = list.some((f) => f.id === keep) ? keep : preferred;
  }

  /** Shows the fields of a serving or a training scenario. */
  setSection(section) {
    if (section === this.section) return;
    this.section = section;
    this.fillFields();
  }

  init() {
    this.fillFields();
    $('sweep-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.run();
    });
    $('sweep-mode').addEventListener('change', () => this.showMode());
    $('sweep-field').addEventListener('change', () => this.suggestRange());
    $('sweep-cancel').addEventListener('click', () => this.cancel());
    $('sweep-metric').addEventListener('change', () => this.draw());
    $('pareto-x').addEventListener('change', () => this.draw());
    $('pareto-y').addEventListener('change', () => this.draw());
    $('sweep-csv').addEventListener('click', () => this.exportCsv());
    this.showMode();
  }

  /** Starts the workers ahead of the first sweep (called when the tab opens). */
  warm() {
    if (!this.pool) this.pool = new EnginePool(this.workerUrl);
    return this.pool.ready;
  }

  showMode() {
    const mode = $('sweep-mode').value;
    for (const el of document.querySelectorAll('#sweep-form [data-mode]')) el.hidden = el.dataset.mode !== mode;
  }

  suggestRange() {
    const field = this.sweepable.find((f) => f.id === $('sweep-field').value);
    const current = Number($(field.id).value) || 1;
    $('sweep-start').value = String(Math.max(1, current));
    $('sweep-stop').value = String(Math.max(1, current) * 16);
    $('sweep-steps').value = '5';
    $('sweep-scale').value = 'log';
  }

  /** Fills the metric pickers from a result's numeric metrics, keeping choices. */
  setMetrics(result) {
    const keys = metricNames(result);
    wordsKind = catalogueKind(result && result.kind);
    if (!keys.length || keys.join() === this.metrics.join()) return;
    this.metrics = keys;
    const fill = (id, list, preferred) => {
      const sel = $(id);
      const keep = sel.value;
      sel.replaceChildren(...list.map((k) => {
        const { label, unit } = sweepWords(k);
        return option(k, unit ? `${label} (${unit})` : label);
      }));
      sel.value = list.includes(keep) ? keep : (preferred.find((p) => list.includes(p)) || list[0] || '');
    };
    fill('sweep-metric', keys, ['output_tokens_per_s', 'tpot_ms', 'tokens_per_s_per_gpu']);
    const lat = keys.filter(isLatency);
    const thr = keys.filter(isThroughput);
    fill('pareto-x', lat.length ? lat : keys, ['tpot_ms', 'ttft_p99_ms', 'e2e_ms', 'step_time_ms']);
    fill('pareto-y', thr.length ? thr : keys, ['output_tokens_per_s', 'tokens_per_s_per_gpu']);
  }

  setStatus(state, text) {
    setRunStatus('sweep', state, text);
  }

  showError(message, inputId) {
    showFormError('sweep', message, inputId);
  }


  run() {
    if (this.job) return;
    const field = this.sweepable.find((f) => f.id === $('sweep-field').value);
    const spec = {
      mode: $('sweep-mode').value,
      start: $('sweep-start').value,
      stop: $('sweep-stop').value,
      steps: Number($('sweep-steps').value),
      scale: $('sweep-scale').value,
      list: $('sweep-list').value,
    };
    const { values, error, input } = sweepValues(spec, field.kind === 'int');
    if (error) {
      this.showError(`Sweep values: ${error}.`, input);
      return;
    }
    this.showError(null);
    const base = this.getScenario();
    if (!base) return;
    if (!fieldApplies(base, field)) {
      const process = getAt(base, '/serving/workload/arrival/process');
      this.showError(`${this.fieldLabel(field)} is not a parameter of ${process} arrivals: every point would be the same.`, 'sweep-field');
      return;
    }
    this.field = field;
    this.spec = spec;
    this.points = values.map((value) => ({ value, outcome: null }));
    this.warm();
    const t0 = performance.now();
    this.setStatus('running', `Running 0 / ${values.length} points on ${this.pool.size} workers…`);
    $('sweep-progress').value = 0;
    this.draw();
    let done = 0;
    const job = this.pool.map(values.map((v) => pointScenario(base, field, v, this.getGpu, this.getLink)), {
      onPoint: (i, outcome) => {
        this.points[i].outcome = outcome;
        done += 1;
        if (outcome.result) this.setMetrics(outcome.result);
        this.setStatus('running', `Running ${done} / ${values.length} points on ${this.pool.size} workers…`);
        this.draw();
      },
      onProgress: (p) => { $('sweep-progress').value = p; },
      calibration: this.getCalibration(),
    });
    this.job = job;
    job.promise.then(() => {
      this.job = null;
      this.lastDurationMs = performance.now() - t0;
      this.onDone(this.lastDurationMs);
      const failed = this.points.filter((p) => p.outcome && p.outcome.error).length;
      $('sweep-progress').value = 1;
      this.setStatus('done', `${values.length} points in ${Math.round(this.lastDurationMs)} ms` +
        (failed ? ` · ${failed} failed (see the table)` : ''));
      this.draw();
    }, () => {
      this.job = null;
      this.setStatus('cancelled', `Cancelled after ${done} / ${values.length} points`);
      this.draw();
    });
  }

  cancel() {
    if (this.job) this.job.cancel();
  }

  okPoints() {
    return this.points.filter((p) => p.outcome && p.outcome.result);
  }

  draw() {
    const field = this.field;
    const metric = $('sweep-metric').value;
    const xKey = $('pareto-x').value;
    const yKey = $('pareto-y').value;
    const ok = this.okPoints();
    const fieldName = field ? this.fieldLabel(field) : '';
    const m = sweepWords(metric);
    const yTitle = m.unit ? `${m.label} (${m.unit})` : m.label;
    $('sweep-chart-title').textContent = field ? `${m.label} vs ${fieldName}` : 'Sweep';

    const line = chartView('sweep', $('chart-sweep'), { height: 260 });
    const pts = ok.map((p) => ({ x: p.value, y: metricsOf(p.outcome.result)[metric], label: `${fieldName} = ${p.value}` }))
      .filter((p) => Number.isFinite(p.y));
    if (!pts.length) line.clear('Sweep: no points yet');
    else {
      const logX = this.spec && this.spec.scale === 'log' && this.spec.mode === 'range' && pts.every((p) => p.x > 0);
      line.render(() => xyConfig({
        series: [{ label: yTitle, points: pts, line: true, color: '#2f6fdb' }],
        xLabel: fieldName, yLabel: yTitle, logX, legend: false,
      }), `${yTitle} for ${pts.length} values of ${fieldName}: ${pts.map((p) => `${p.x} → ${sig3(p.y)}`).join(', ')}`);
    }

    const px = sweepWords(xKey);
    const py = sweepWords(yKey);
    const pareto = chartView('pareto', $('chart-pareto'), { height: 260 });
    const cloud = ok.map((p) => ({ x: metricsOf(p.outcome.result)[xKey], y: metricsOf(p.outcome.result)[yKey], label: `${fieldName} = ${p.value}`, value: p.value }))
      .filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y));
    const front = paretoFront(cloud);
    const onFront = new Set(front.map((p) => p.value));
    if (!cloud.length) pareto.clear('Throughput vs latency: no points yet');
    else {
      const xT = px.unit ? `${px.label} (${px.unit})` : px.label;
      const yT = py.unit ? `${py.label} (${py.unit})` : py.label;
      pareto.render(() => xyConfig({
        series: [
          { label: 'Pareto front', points: front, line: true, color: '#d9534f', pointRadius: 5, order: 0 },
          { label: 'Dominated', points: cloud.filter((p) => !onFront.has(p.value)), color: '#9aa6b8', order: 1 },
        ],
        xLabel: xT, yLabel: yT,
      }), `${yT} against ${xT} for ${cloud.length} sweep points; Pareto front: ${front.map((p) => p.label).join(', ')}`);
    }

    const head = $('sweep-table').querySelector('thead');
    const hr = document.createElement('tr');
    for (const [text, cls] of [[fieldName || 'Value', 'num'], [yTitle, 'num'], [`${px.label}`, 'num'], [`${py.label}`, 'num'], ['Pareto', ''], ['Status', '']]) {
      const th = cell('th', text, cls);
      th.scope = 'col';
      hr.append(th);
    }
    head.replaceChildren(hr);
    const rows = this.points.map((p) => {
      const tr = document.createElement('tr');
      const r = p.outcome && p.outcome.result;
      const metrics = metricsOf(r);
      tr.dataset.value = String(p.value);
      tr.dataset.state = !p.outcome ? 'pending' : (r ? 'ok' : 'error');
      const th = cell('th', String(p.value), 'num');
      th.scope = 'row';
      const front1 = r && onFront.has(p.value);
      tr.classList.toggle('on-front', Boolean(front1));
      const status = !p.outcome ? 'pending' : (r ? 'ok' : `${p.outcome.error.code || 'error'}: ${p.outcome.error.message || ''}`);
      tr.append(th, cell('td', fixed3(metrics[metric]), 'num'), cell('td', fixed3(metrics[xKey]), 'num'),
        cell('td', fixed3(metrics[yKey]), 'num'), cell('td', front1 ? 'yes' : '', 'front'),
        cell('td', status, r ? 'muted' : 'status-error'));
      return tr;
    });
    $('sweep-table').querySelector('tbody').replaceChildren(...rows);
    $('sweep-csv').disabled = !ok.length;
  }

  exportCsv() {
    const field = this.field;
    const rows = this.points.map((p) => {
      const r = p.outcome && p.outcome.result;
      return { [field.id]: p.value, ...metricsOf(r), error: p.outcome && p.outcome.error ? `${p.outcome.error.code}: ${p.outcome.error.message}` : '' };
    });
    download(`sightline-sweep-${field.id}.csv`, toCsv(rows), 'text/csv;charset=utf-8');
  }
}
