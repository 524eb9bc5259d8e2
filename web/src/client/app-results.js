// A run of the form's scenario and its result on screen: the run asked of the
// engine's worker (one per burst of typing), the result's view, headline cards,
// tables and charts (its numbers first, its charts after the next paint), the
// "understood" panel, the published measurement's check, an error located at
// its field, and an embed's charts and size.
import { client, takeFirstRun } from './engine-start.js';
import * as form from './form.js';
import * as view from './render.js';
import * as custom from './custom.js';
import * as assumptions from './assumptions.js';
import { loadKind, viewFor, allViews } from './kinds.js';
import { canonicalOf } from './share.js';
import { deferDraws } from './charts/core.js';
import { $, kpiCardAround, showNumber } from './dom.js';
import { decorate } from './headline.js';
import { display, unitName } from './format.js';
import { labelDominant } from './howto.js';
import {
  state, perf, embed, params, activeCalibration, currentScenario, presetRecord, describe, persist, keep, forgetStored, showLinkNotice,
} from './app-state.js';

const DEFAULT_EMBED_CHARTS = ['families', 'memory'];
const CSV_TITLE = 'Download one CSV row per operator (prefill and decode step)';

// Typing runs the scenario once the user pauses this long (one run per burst of keystrokes).
const TYPING_PAUSE_MS = 450;
let typingTimer = 0;

/** Runs the form's scenario once the user pauses typing (one run per burst of keystrokes). */
export function runAfterTyping() {
  clearTimeout(typingTimer);
  typingTimer = setTimeout(runForm, TYPING_PAUSE_MS);
}

// Called with (scenario, result) after each result is shown (onResult).
const resultListeners = [];

/** Calls `f(scenario, result)` after every result shown from now on. */
export function onResult(f) {
  resultListeners.push(f);
}

export function updateModified() {
  if (!state.base) return;
  const preset = presetRecord();
  let edited = true;
  if (preset) {
    const { overrides } = canonicalOf(state.presetId, preset, currentScenario());
    edited = Object.keys(overrides).length > 0;
  }
  $('modified').hidden = !edited;
}

export function cancelCurrent() {
  if (!state.run) return false;
  client.cancel(state.run.id);
  state.run = null;
  return true;
}

export function runForm({ force = false } = {}) {
  if (!state.base) return;
  const scenario = currentScenario();
  const cal = activeCalibration();  // priced with it, as `run --calibration`
  const text = JSON.stringify([scenario, cal]);
  clearTimeout(typingTimer);
  if (state.run && state.run.text === text) return;  // the same run is already in flight
  if (!state.run && state.shownText === text && !force) return;  // already on screen
  cancelCurrent();
  form.clearInvalid();
  custom.markInvalid('');
  view.hideError();
  updateModified();
  const problem = custom.currentProblem();
  if (problem) {  // e.g. no config.json pasted yet: said here, nothing runs
    state.shownText = null;
    showUnderstood(undefined);
    if (problem.code === 'missing_key' && !problem.message.includes('cannot fetch')) {
      custom.markInvalid(problem.path);
      view.setStatus('waiting', `Waiting: ${problem.message}`);
    } else showEngineError(problem);
    return;
  }
  afterFirstResult(() => {
    persist(scenario);
    showUnderstood(scenario.model);
  });
  view.setStatus('running', 'Running… 0%');
  view.setProgress(0);
  const t0 = performance.now();
  const onProgress = (p) => {
    if (state.run && state.run.id === id) view.setProgress(p);
  };
  // The page's first run may have been asked for ahead, by engine-start.js, as this very request.
  const ahead = takeFirstRun(text, onProgress);
  const { id, promise } = ahead || client.run(scenario, onProgress, { calibration: cal });
  state.run = { id, text };
  perf.started += 1;
  if (perf.firstRunMs === null) {
    perf.firstRunMs = performance.now();
    perf.firstRunAhead = Boolean(ahead);
  }
  promise.then((done) => loadKind(done.result && done.result.kind).then(() => done)).then(({ result, warnings }) => {
    if (!state.run || state.run.id !== id) return;
    state.run = null;
    state.shownText = text;
    // The page's first result: its numbers first, its charts after the next paint.
    const drawCharts = perf.firstResultMs === null ? deferDraws() : null;
    showResult(scenario, result, warnings);
    afterFirstResult(() => keep(scenario));  // a scenario with a result is the one the next visit reopens
    const done = () => {
      if (state.run || state.shownText !== text) return;  // another run has started since
      view.setStatus('done', `Done in ${Math.max(1, Math.round(performance.now() - t0))} ms`);
      perf.runs += 1;
    };
    if (!drawCharts) return done();
    perf.firstResultMs = performance.now();
    firstResultShown();
    afterNextPaint().then(drawCharts).then(() => {
      perf.firstChartsMs = performance.now();
      done();
      registerOffline();
    });
  }, (err) => {
    if (!state.run || state.run.id !== id) return;  // superseded or cancelled
    state.run = null;
    state.shownText = text;
    showEngineError(err);
    if (state.restoredText === text) forgetRefused();
    firstResultShown();
  });
}

