// Wires the page: loads presets from the engine worker, keeps the form, the URL
// hash (share link), localStorage and the current run in sync, and hosts the
// sweep, compare, embed, export and import features. Strings from links, files
// and the engine only ever reach the page through textContent / value.
import { client, workerUrl, startup, takeFirstRun, DEFAULT_SCENARIO, STORAGE_KEY } from './engine-start.js';
import * as form from './form.js';
import * as catalogue from './catalogue.js';
import * as view from './render.js';
import { registerKind, registerLazyKind, loadKind, viewFor, allViews } from './kinds.js';
import { view as latencyView } from './views/latency.js';
import { decodeLink, encodeLink, resolveLink, scenarioLink, canonicalOf, LinkError, encodeSearchLink, decodeSearchLink, holdsSearchLink, encodeCalibrationLink, decodeCalibrationLink } from './share.js';
import * as calibration from './calibration-store.js';
import { getChartView } from './charts/registry.js';
import { deferDraws } from './charts/core.js';
import { loadPanel } from './panels.js';
import { download, slug, toCsv, readScenarioFile } from './export.js';
import { $, kpiCardAround, showNumber } from './dom.js';
import { decorate } from './headline.js';
import { MODES, modeOf, fillPicker, validationPresets } from './presets.js';
import { display, unitName } from './format.js';
import * as custom from './custom.js';
import * as dependent from './dependent.js';
import * as assumptions from './assumptions.js';
import { addHowToRead, labelDominant } from './howto.js';
import { buildCards } from './cards.js';
import { renderForm } from './form-layout.js';

const DEFAULT_EMBED_CHARTS = ['families', 'memory'];
const CSV_TITLE = 'Download one CSV row per operator (prefill and decode step)';

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

const params = new URLSearchParams(location.search);
const embed = params.get('embed') === '1';

// Timings read by web/budgets.mjs and the tests; the first result's, ms after
// navigation, split where it goes: engine-start.js's run (the worker created),
// this module's start (its imports loaded), the engine ready (its worker's module
// loaded and compiled: engineLoadMs of it inside the worker), the presets read,
// the first run started; firstResultMs is
// when its numbers are on the page, firstChartsMs when its charts are drawn too
// (after the next paint) and the status says done.
const perf = {
  firstResultMs: null, runs: 0, started: 0, lastSweepMs: null, lastSearchMs: null,
  appStartMs: performance.now(), engineStartMs: startup.startedMs, engineReadyMs: null, engineLoadMs: null, presetsMs: null, firstRunMs: null, firstChartsMs: null,
  firstRunAhead: null,  // whether the first run was the one engine-start.js asked for ahead
};
// Typing runs the scenario once the user pauses this long (one run per burst of keystrokes).
const TYPING_PAUSE_MS = 450;
let typingTimer = 0;
window.sightlinePerf = perf;

const state = {
  scenarios: new Map(),  // id -> preset scenario record
  gpus: new Map(),       // id -> GPU preset record
  links: new Map(),      // id -> interconnect preset record
  presetId: null,        // the preset the scenario starts from (null: imported / custom)
  base: null,            // the scenario the form edits
  run: null,             // {id, text} of the run in flight
  shownText: null,       // the scenario text of the result or error on screen
  measured: new Map(),   // preset id -> published measurement it reproduces (presets/validation)
  last: null,            // {scenario, result, warnings} of the last finished run
  understood: '',        // the model (JSON text) the "understood" panel describes
};


