// The Calibrate tab: the user's benchmark result files read by the engine
// (api::import_bench_file), a fit on the form's scenario in the worker
// (api::fit_calibration, the same as `sightline fit`), its calibrated and
// uncalibrated error on every run, and Apply. Loaded on first opening of the
// tab (app.js), so it costs the first result nothing. The page shows what the
// engine read and fitted; it computes none of it.
import { $, cell } from './dom.js';
import { display } from './format.js';
import * as store from './calibration-store.js';
import { EngineClient } from './engine-client.js';

const MAX_FILE_BYTES = 64 * 1024 * 1024;  // the engine's own cap (api kMaxBenchFileBytes) refuses past it too

let deps = null;       // {getBase, onApplied}
let client = null;     // the calibration worker's client, started with the first file
let files = [];        // [{name, text, runs | error}] in the order dropped
let fitted = null;     // the calibration of the last fit, until applied
let fitRun = null;     // {id} of the fit in flight

const pct = (x) => (typeof x === 'number' && Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '—');

/** A sentence for a run's load, as the file records it. */
function loadText(load) {
  if (!load) return '—';
  if (load.kind === 'rate') return `${display(load.rate_qps)} req/s, ${load.arrival} arrivals${load.concurrency ? `, at most ${load.concurrency} in flight` : ''}`;
  if (load.kind === 'burst') return 'every request at t = 0 (burst)';
  if (load.kind === 'closed_loop') return `closed loop, concurrency ${load.concurrency}`;
  if (load.kind === 'batch') return 'one closed batch (offline)';
  return load.kind;
}

function lengthText(lengths) {
  const n = (v) => (v === null || v === undefined ? 'not recorded' : `${display(v)} tokens`);
  return `prompt ${n(lengths.prompt_tokens_mean)}, output ${n(lengths.output_tokens_mean)}`;
}

function metricsText(measured) {
  return Object.entries(measured || {}).map(([k, v]) => `${k} ${display(v.value)}`).join(', ') || 'none';
}

/** What was read of each file: its runs, or the engine's located refusal. */
function renderFiles() {
  const box = $('cal-read');
  box.replaceChildren();
  for (const f of files) {
    const section = cell('section', undefined, 'cal-file');
    section.dataset.file = f.name;
    section.append(cell('h4', f.name));
    if (f.error) {
      section.dataset.state = 'refused';
      const p = cell('p', `Refused: ${f.error.message}`, 'error-text');
      if (f.error.path) p.append(' (at ', cell('code', f.error.path), ')');
      section.append(p);
    } else {
      section.dataset.state = 'read';
      const table = cell('table', undefined, 'numtable cal-runs');
      const head = cell('tr');
      for (const h of ['Run', 'Tool', 'Model', 'Load', 'Requests', 'Lengths', 'Metrics']) head.append(cell('th', h));
      table.append(cell('thead'), cell('tbody'));
      table.tHead.append(head);
      for (const r of f.runs) {
        const tr = cell('tr');
        tr.dataset.format = r.format;
        tr.dataset.load = r.load.kind;
        for (const text of [r.where || '(the file)', r.format, r.model || 'not recorded', loadText(r.load),
          String(r.requests.completed), lengthText(r.lengths), metricsText(r.measured)]) tr.append(cell('td', text));
        table.tBodies[0].append(tr);
      }
      section.append(cell('p', `${f.runs.length} run${f.runs.length === 1 ? '' : 's'} read`, 'muted'), table);
      const asks = f.runs.flatMap((r) => r.asks || []);
      if (asks.length) section.append(cell('p', `The file does not say: ${[...new Set(asks)].join('; ')}`, 'muted'));
    }
    box.append(section);
  }
  showBase();
}

const readable = () => files.filter((f) => f.runs);

/** The readers and the fit run in their own worker and wasm module, loaded with the first file. */
function calibrationClient() {
  if (!client) client = new EngineClient(new URL('../worker/calibrate-worker.js', import.meta.url));
  return client;
}

/** The base scenario is the form's: said in words, confirmed by the user. */
function showBase() {
  const base = deps.getBase();
  $('cal-base-box').hidden = readable().length === 0;
  $('cal-base').textContent = base
    ? `The runs are replayed on the scenario in the form: ${base.label}. Set the form to the deployment the runs were measured on (model, GPUs, parallelism, engine) before fitting.`
    : 'The form has no scenario yet.';
  updateFitButton();
}

function updateFitButton() {
  $('cal-fit').disabled = Boolean(fitRun) || !readable().length || !$('cal-base-ok').checked || !deps.getBase()
    || !store.checkedName($('cal-name').value);
}

async function addFiles(list) {
  for (const file of list) {
    const entry = { name: file.name };
    if (file.size > MAX_FILE_BYTES) entry.error = { path: '', message: `the file is ${Math.round(file.size / 1048576)} MiB; benchmark files are read up to 64 MiB` };
    else {
      entry.text = await file.text();
      try {
        entry.runs = await calibrationClient().importBench(file.name, entry.text);
      } catch (err) {
        entry.error = { path: err.path || '', message: err.message };
      }
    }
    files = files.filter((f) => f.name !== entry.name).concat(entry);
  }
  $('cal-fit-result').hidden = true;
  renderFiles();
}

