// Wires the page: loads presets from the engine worker, keeps the form, the URL
// hash (share link), localStorage and the current run in sync, and hosts the
// sweep, compare, embed, export and import features. Strings from links, files
// and the engine only ever reach the page through textContent / value.
//
// Its parts, one job each, layered (each imports only those before it):
// app-state.js (the shared state and what follows from it alone),
// app-results.js (a run and its result on screen), app-scenarios.js (the
// scenario in the form: presets, links, imports), app-share.js (links, embeds,
// exports), app-tabs.js (the tabs and mode buttons, the tabs loaded on demand,
// calibration). This module registers the result views, binds the page's
// controls and opens the first scenario.
import { client, startup } from './engine-start.js';
import * as catalogue from './catalogue.js';
import * as view from './render.js';
import { registerKind, registerLazyKind, allViews } from './kinds.js';
import { view as latencyView } from './views/latency.js';
import { holdsSearchLink } from './share.js';
import { loadPanel } from './panels.js';
import { $ } from './dom.js';
import { modeOf, fillPicker, validationPresets } from './presets.js';
import * as form from './form.js';
import * as custom from './custom.js';
import * as dependent from './dependent.js';
import { addHowToRead } from './howto.js';
import { buildCards } from './cards.js';
import { renderForm, labelForm } from './form-layout.js';
import { state, perf, embed } from './app-state.js';
import { runForm, runAfterTyping, cancelCurrent, updateModified } from './app-results.js';
import { CUSTOM_OPTION, loadScenario, selectScenario, loadLink, openFirstScenario, importFile } from './app-scenarios.js';
import { share, exportResult, exportScenario, exportCsv, exportChart, setupEmbed } from './app-share.js';
import {
  bindTabs, bindModeTabs, calibrationChanged, applyLinkCalibration, pinCurrent, loadSearchLink, offerSearch,
} from './app-tabs.js';

perf.appStartMs = performance.now();  // this module's start: its imports loaded

registerKind(latencyView);
// The training and serving-simulation views come with their first result: code, markup, chart cards.
// Each import() names its file, so the bundler (web/bundle.mjs) leaves it a file of its own.
const LAZY_VIEWS = [
  ['training', 'training', () => import('./views/training.js')],
  ['serving_simulation', 'serving', () => import('./views/serving.js')],
];
for (const [kind, name, load] of LAZY_VIEWS) {
  registerLazyKind(kind, () => loadPanel(name, load, { file: `views/${name}.html`, hostId: `${name}-view` })
    .then(({ view: v }) => {
      const section = $(v.section);
      buildCards([v]);
      addHowToRead(section);
      catalogue.labelStatic(section);
      return v;
    }));
}