// The Sweep and Search tabs load their markup and code the first time they open
// (panels.js): sweepTab() and searchTab() resolve with the tab's object.
const sweepOptions = {
  workerUrl,
  getScenario: () => currentScenario(),
  getGpu: (id) => state.gpus.get(id) || null,
  getLink: (id) => state.links.get(id) || null,
  getCalibration: () => activeCalibration(),
  onDone: (ms) => { perf.lastSweepMs = ms; },
};
let sweepLoaded = null;
function sweepTab() {
  if (!sweepLoaded) {
    sweepLoaded = loadPanel('sweep', () => import('./sweep.js')).then(({ Sweep }) => {
      const sweep = new Sweep(sweepOptions);
      sweep.init();
      if (state.base) sweep.setSection(form.formSection(state.base));
      if (state.last) sweep.setMetrics(state.last.result);
      return sweep;
    });
  }
  return sweepLoaded;
}
/** Calls `f(sweep)` once the Sweep tab is loaded; nothing when it never opened (it catches up when it does). */
function withSweep(f) {
  if (sweepLoaded) sweepLoaded.then(f);
}
let compareLoaded = null;
/** The Compare tab (loaded the first time it opens or a scenario is pinned), with the current result as B. */
function compareTab() {
  if (!compareLoaded) {
    compareLoaded = loadPanel('compare', () => import('./compare.js')).then(({ Compare }) => {
      const compare = new Compare();
      $('compare-pin').addEventListener('click', pinCurrent);
      $('compare-clear').addEventListener('click', () => compare.clear());
      $('compare-only-diff').addEventListener('change', () => compare.render());
      $('compare-swap').addEventListener('click', () => {
        const a = compare.a;
        if (!a || !state.last) return;
        compare.pin({ ...state.last, presetId: state.presetId, label: describe(state.last.scenario) });
        loadScenario(a.presetId, a.scenario);
      });
      if (state.last) compare.update({ ...state.last, label: describe(state.last.scenario) });
      return compare;
    });
  }
  return compareLoaded;
}
const searchOptions = {
  workerUrl,
  onOpen: (scenario) => {
    loadScenario(null, scenario);
    selectTab('result');
  },
  onShare: (link) => `${baseUrl()}#${encodeSearchLink(link)}`,
  onDone: (ms) => { perf.lastSearchMs = ms; },
  onModel: (id) => showSearchUnderstood(id),
  getCalibration: () => activeCalibration(),
};
let searchPresets = null;  // what Search.init needs, kept by init() until the tab opens
let searchLoaded = null;
function searchTab() {
  if (!searchLoaded) {
    searchLoaded = loadPanel('search', () => import('./search.js')).then(({ Search }) => {
      const search = new Search(searchOptions);
      search.init(searchPresets);
      return search;
    });
  }
  return searchLoaded;
}

/** What the engine understood of the Search tab's model (a preset id), in its own panel. */
let searchUnderstood = '';
function showSearchUnderstood(id) {
  if (embed || id === searchUnderstood) return;
  searchUnderstood = id;
  if (!id) return custom.showUnderstood(null, 'q-');
  client.inspect(JSON.stringify(id)).then((m) => {
    if (searchUnderstood === id) custom.showUnderstood(m, 'q-');
  }, () => {
    if (searchUnderstood === id) custom.showUnderstood(null, 'q-');
  });
}

/**
 * The calibration every run is priced with (Result, Sweep and Search): the one
 * applied in this browser; in an embed, only the one its own link carries
 * (`&c1=`), so an embed shows what its author published, whatever the reader's
 * browser holds.
 */
let embedCalibration = null;
function activeCalibration() {
  return embed ? embedCalibration : calibration.applied();
}

function currentScenario() {
  return state.base ? custom.apply(form.read(state.base)) : null;
}

function presetRecord() {
  return state.presetId ? state.scenarios.get(state.presetId) || null : null;
}

function currentLink(scenario = currentScenario()) {
  return scenarioLink(state.presetId, presetRecord(), scenario);
}

/** A short name of a scenario: its preset plus the first overrides. */
function describe(scenario) {
  const { preset, overrides } = canonicalOf(state.presetId, presetRecord(), scenario);
  const parts = [];
  const walk = (obj) => {
    for (const [k, v] of Object.entries(obj)) {
      if (k === 'source' || k === 'title') continue;
      if (v && typeof v === 'object' && !Array.isArray(v)) walk(v);
      else parts.push(`${k} ${typeof v === 'string' ? v : JSON.stringify(v)}`);
    }
  };
  walk(preset ? overrides : {});
  const head = preset || (scenario && typeof scenario.id === 'string' ? scenario.id : 'custom scenario');
  return parts.length ? `${head} with ${parts.slice(0, 3).join(', ')}${parts.length > 3 ? ', …' : ''}` : head;
}

// ---- URL hash + localStorage -------------------------------------------------------

function persist(scenario) {
  if (embed) return;
  let link;
  try {
    link = currentLink(scenario);
  } catch (_) {
    return;
  }
  const url = `${location.pathname}${location.search}#${link}`;
  if (location.hash !== `#${link}`) history.replaceState(null, '', url);
  try {
    localStorage.setItem(STORAGE_KEY, link);
  } catch (_) { /* storage full or disabled: the hash still holds it */ }
}