function factorRows(cal) {
  const list = cal.fit ? cal.fit : {};
  const rows = [];
  for (const [key, value] of Object.entries(cal.factors)) {
    const se = list.standard_errors && list.standard_errors[key];
    const held = list.held_at_no_correction && list.held_at_no_correction[key];
    rows.push(`${key} ${display(value)}${typeof se === 'number' ? ` (± ${display(se)})` : held ? ` (held at no correction: ${held})` : ''}`);
  }
  // Fitted beside the factors, not one of them: runs predict the server's TTFT, a client adds this.
  if (typeof list.request_latency_ms === 'number') {
    rows.push(`per-request latency ${display(list.request_latency_ms)} ms (client, network and tokenizer time on every TTFT; not applied to runs)`);
  }
  return rows;
}

/** Calibrated and uncalibrated error on every run (held-out runs marked). */
function renderFit(cal) {
  const box = $('cal-fit-result');
  const fit = cal.fit;
  $('cal-factors').replaceChildren(...factorRows(cal).map((t) => cell('li', t)));
  $('cal-warnings').replaceChildren(...(fit.warnings || []).map((w) => cell('li', w)));
  const body = $('cal-errors').tBodies[0];
  body.replaceChildren();
  const add = (r, heldOut) => {
    for (const g of r.figures) {
      const tr = cell('tr');
      tr.dataset.heldOut = String(heldOut);
      for (const text of [`${r.file}${r.where}${heldOut ? ' (held out)' : ''}`, g.metric, display(g.measured), display(g.uncalibrated),
        display(g.calibrated), pct(g.error_uncalibrated), pct(g.error_calibrated)]) tr.append(cell('td', text));
      body.append(tr);
    }
  };
  for (const r of fit.in_sample.runs) add(r, false);
  if (fit.held_out) for (const r of fit.held_out.runs) add(r, true);
  let summary = `Median |error| on every run: uncalibrated ${pct(fit.in_sample.median_abs_error_uncalibrated)}, calibrated ${pct(fit.in_sample.median_abs_error_calibrated)}.`;
  if (fit.held_out) summary += ` On the held-out runs (fitted without them): uncalibrated ${pct(fit.held_out.median_abs_error_uncalibrated)}, calibrated ${pct(fit.held_out.median_abs_error)}.`;
  $('cal-summary').textContent = summary;
  box.hidden = false;
}

function runFit() {
  const base = deps.getBase();
  if (!base) return;
  const request = {
    base: base.scenario,
    base_name: base.label,
    files: readable().map((f) => ({ name: f.name, text: f.text })),
    id: store.checkedName($('cal-name').value),
  };
  $('cal-fit-result').hidden = true;
  $('cal-progress').value = 0;
  $('cal-status').dataset.state = 'running';
  $('cal-status').textContent = 'Fitting… 0%';
  const { id, promise } = calibrationClient().fit(request, (p) => {
    $('cal-progress').value = p;
    $('cal-status').textContent = `Fitting… ${Math.round(100 * p)}%`;
  });
  fitRun = { id };
  updateFitButton();
  promise.then((cal) => {
    fitted = cal;
    $('cal-progress').value = 1;
    $('cal-status').dataset.state = 'done';
    $('cal-status').textContent = `Fitted "${cal.id}" in ${cal.fit.evaluations} evaluations.`;
    renderFit(cal);
  }, (err) => {
    $('cal-status').dataset.state = 'error';
    $('cal-status').textContent = `The fit failed: ${err.message}${err.path ? ` (at ${err.path})` : ''}`;
  }).finally(() => {
    fitRun = null;
    updateFitButton();
  });
}

/** The applied calibration's box: its name (editable) and Remove. */
export function showAppliedCalibration() {
  const name = store.appliedName();
  $('cal-applied').hidden = !name;
  $('cal-applied-none').hidden = Boolean(name);
  if (name) $('cal-applied-name').value = name;
  $('cal-applied-status').textContent = '';
}

function bindDrop() {
  const zone = $('cal-drop');
  const input = $('cal-files');
  zone.addEventListener('click', () => input.click());
  zone.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      input.click();
    }
  });
  zone.addEventListener('dragover', (e) => {
    e.preventDefault();
    zone.classList.add('dragging');
  });
  zone.addEventListener('dragleave', () => zone.classList.remove('dragging'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('dragging');
    if (e.dataTransfer && e.dataTransfer.files.length) addFiles([...e.dataTransfer.files]);
  });
  input.addEventListener('change', () => {
    const list = [...(input.files || [])];
    input.value = '';
    if (list.length) addFiles(list);
  });
}

/** Wires the tab once: {getBase: () => {scenario, label} | null, onApplied: () => void}. */
export function initCalibrate(options) {
  if (deps) return;
  deps = options;
  bindDrop();
  $('cal-base-ok').addEventListener('change', updateFitButton);
  $('cal-name').addEventListener('input', updateFitButton);
  $('cal-fit').addEventListener('click', runFit);
  $('cal-apply').addEventListener('click', () => {
    if (!fitted) return;
    store.apply(fitted);
    showAppliedCalibration();
    deps.onApplied();
  });
  $('cal-rename').addEventListener('click', () => {
    const ok = store.rename($('cal-applied-name').value);
    $('cal-applied-status').textContent = ok ? 'Renamed.' : 'A name is 1 to 80 characters.';
    if (ok) deps.onApplied();
  });
  $('cal-remove').addEventListener('click', () => {
    store.remove();
    showAppliedCalibration();
    deps.onApplied();
  });
  showAppliedCalibration();
  $('cal-drop').dataset.ready = 'true';  // its handlers are bound (this module loads on first opening)
}

/** Called when the tab opens: the form's scenario may have changed since. */
export function refreshCalibrate() {
  if (!deps) return;
  if (files.length) showBase();
  showAppliedCalibration();
}
