// The scenario the form shows: a preset picked (by its mode's button or the
// picker), a share link's or a stored one, an imported file; each is filled into
// the form and run. The mode buttons show the scenario's mode.
import { client, DEFAULT_SCENARIO } from './engine-start.js';
import * as form from './form.js';
import * as view from './render.js';
import * as custom from './custom.js';
import * as dependent from './dependent.js';
import { decodeLink, resolveLink, LinkError } from './share.js';
import { readScenarioFile } from './export.js';
import { $ } from './dom.js';
import { MODES, modeOf } from './presets.js';
import { state, embed, params, presetRecord, showLinkNotice, storedLink } from './app-state.js';
import { runForm, cancelCurrent } from './app-results.js';

// Called with the scenario after each one is filled into the form (onScenarioLoaded).
const scenarioListeners = [];

/** Calls `f(scenario)` after every scenario filled into the form from now on. */
export function onScenarioLoaded(f) {
  scenarioListeners.push(f);
}

export const CUSTOM_OPTION = '__custom__';

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

const lastPresetOfMode = new Map();  // mode -> the preset last shown in it

export function showMode(mode) {
  const shown = state.tab === 'search' ? 'search' : mode;  // the Search tab keeps its mode button lit
  for (const [m] of MODES) {
    const tab = $(`mode-${m}`);
    tab.setAttribute('aria-selected', String(m === shown));
    tab.tabIndex = m === shown ? 0 : -1;
  }
  if (state.presetId) lastPresetOfMode.set(mode, state.presetId);
}

/** Opens mode `mode` (not the search) unless it shows: the preset last shown in it, else its first preset. */
export function openMode(mode) {
  if (state.base && modeOf(state.base) === mode) return;
  const first = $('scenario').querySelector(`option[data-mode="${mode}"]`);
  const id = lastPresetOfMode.get(mode) || (first && first.value);
  if (id) selectScenario(id);
}

/** Shows a scenario in the form and runs it. */
export function loadScenario(presetId, scenario) {
  state.presetId = presetId;
  state.base = structuredClone(scenario);
  showPresetInPicker();
  form.fill(state.base);
  custom.fill(state.base);
  dependent.reset();
  for (const f of scenarioListeners) f(state.base);  // the Sweep tab, once loaded (app-tabs.js)
  runForm();
}

export function selectScenario(id) {
  const preset = state.scenarios.get(id);
  if (!preset) return;
  loadScenario(id, preset);
}

/** Loads the scenario of a hash; returns false (after saying why) when it cannot. */
export function loadLink(hash, { quiet = false } = {}) {
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

/** The page's first scenario: the link's, else the one stored, else ?preset= or the default (none of these beside a search link). */
export function openFirstScenario(searchLink) {
  const fromHash = !searchLink && location.hash.length > 1 && loadLink(location.hash);
  const fromStorage = !fromHash && !searchLink && !embed && !params.get('preset') && location.hash.length <= 1 && storedLink() && loadLink(storedLink(), { quiet: true });
  // Its run's refusal is said, and it is forgotten (app-results.js).
  state.restoredText = fromStorage && state.run ? state.run.text : null;
  if (fromHash || fromStorage) return;
  // ?preset=ID (what <sightline-embed scenario="ID"> asks for): only ever a known preset id.
  const asked = params.get('preset');
  const first = asked && state.scenarios.has(asked) ? asked
    : state.scenarios.has(DEFAULT_SCENARIO) ? DEFAULT_SCENARIO : state.scenarios.keys().next().value;
  if (first) selectScenario(first);
  else view.setStatus('error', 'No scenario presets');
}

/**
 * Why a refused file is not a scenario at all, when it is JSON with no model and no
 * serving or training section (a benchmark tool's result, most often): where it goes instead.
 */
function notAScenario(text) {
  let doc;
  try {
    doc = JSON.parse(text);
  } catch (_) {
    return '';
  }
  const scenarioLike = doc && typeof doc === 'object' && !Array.isArray(doc) && 'model' in doc && ('serving' in doc || 'training' in doc);
  return scenarioLike ? '' : ' This file is not a scenario (it has no model and no serving or training section). '
    + 'A benchmark result (vLLM, SGLang, GuideLLM, genai-perf, AIPerf, MLPerf) goes in the Calibrate tab, which reads it and fits your cluster\'s numbers.';
}

function showImportError(fileName, err, text = '') {
  cancelCurrent();
  $('error-title').textContent = `The scenario file “${fileName}” could not be imported`;
  form.clearInvalid();
  const message = `${err.message || String(err)}${text ? notAScenario(text) : ''}`;
  view.showError({ code: err.code || 'import_error', path: err.path || '', message });
  view.setStatus('error', 'Import failed');
}

export async function importFile(file) {
  if (!file) return;
  let text;
  try {
    text = await readScenarioFile(file);
    await client.validate(text);  // located errors come from the engine itself
  } catch (err) {
    showImportError(file.name, err, text);
    return;
  }
  const scenario = JSON.parse(text);
  const presetId = typeof scenario.id === 'string' && state.scenarios.has(scenario.id) ? scenario.id : null;
  loadScenario(presetId, scenario);
}