// What a run does beside the engine's work that the first result's numbers need
// not wait for: the share link in the address bar and localStorage (~10 ms of
// compression), and the "understood" panel, whose request to the worker would
// otherwise be taken between the first run's slices there. Done, in order, once
// the page's first result or error is on screen; at once after that.
let beforeFirst = [];

function afterFirstResult(f) {
  if (beforeFirst) beforeFirst.push(f);
  else f();
}

function firstResultShown() {
  const waiting = beforeFirst || [];
  beforeFirst = null;
  for (const f of waiting) f();
}

/**
 * What the engine understood of the scenario's model (a pasted config, a preset,
 * an architecture), in every mode, whether or not the run fits; asked again
 * only when the model changes.
 */
function showUnderstood(model) {
  if (embed) return;  // an embed shows no form, so no panel either
  const text = model === undefined ? '' : JSON.stringify(model);
  if (text === state.understood) return;
  state.understood = text;
  if (!text) return custom.showUnderstood(null);
  client.inspect(text).then((m) => {  // as JSON text: a preset id is a JSON string
    if (state.understood === text) custom.showUnderstood(m);
  }, () => {
    if (state.understood === text) custom.showUnderstood(null);
  });
}

function showResult(scenario, result, warnings) {
  state.last = { scenario, result, warnings };
  document.body.classList.add('has-result');  // narrow windows: the results now come first
  const v = viewFor(result);
  for (const other of allViews()) {
    const section = $(other.section);
    if (section) section.hidden = other !== v;
  }
  renderHeadline(v, result);
  renderView(v, result, warnings, scenario);
  if (!embed) form.showLayout(result.deployment);
  assumptions.render(scenario, result);
  showMeasuredCheck(scenario, result);
  $('results').dataset.scenario = (result.scenario && result.scenario.id) || '';
  $('summary').hidden = false;
  if (v.summary) $('summary').textContent = v.summary(result, { scenario, gpus: state.gpus });
  else if (v.section !== 'latency-view') $('summary').textContent = describe(scenario);
  $('export-csv').disabled = !v.rows(result).some((r) => r.rows.length);
  $('export-csv').title = v.csvTitle || CSV_TITLE;
  $('export-csv').textContent = v.csvLabel || 'Operators CSV';
  for (const f of resultListeners) f(scenario, result);  // the Sweep and Compare tabs, once loaded (app-tabs.js)
  if (embed) {
    applyEmbedCharts(v);
    document.title = `Sightline: ${$('summary').textContent || describe(scenario)}`;
    postSize();
  }
}

