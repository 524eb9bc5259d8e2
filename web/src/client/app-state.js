// What the page's modules share: the scenario in the form and the result on
// screen (`state`), the timings the tests and web/budgets.mjs read
// (window.sightlinePerf), whether this is an embed, and what follows from the
// state alone: the scenario the form describes, its share link and short name,
// and the calibration it is priced with. The modules above it (app-results.js,
// app-scenarios.js, app-share.js, app-tabs.js, app.js) import it; it imports none of them.
import { startup, STORAGE_KEY } from './engine-start.js';
import * as form from './form.js';
import * as custom from './custom.js';
import * as calibration from './calibration-store.js';
import { scenarioLink, canonicalOf } from './share.js';
import { $ } from './dom.js';

export const params = new URLSearchParams(location.search);
export const embed = params.get('embed') === '1';

// Timings read by web/budgets.mjs and the tests; the first result's, ms after
// navigation, split where it goes: engine-start.js's run (the worker created),
// app.js's start (its modules loaded), the engine ready (its worker's module
// loaded and compiled: engineLoadMs of it inside the worker), the presets read,
// the first run started; firstResultMs is
// when its numbers are on the page, firstChartsMs when its charts are drawn too
// (after the next paint) and the status says done.
export const perf = {
  firstResultMs: null, runs: 0, started: 0, lastSweepMs: null, lastSearchMs: null,
  appStartMs: null, engineStartMs: startup.startedMs, engineReadyMs: null, engineLoadMs: null, presetsMs: null, firstRunMs: null, firstChartsMs: null,
  firstRunAhead: null,  // whether the first run was the one engine-start.js asked for ahead
};
window.sightlinePerf = perf;

export const state = {
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
  tab: 'result',         // the tab shown (app-tabs.js selectTab)
  restoredText: null,    // the run text of the scenario kept from the last visit, opened on this one
  embedCalibration: null,  // an embed's own calibration, from its link (app-tabs.js applyLinkCalibration)
};

/**
 * The calibration every run is priced with (Result, Sweep and Search): the one
 * applied in this browser; in an embed, only the one its own link carries
 * (`&c1=`), so an embed shows what its author published, whatever the reader's
 * browser holds.
 */
export function activeCalibration() {
  return embed ? state.embedCalibration : calibration.applied();
}

export function currentScenario() {
  return state.base ? custom.apply(form.read(state.base)) : null;
}

export function presetRecord() {
  return state.presetId ? state.scenarios.get(state.presetId) || null : null;
}

export function currentLink(scenario = currentScenario()) {
  return scenarioLink(state.presetId, presetRecord(), scenario);
}

/** A short name of a scenario: its preset plus the first overrides. */
export function describe(scenario) {
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

// The link of the scenario last put in the address bar (persist), kept in
// localStorage only once its run gave a result (keep): a link the engine refuses
// is never replayed on the next visit.
let persisted = { scenario: null, link: null };

/** Puts the scenario's share link in the address bar (a reload shows it again, result or error). */
export function persist(scenario) {
  if (embed) return;
  let link;
  try {
    link = currentLink(scenario);
  } catch (_) {
    return;
  }
  persisted = { scenario, link };
  const url = `${location.pathname}${location.search}#${link}`;
  if (location.hash !== `#${link}`) history.replaceState(null, '', url);
}

/** Keeps the scenario, whose run gave a result, for the next visit without a link. */
export function keep(scenario) {
  if (embed) return;
  let link = persisted.scenario === scenario ? persisted.link : null;
  try {
    link = link || currentLink(scenario);
    localStorage.setItem(STORAGE_KEY, link);
  } catch (_) { /* storage full or disabled: the hash still holds it */ }
}

/** Forgets the kept scenario (one the engine now refuses). */
export function forgetStored() {
  try {
    localStorage.removeItem(STORAGE_KEY);
  } catch (_) { /* storage disabled: nothing kept */ }
}

/**
 * The notice above the form: why a link could not be opened (its title and
 * closing line as the markup has them), or, given, another title and closing line.
 */
export function showLinkNotice(message, { title, next } = {}) {
  for (const [id, text] of [['link-notice-title', title], ['link-notice-next', next]]) {
    const e = $(id);
    if (e.dataset.text === undefined) e.dataset.text = e.textContent;
    e.textContent = text || e.dataset.text;
  }
  $('link-notice-message').textContent = message;
  $('link-notice').hidden = false;
}

export function storedLink() {
  try {
    return localStorage.getItem(STORAGE_KEY);
  } catch (_) {
    return null;
  }
}

// ---- share, embed, export, import ----------------------------------------------------

export function baseUrl() {
  return `${location.origin}${location.pathname}`;
}
