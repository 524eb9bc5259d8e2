// The tabs (Result, Sweep, Compare, Search, Calibrate) and the mode buttons
// above the form. The Sweep, Compare, Search and Calibrate tabs load their
// markup and code the first time they open (panels.js) and then follow the
// scenario and the result on screen; a calibration applied (in the tab or by a
// link) reprices the result; a search link opens the Search tab and runs it.
import { client, workerUrl } from './engine-start.js';
import * as form from './form.js';
import * as custom from './custom.js';
import * as calibration from './calibration-store.js';
import { viewFor } from './kinds.js';
import { decodeSearchLink, encodeSearchLink, decodeCalibrationLink } from './share.js';
import { loadPanel } from './panels.js';
import { $ } from './dom.js';
import { MODES, modeOf } from './presets.js';
import { state, perf, embed, activeCalibration, currentScenario, describe, showLinkNotice, baseUrl } from './app-state.js';
import { runForm, renderView, onResult } from './app-results.js';
import { loadScenario, openMode, onScenarioLoaded } from './app-scenarios.js';

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
let searchPresets = null;  // what Search.init needs, kept by offerSearch() until the tab opens

/** Shows the Search tab and its mode button (this engine build has the search), with what its form needs. */
export function offerSearch(presets) {
  searchPresets = presets;
  $('mode-search').hidden = false;
  $('tab-search').hidden = false;
}
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

/** Opens the Search tab with the question of a #s1=… link and runs it; false when the hash holds none. */
export function loadSearchLink(hash) {
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

/** Switches mode: the preset last shown in that mode, else its first preset. */
function selectMode(mode) {
  if (mode === 'search') {
    selectTab('search');
    return;
  }
  if (state.tab === 'search') selectTab('result');
  openMode(mode);
}

export function bindModeTabs() {
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

const TABS = ['result', 'sweep', 'compare', 'search', 'calibrate'];

/** Shows the panel of tab `name` alone (a tab loaded on demand at once, still empty while it loads). */
function showPanel(name) {
  for (const t of TABS) $(`panel-${t}`).hidden = t !== name;
}

export function selectTab(name, focus = false) {
  state.tab = name;
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
      if (state.tab !== name) return;
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

export function bindTabs() {
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
export function calibrationChanged() {
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
export function applyLinkCalibration(hash) {
  try {
    const cal = decodeCalibrationLink(hash);
    if (embed) {
      const changed = JSON.stringify(cal) !== JSON.stringify(state.embedCalibration);
      state.embedCalibration = cal;
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

export function pinCurrent() {
  if (!state.last) return;
  const pinned = { ...state.last, presetId: state.presetId, label: describe(state.last.scenario) };
  selectTab('compare');  // loads the tab; A is pinned once it is in
  compareTab().then((compare) => compare.pin(pinned));
}

// The loaded tabs follow the form's scenario (the Sweep's fields) and the result (the Sweep's metrics, Compare's B).
onScenarioLoaded(() => withSweep((sweep) => sweep.setSection(form.formSection(state.base))));
onResult((scenario, result) => {
  withSweep((sweep) => sweep.setMetrics(result));
  if (compareLoaded) compareLoaded.then((compare) => compare.update({ scenario, result, label: describe(scenario) }));
});