function showLinkNotice(message) {
  $('link-notice-message').textContent = message;
  $('link-notice').hidden = false;
}

// ---- runs --------------------------------------------------------------------------

function updateModified() {
  if (!state.base) return;
  const preset = presetRecord();
  let edited = true;
  if (preset) {
    const { overrides } = canonicalOf(state.presetId, preset, currentScenario());
    edited = Object.keys(overrides).length > 0;
  }
  $('modified').hidden = !edited;
}

function cancelCurrent() {
  if (!state.run) return false;
  client.cancel(state.run.id);
  state.run = null;
  return true;
}

function runForm({ force = false } = {}) {
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
  withSweep((sweep) => sweep.setMetrics(result));
  if (compareLoaded) compareLoaded.then((compare) => compare.update({ scenario, result, label: describe(scenario) }));
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
function renderView(v, result, warnings, scenario) {
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

function showEngineError(err) {
  const fieldId = custom.markInvalid(err.path) || form.markInvalid(err.path);
  $('error-title').textContent = 'The engine could not run this scenario';
  view.showError(err, fieldId ? form.fieldLabel(fieldId) : '');
  view.setStatus('error', err.code === 'worker_crashed' ? 'Engine restarted' : 'Error');
}

// ---- scenarios ---------------------------------------------------------------------

const CUSTOM_OPTION = '__custom__';

function showPresetInPicker() {
  const select = $('scenario');
  let custom = select.querySelector(`option[value="${CUSTOM_OPTION}"]`);
  showMode(modeOf(state.base));
  if (state.presetId && state.scenarios.has(state.presetId)) {
    if (custom) custom.remove();
    select.value = state.presetId;
    $('scenario-id').textContent = `Suite id ${state.presetId} ·`;
    $('scenario-source').textContent = presetRecord().source || '';
  } else {
    if (!custom) {
      custom = document.createElement('option');
      custom.value = CUSTOM_OPTION;
      custom.textContent = 'Custom scenario (imported)';
      select.prepend(custom);
    }
    select.value = CUSTOM_OPTION;
    $('scenario-id').textContent = '';
    $('scenario-source').textContent = '';
  }
}

// ---- modes: explicit tabs over the preset groups ---------------------------------------

const lastPresetOfMode = new Map();  // mode -> the preset last shown in it

function showMode(mode) {
  const shown = shownTab === 'search' ? 'search' : mode;  // the Search tab keeps its mode button lit
  for (const [m] of MODES) {
    const tab = $(`mode-${m}`);
    tab.setAttribute('aria-selected', String(m === shown));
    tab.tabIndex = m === shown ? 0 : -1;
  }
  if (state.presetId) lastPresetOfMode.set(mode, state.presetId);
}

/** Switches mode: the preset last shown in that mode, else its first preset. */
function selectMode(mode) {
  if (mode === 'search') {
    selectTab('search');
    return;
  }
  if (shownTab === 'search') selectTab('result');
  if (state.base && modeOf(state.base) === mode) return;
  const first = $('scenario').querySelector(`option[data-mode="${mode}"]`);
  const id = lastPresetOfMode.get(mode) || (first && first.value);
  if (id) selectScenario(id);
}

function bindModeTabs() {
  const all = MODES.map(([m]) => m);
  for (const m of all) {
    const tab = $(`mode-${m}`);
    tab.addEventListener('click', () => selectMode(m));
    tab.addEventListener('keydown', (e) => {
      const ids = all.filter((id) => !$(`mode-${id}`).hidden);  // Deployment search shows only with the engine's search
      const i = ids.indexOf(m);
      const next = { ArrowRight: ids[(i + 1) % ids.length], ArrowLeft: ids[(i + ids.length - 1) % ids.length] }[e.key];
      if (!next) return;
      e.preventDefault();
      selectMode(next);
      $(`mode-${next}`).focus();
    });
  }
}

/** Shows a scenario in the form and runs it. */
function loadScenario(presetId, scenario) {
  state.presetId = presetId;
  state.base = structuredClone(scenario);
  showPresetInPicker();
  form.fill(state.base);
  custom.fill(state.base);
  dependent.reset();
  withSweep((sweep) => sweep.setSection(form.formSection(state.base)));
  runForm();
}

function selectScenario(id) {
  const preset = state.scenarios.get(id);
  if (!preset) return;
  loadScenario(id, preset);
}

/** Loads the scenario of a hash; returns false (after saying why) when it cannot. */
function loadLink(hash, { quiet = false } = {}) {
  try {
    const decoded = decodeLink(hash);
    if (!decoded) return false;
    loadScenario(decoded.preset, resolveLink(decoded, state.scenarios));
    $('link-notice').hidden = true;
    return true;
  } catch (err) {
    if (!quiet) {
      const text = err instanceof LinkError ? err.message : 'the link could not be read';
      showLinkNotice(`${text.charAt(0).toUpperCase()}${text.slice(1)}.`);
    }
    return false;
  }
}

/** Opens the Search tab with the question of a #s1=… link and runs it; false when the hash holds none. */
function loadSearchLink(hash) {
  let link;
  try {
    link = decodeSearchLink(hash);
  } catch (err) {
    showLinkNotice(`${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}.`);
    return true;
  }
  if (!link) return false;
  if ($('mode-search').hidden) {
    showLinkNotice('The link holds a deployment-search question, and this engine build has no deployment search.');
    return true;
  }
  selectTab('search');
  searchTab().then((search) => {
    if (!search.fill(link)) {
      showLinkNotice('The link holds a deployment-search question this version of Sightline cannot read.');
      return;
    }
    $('link-notice').hidden = true;
    search.run();
  });
  return true;
}

function storedLink() {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch (_) {
    return null;
  }
}

// ---- share, embed, export, import ----------------------------------------------------

function baseUrl() {
  return `${location.origin}${location.pathname}`;
}

function escapeAttr(text) {
  return String(text).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The iframe, plus the small script that sizes it to its content (embed.js). */
export function embedCode(link, title) {
  return `<iframe src="${escapeAttr(`${baseUrl()}?embed=1#${link}`)}" title="${escapeAttr(`Sightline: ${title}`)}" ` +
    'width="100%" height="560" style="border:0" loading="lazy"></iframe>\n' +
    `<script src="${escapeAttr(new URL('embed.js', baseUrl()).href)}" async></script>`;
}

async function share(kind) {
  if (!state.base) return;
  const scenario = currentScenario();
  const link = currentLink(scenario);
  // The applied calibration travels, in a link or an embed, only when the user ticks it.
  const cal = $('share-calibration').checked ? calibration.applied() : null;
  const withCal = `${link}${cal ? `&${encodeCalibrationLink(cal)}` : ''}`;
  const text = kind === 'embed' ? embedCode(withCal, describe(scenario)) : `${baseUrl()}#${withCal}`;
  $('share-label').textContent = kind === 'embed' ? 'Embed code (paste it into an HTML page)' : 'Share link';
  const box = $('share-box');
  const area = $('share-text');
  box.hidden = false;
  box.dataset.kind = kind;
  area.value = text;
  let copied = false;
  try {
    await navigator.clipboard.writeText(text);
    copied = true;
  } catch (_) {
    area.focus();
    area.select();
    try {
      copied = document.execCommand('copy');
    } catch (__) { /* fall through */ }
  }
  $('share-status').textContent = copied
    ? `${kind === 'embed' ? 'Embed code' : 'Link'} copied to the clipboard.`
    : 'Select the text above and copy it (Ctrl+C).';
}

function resultFileStem() {
  const s = state.last && state.last.scenario;
  return `sightline-${slug(s && s.id ? s.id : state.presetId || 'scenario')}`;
}

function exportResult() {
  if (!state.last) return;
  const envelope = { ok: true, result: state.last.result, warnings: state.last.warnings || [] };
  download(`${resultFileStem()}-result.json`, `${JSON.stringify(envelope, null, 2)}\n`, 'application/json');
}

function exportScenario() {
  const scenario = currentScenario();
  if (!scenario) return;
  download(`${resultFileStem()}-scenario.json`, `${JSON.stringify(scenario, null, 2)}\n`, 'application/json');
}

function exportCsv() {
  if (!state.last) return;
  const sets = viewFor(state.last.result).rows(state.last.result).filter((r) => r.rows.length);
  for (const set of sets) download(`${resultFileStem()}-${slug(set.name)}.csv`, toCsv(set.rows), 'text/csv;charset=utf-8');
}

async function exportChart(name, format) {
  const chart = getChartView(name);
  if (!chart || !chart.hasData) return;
  const stem = `${resultFileStem()}-${slug(name)}`;
  if (format === 'svg') download(`${stem}.svg`, await chart.toSvg(), 'image/svg+xml');
  else download(`${stem}.png`, await chart.toPng());
}

function showImportError(fileName, err) {
  cancelCurrent();
  $('error-title').textContent = `The scenario file “${fileName}” could not be imported`;
  form.clearInvalid();
  view.showError({ code: err.code || 'import_error', path: err.path || '', message: err.message || String(err) });
  view.setStatus('error', 'Import failed');
}

async function importFile(file) {
  if (!file) return;
  let text;
  try {
    text = await readScenarioFile(file);
    await client.validate(text);  // located errors come from the engine itself
  } catch (err) {
    showImportError(file.name, err);
    return;
  }
  const scenario = JSON.parse(text);
  const presetId = typeof scenario.id === 'string' && state.scenarios.has(scenario.id) ? scenario.id : null;
  loadScenario(presetId, scenario);
}

function applyEmbedCharts(v) {
  const defaults = v.embedCharts || DEFAULT_EMBED_CHARTS;
  const wanted = (params.get('charts') || defaults.join(',')).split(',').map((s) => s.trim());
  const known = new Set(v.charts.map((c) => c.id));
  let chosen = new Set(wanted.filter((c) => known.has(c)));
  if (!chosen.size) chosen = new Set(defaults.filter((c) => known.has(c)));  // charts of another result kind
  for (const card of document.querySelectorAll('[data-chart]')) card.hidden = !chosen.has(card.dataset.chart);
}

// ---- tabs --------------------------------------------------------------------------

const TABS = ['result', 'sweep', 'compare', 'search', 'calibrate'];
let shownTab = 'result';

/** Shows the panel of tab `name` alone (a tab loaded on demand at once, still empty while it loads). */
function showPanel(name) {
  for (const t of TABS) $(`panel-${t}`).hidden = t !== name;
}

function selectTab(name, focus = false) {
  shownTab = name;
  for (const t of TABS) {
    const tab = $(`tab-${t}`);
    const on = t === name;
    tab.setAttribute('aria-selected', String(on));
    tab.tabIndex = on ? 0 : -1;
    if (on && focus) tab.focus();
  }
  showPanel(name);
  // A tab loaded on demand is busy until its markup and code are in; then it draws, if still shown.
  const loaders = { sweep: sweepTab, search: searchTab, calibrate: calibrateTab, compare: compareTab };
  if (loaders[name]) {
    const panel = $(`panel-${name}`);
    if (!panel.dataset.loaded) panel.setAttribute('aria-busy', 'true');
    loaders[name]().then((tool) => {
      panel.removeAttribute('aria-busy');
      if (shownTab !== name) return;
      if (tool.warm) tool.warm();
      if (tool.draw) tool.draw();
      else if (tool.render) tool.render();  // Compare
    });
  }
  // The Deployment search mode button is the Search tab's twin; the search has its own form,
  // so the scenario form steps aside while it shows.
  const modeTab = $('mode-search');
  const searching = name === 'search';
  document.body.classList.toggle('searching', searching);
  if (searching || modeTab.getAttribute('aria-selected') === 'true') {
    for (const [m] of MODES) {
      const on = searching ? m === 'search' : m === (state.base ? modeOf(state.base) : 'latency');
      $(`mode-${m}`).setAttribute('aria-selected', String(on));
      $(`mode-${m}`).tabIndex = on ? 0 : -1;
    }
  }
  if (name === 'result' && state.last) {
    // Charts drawn while hidden have no size: draw them again.
    renderView(viewFor(state.last.result), state.last.result, state.last.warnings, state.last.scenario);
  }
}

function bindTabs() {
  for (const t of TABS) {
    const tab = $(`tab-${t}`);
    tab.addEventListener('click', () => selectTab(t));
    tab.addEventListener('keydown', (e) => {
      const tabs = TABS.filter((name) => !$(`tab-${name}`).hidden);
      const i = tabs.indexOf(t);
      let next = null;
      if (e.key === 'ArrowRight') next = tabs[(i + 1) % tabs.length];
      else if (e.key === 'ArrowLeft') next = tabs[(i + tabs.length - 1) % tabs.length];
      else if (e.key === 'Home') next = tabs[0];
      else if (e.key === 'End') next = tabs[tabs.length - 1];
      if (next) {
        e.preventDefault();
        selectTab(next, true);
      }
    });
  }
}

// ---- cluster calibration --------------------------------------------------------------

/** The Calibrate tab's markup and code, loaded the first time the tab opens. */
let calibrateModule = null;
function calibrateTab() {
  if (!calibrateModule) {
    calibrateModule = loadPanel('calibrate', () => import('./calibrate.js')).then((m) => {
      m.initCalibrate({
        getBase: () => (state.base ? { scenario: currentScenario(), label: describe(currentScenario()) } : null),
        onApplied: calibrationChanged,
      });
      return m;
    });
  }
  return calibrateModule.then((m) => {
    m.refreshCalibrate();
    return m;
  });
}

/** After Apply, rename or remove: the share option and the result follow. */
function calibrationChanged() {
  const name = calibration.appliedName();
  $('share-calibration-row').hidden = !name;
  $('share-calibration-name').textContent = name ? `“${name}”` : '';
  if (!name) $('share-calibration').checked = false;
  runForm({ force: true });
}

/**
 * A link that carries a calibration applies it (and keeps it, named, in this
 * browser; an embed keeps it for its own runs only); true when it did.
 */
function applyLinkCalibration(hash) {
  try {
    const cal = decodeCalibrationLink(hash);
    if (embed) {
      const changed = JSON.stringify(cal) !== JSON.stringify(embedCalibration);
      embedCalibration = cal;
      return changed;
    }
    if (!cal) return false;
    calibration.apply(cal);
    if (calibrateModule) calibrateModule.then((m) => m.showAppliedCalibration());
    return true;
  } catch (err) {
    showLinkNotice(`${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}.`);
    return false;
  }
}

// ---- events ------------------------------------------------------------------------

function pinCurrent() {
  if (!state.last) return;
  const pinned = { ...state.last, presetId: state.presetId, label: describe(state.last.scenario) };
  selectTab('compare');  // loads the tab; A is pinned once it is in
  compareTab().then((compare) => compare.pin(pinned));
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
    clearTimeout(typingTimer);
    typingTimer = setTimeout(runForm, TYPING_PAUSE_MS);
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
function postSize() {
  if (!embed || window.parent === window) return;
  const height = Math.ceil(document.body.getBoundingClientRect().height);
  window.parent.postMessage({ type: 'sightline:size', height, title: document.title }, '*');
}

function setupEmbed() {
  if (!embed) return;
  document.body.classList.add('embed');
  if (window.ResizeObserver) new ResizeObserver(postSize).observe(document.body);
  const open = $('open-full');
  const update = () => {
    let decoded = null;
    try {
      decoded = decodeLink(location.hash);
    } catch (_) { /* the page says why; the link opens the default */ }
    open.href = decoded ? `./#${encodeLink(decoded)}` : './';
  };
  update();
  window.addEventListener('hashchange', update);
}

/** The page's first scenario: the link's, else the one stored, else ?preset= or the default (none of these beside a search link). */
function openFirstScenario(searchLink) {
  const fromHash = !searchLink && location.hash.length > 1 && loadLink(location.hash);
  const fromStorage = !fromHash && !searchLink && !embed && !params.get('preset') && location.hash.length <= 1 && storedLink() && loadLink(storedLink(), { quiet: true });
  if (fromHash || fromStorage) return;
  // ?preset=ID (what <sightline-embed scenario="ID"> asks for): only ever a known preset id.
  const asked = params.get('preset');
  const first = asked && state.scenarios.has(asked) ? asked
    : state.scenarios.has(DEFAULT_SCENARIO) ? DEFAULT_SCENARIO : state.scenarios.keys().next().value;
  if (first) selectScenario(first);
  else view.setStatus('error', 'No scenario presets');
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
      searchPresets = { scenarios, models, gpus, interconnects, isSimulate: (s) => modeOf(s) === 'simulate' && !validation.scenarios.includes(s) };
      $('mode-search').hidden = false;
      $('tab-search').hidden = false;
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