function bindEvents() {
  const formEl = $('scenario-form');
  formEl.addEventListener('submit', (e) => {
    e.preventDefault();
    runForm({ force: true });
  });
  formEl.addEventListener('change', (e) => {
    if (e.target.id === 'scenario') {
      if (e.target.value !== CUSTOM_OPTION) {
        $('link-notice').hidden = true;
        selectScenario(e.target.value);
      }
    } else runForm();
  });
  formEl.addEventListener('input', (e) => {
    updateModified();
    if (e.target.id === 'scenario' || e.target.type === 'file') return;
    runAfterTyping();
  });
  $('reset').addEventListener('click', () => {
    if (state.presetId) selectScenario(state.presetId);
    else if (state.base) loadScenario(null, state.base);
  });
  $('cancel').addEventListener('click', () => {
    if (cancelCurrent()) view.setStatus('cancelled', 'Cancelled');
  });
  $('edit-jump').addEventListener('click', () => {
    $('scenario-form').scrollIntoView();
    $('scenario').focus({ preventScroll: true });
  });
  $('phase-decode').addEventListener('click', () => view.setPhase('decode'));
  $('phase-prefill').addEventListener('click', () => view.setPhase('prefill'));
  $('family-ms').addEventListener('click', () => latencyView.setFamilyScale('ms'));
  $('family-pct').addEventListener('click', () => latencyView.setFamilyScale('%'));
  $('copy-link').addEventListener('click', () => share('link'));
  $('copy-embed').addEventListener('click', () => share('embed'));
  $('share-close').addEventListener('click', () => { $('share-box').hidden = true; });
  $('link-notice-close').addEventListener('click', () => { $('link-notice').hidden = true; });
  $('export-json').addEventListener('click', exportResult);
  $('export-scenario').addEventListener('click', exportScenario);
  $('export-csv').addEventListener('click', exportCsv);
  $('import').addEventListener('click', () => $('import-file').click());
  $('import-file').addEventListener('change', (e) => {
    const file = e.target.files && e.target.files[0];
    importFile(file).finally(() => { e.target.value = ''; });
  });
  $('pin').addEventListener('click', pinCurrent);
  document.addEventListener('click', (e) => {
    const btn = e.target.closest('[data-export-chart]');
    if (btn) exportChart(btn.dataset.exportChart, btn.dataset.format);
  });
  window.addEventListener('hashchange', () => {
    if (!state.scenarios.size) return;
    if (applyLinkCalibration(location.hash)) calibrationChanged();
    if (!loadSearchLink(location.hash)) loadLink(location.hash);
  });
  bindTabs();
  bindModeTabs();
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
  renderForm();  // the form's fields, from form-layout.js, before anything looks for an input
  const missing = buildCards(allViews());  // before anything looks for a chart's host
  if (missing.length) console.error(`No card on the page for the charts ${missing.join(', ')}`);
  addHowToRead();
  setupEmbed();
  bindEvents();
  view.setStatus('loading', 'Loading engine…');
  try {
    // Asked for by engine-start.js before this module was even loaded. The
    // catalogue and the presets are files (the engine's when they cannot be read):
    // the form is built from them while the engine loads.
    // The engine's catalogue gives every label, unit, policy name and range the
    // page shows; without it the page stops here with the engine's error.
    const [scenarios, models, gpus, interconnects, registries] = await Promise.all([
      ...['scenarios', 'models', 'gpus', 'interconnects'].map((kind) => startup.presets[kind]),
      startup.registries]);
    perf.presetsMs = performance.now();
    catalogue.setCatalogue(registries);
    catalogue.labelStatic();
    labelForm();  // the fields' words: the schema's, by pointer
    const validation = validationPresets(await startup.presets.validation.catch(() => []));
    scenarios.push(...validation.scenarios);
    state.measured = validation.measured;
    const kvTiers = await startup.presets.kv_tiers.catch(() => []);
    form.populate({ scenarios, models, gpus, interconnects, kvTiers });
    fillPicker($('scenario'), scenarios, { models: new Map(models.map((m) => [m.id, m])), gpus: new Map(gpus.map((g) => [g.id, g])) });
    custom.init({ gpus, models });
    dependent.init({ gpus, interconnects, currentMode: () => (state.base ? modeOf(state.base) : 'latency') });
    for (const g of gpus) state.gpus.set(g.id, g);
    for (const l of interconnects) state.links.set(l.id, l);
    for (const s of scenarios) state.scenarios.set(s.id, s);
    applyLinkCalibration(location.hash);
    calibrationChanged();  // before the first run, so it is priced with the applied calibration
    // The first scenario opens now, while the engine may still be loading: its run
    // waits in the worker's queue (the default one is there already, engine-start.js),
    // and filling the form is not queued behind the engine's READY, whose message
    // waited for this thread's work. A search link waits for READY, which says
    // whether this engine build has the deployment search.
    const searchLink = !embed && holdsSearchLink(location.hash);
    if (!searchLink) openFirstScenario(false);
    view.showVersion(await client.ready);  // what the engine offers (features) decides the tabs below
    perf.engineReadyMs = startup.readyMs;
    perf.engineLoadMs = client.loadMs;
    if (client.features.search && !embed) {
      offerSearch({ scenarios, models, gpus, interconnects, isSimulate: (s) => modeOf(s) === 'simulate' && !validation.scenarios.includes(s) });
    }
    if (searchLink) {
      loadSearchLink(location.hash);
      openFirstScenario(true);
    }
  } catch (err) {
    view.showError(err);
    view.setStatus('error', 'Engine unavailable');
  }
}

init();