/** Where the preset reproduces a published measurement: the prediction's error against it. */
function showMeasuredCheck(scenario, result) {
  const line = $('measured-check');
  const m = state.presetId ? state.measured.get(state.presetId) : null;
  line.hidden = !m;
  if (!m) return;
  const unit = unitName(m.unit);
  const { overrides } = canonicalOf(state.presetId, presetRecord(), scenario);
  const what = `Published measurement (${m.row || m.id}): ${display(m.measured)} ${unit}`;
  const km = Array.isArray(result.key_metrics) ? result.key_metrics.find((k) => k.id === m.metric) : null;
  const predicted = result.metrics && Number.isFinite(result.metrics[m.metric]) ? result.metrics[m.metric] : km && km.value;
  delete line.dataset.errorPct;
  if (Object.keys(overrides).length) line.textContent = `${what}. It applies to the unedited preset; reset to compare.`;
  else if (!Number.isFinite(predicted)) line.textContent = `${what}. This metric is derived outside the result (see \`sightline report-e2e\`).`;
  else {
    const err = (predicted / m.measured - 1) * 100;
    line.dataset.errorPct = String(err);
    line.textContent = `${what}; predicted ${display(predicted)} ${unit}: error ${err >= 0 ? '+' : '−'}${display(Math.abs(err))}%.`;
  }
}

/** Draws a result's view, then scales its headline numbers and shows their intervals and tier. */
export function renderView(v, result, warnings, scenario) {
  v.render(result, warnings, { scenario, gpus: state.gpus });
  decorate(result, [$(v.section), $('headline')], $('accuracy-badge'), $('calibrated-badge'));
  labelDominant(result);
}

/** Headline cards built from the view (shown in embed mode). */
function renderHeadline(v, result) {
  const cards = v.headline(result).map((h) => {
    const num = document.createElement('span');
    num.dataset.headline = h.key;
    if (typeof h.text === 'string') num.textContent = h.text;
    else showNumber(num, h.value);
    return kpiCardAround({ ...h, title: h.title || h.key }, num);
  });
  $('headline').replaceChildren(...cards);
}

/** The scenario kept from the last visit is refused now: it is forgotten, and the notice says so. */
function forgetRefused() {
  state.restoredText = null;
  forgetStored();
  showLinkNotice('The engine refuses it now; its reason is shown below.', {
    title: 'The scenario from your last visit could not be run',
    next: 'It is no longer kept: the next visit opens the default scenario. Pick a preset above, or fix the field.',
  });
}

function showEngineError(err) {
  const fieldId = custom.markInvalid(err.path) || form.markInvalid(err.path);
  $('error-title').textContent = 'The engine could not run this scenario';
  view.showError(err, fieldId ? form.fieldLabel(fieldId) : '');
  view.setStatus('error', err.code === 'worker_crashed' ? 'Engine restarted' : 'Error');
}

function applyEmbedCharts(v) {
  const defaults = v.embedCharts || DEFAULT_EMBED_CHARTS;
  const wanted = (params.get('charts') || defaults.join(',')).split(',').map((s) => s.trim());
  const known = new Set(v.charts.map((c) => c.id));
  let chosen = new Set(wanted.filter((c) => known.has(c)));
  if (!chosen.size) chosen = new Set(defaults.filter((c) => known.has(c)));  // charts of another result kind
  for (const card of document.querySelectorAll('[data-chart]')) card.hidden = !chosen.has(card.dataset.chart);
}


// The longest the charts wait for a paint: a browser does not run animation
// frames for a page it does not show (a background tab, an embed's iframe
// scrolled out of view or not yet sized), and the result must still finish.
const PAINT_WAIT_MS = 100;

/** Resolves once the browser has painted what is on the page now, or PAINT_WAIT_MS later if it paints nothing. */
function afterNextPaint() {
  return new Promise((resolve) => {
    let settled = false;
    const go = () => {
      if (settled) return;
      settled = true;
      setTimeout(resolve, 0);
    };
    requestAnimationFrame(go);
    setTimeout(go, PAINT_WAIT_MS);
  });
}

/** After the first result (so it never delays it): the service worker that keeps the app for offline use. */
function registerOffline() {
  if (!('serviceWorker' in navigator) || !/^https?:$/.test(location.protocol)) return;
  navigator.serviceWorker.register('./sw.js').catch(() => { /* offline use is a bonus, not a requirement */ });
}

/** Tells the host page (embed.js) the embed's content height and a title for screen readers. */
export function postSize() {
  if (!embed || window.parent === window) return;
  const height = Math.ceil(document.body.getBoundingClientRect().height);
  window.parent.postMessage({ type: 'sightline:size', height, title: document.title }, '*');
}
