// Wires the page: loads presets from the engine worker, keeps the form and the
// current run in sync, supersedes a running run when the form changes.
import { EngineClient } from './engine-client.js';
import * as form from './form.js';
import * as view from './render.js';

const DEFAULT_SCENARIO = 'I1.1';

const client = new EngineClient(new URL('./worker.js', import.meta.url));

const state = {
  scenarios: new Map(),  // id -> preset scenario record
  base: null,            // the preset scenario the form started from
  run: null,             // {id, text} of the run in flight
};

const $ = (id) => document.getElementById(id);

function updateModified() {
  if (!state.base) return;
  const edited = JSON.stringify(form.read(state.base)) !== JSON.stringify(state.base);
  $('modified').hidden = !edited;
}

function cancelCurrent() {
  if (!state.run) return false;
  client.cancel(state.run.id);
  state.run = null;
  return true;
}

function runForm() {
  if (!state.base) return;
  const scenario = form.read(state.base);
  const text = JSON.stringify(scenario);
  if (state.run && state.run.text === text) return;  // the same run is already in flight
  cancelCurrent();
  form.clearInvalid();
  view.hideError();
  updateModified();
  view.setStatus('running', 'Running… 0%');
  view.setProgress(0);
  const t0 = performance.now();
  const { id, promise } = client.run(scenario, (p) => {
    if (state.run && state.run.id === id) view.setProgress(p);
  });
  state.run = { id, text };
  promise.then(({ result, warnings }) => {
    if (!state.run || state.run.id !== id) return;
    state.run = null;
    view.renderResult(result, warnings);
    view.setStatus('done', `Done in ${Math.max(1, Math.round(performance.now() - t0))} ms`);
  }, (err) => {
    if (!state.run || state.run.id !== id) return;  // superseded or cancelled
    state.run = null;
    showEngineError(err);
  });
}

function showEngineError(err) {
  const fieldId = form.markInvalid(err.path);
  const label = fieldId ? document.querySelector(`label[for="${fieldId}"]`) : null;
  view.showError(err, label ? label.firstChild.textContent.trim() : '');
  view.setStatus('error', err.code === 'worker_crashed' ? 'Engine restarted' : 'Error');
}

function selectScenario(id) {
  const preset = state.scenarios.get(id);
  if (!preset) return;
  state.base = structuredClone(preset);
  $('scenario').value = id;
  $('scenario-source').textContent = preset.source || '';
  form.fill(state.base);
  runForm();
}

function bindEvents() {
  const formEl = $('scenario-form');
  formEl.addEventListener('submit', (e) => {
    e.preventDefault();
    runForm();
  });
  formEl.addEventListener('change', (e) => {
    if (e.target.id === 'scenario') selectScenario(e.target.value);
    else runForm();
  });
  formEl.addEventListener('input', updateModified);
  $('reset').addEventListener('click', () => selectScenario($('scenario').value));
  $('cancel').addEventListener('click', () => {
    if (cancelCurrent()) view.setStatus('cancelled', 'Cancelled');
  });
  $('phase-decode').addEventListener('click', () => view.setPhase('decode'));
  $('phase-prefill').addEventListener('click', () => view.setPhase('prefill'));
  client.addEventListener('restart', () => {
    if (!state.run) view.setStatus('error', 'Engine restarted');
  });
  client.addEventListener('failed', (e) => {
    state.run = null;
    view.showError(e.detail);
    view.setStatus('error', 'Engine unavailable');
  });
}

async function init() {
  bindEvents();
  view.setStatus('loading', 'Loading engine…');
  try {
    view.showVersion(await client.ready);
    const [scenarios, models, gpus, interconnects] = await Promise.all(
      ['scenarios', 'models', 'gpus', 'interconnects'].map((kind) => client.presets(kind)));
    form.populate({ scenarios, models, gpus, interconnects });
    view.setCatalog({ gpus });
    for (const s of scenarios) state.scenarios.set(s.id, s);
    const first = state.scenarios.has(DEFAULT_SCENARIO) ? DEFAULT_SCENARIO : scenarios[0] && scenarios[0].id;
    if (first) selectScenario(first);
    else view.setStatus('error', 'No scenario presets');
  } catch (err) {
    view.showError(err);
    view.setStatus('error', 'Engine unavailable');
  }
}

init();
