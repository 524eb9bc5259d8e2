// The form <-> scenario mapping: which input edits which JSON path, filling the
// inputs from a scenario, reading an edited scenario back, and highlighting the
// input an engine error points at. Everything is set with textContent/value.
//
// A scenario has either a `serving` or a `training` section; the form shows the
// fieldsets of that section (elements with data-section) and hides the others.
// Reading the form back only touches the inputs the user changed since the last
// fill: an untouched input keeps the scenario's own value, so a preset read back
// unedited is byte-identical to the preset (no spurious share-link overrides),
// and values the form shows in a simpler shape (a recompute object shown as its
// mode, `fsdp: true` shown as ZeRO stage 3) stay as they were.
//
// The parts, each with one job: form-paths.js (JSON pointers, sections, input
// text as numbers), form-controls.js (an input's value by its kind),
// form-workload.js and form-fields.js (the field table, FIELDS),
// form-visibility.js (which inputs show and take input). This module fills and
// reads the form and is what the rest of the page imports.

import { parameterAt, policyList } from './catalogue.js';
import { groupGpus } from './gpu-links.js';
import { $ } from './dom.js';
import { getAt, setAt, formSection, sectionMatches, parseInteger, parseNumber, SIM } from './form-paths.js';
import { NO_LINK, option, fillSelect, ensureOption, inputValue, setInput } from './form-controls.js';
import { LENGTH_PREFIXES } from './form-workload.js';
import { SLO, SLO_METRICS, SLO_JOINT, FIELDS, fieldsOf, TOGGLES, modelPresetId } from './form-fields.js';
import {
  showThinkParams, showArrivalFields, showSessionMode, showDistParams, showSloAttainment, setGroupEnabled, showDependent,
} from './form-visibility.js';

export { getAt, setAt, sectionOf, formSection, sectionMatches } from './form-paths.js';
export { fieldApplies } from './form-workload.js';
export { FIELDS, fieldsOf, FROM_THE_MODEL } from './form-fields.js';

const CUSTOM_MODEL = '__custom__';

/**
 * After a run without disaggregation: the disaggregation inputs offer the engine's own
 * layout (result.deployment, one pool of replicas) split in two halves, so turning it on
 * starts from the GPUs the engine counted rather than from a count the page makes.
 */
export function showLayout(deployment) {
  const pools = deployment && Array.isArray(deployment.pools) ? deployment.pools : [];
  if (pools.length !== 1 || $('disagg_enabled').checked) return;
  const { replicas, tp, pp } = pools[0];
  const n = (Number(replicas) || 1) * (Number(pp) || 1);  // a pp-stage replica's GPUs hold pp replicas at pp 1
  const prefill = Math.max(1, Math.floor(n / 2));
  const shown = { disagg_prefill: prefill, disagg_decode: Math.max(1, n - prefill), disagg_tp: Number(tp) || 1 };
  for (const [id, v] of Object.entries(shown)) {
    $(id).value = String(v);
    filled.set(id, String(v));
  }
}

/**
 * The GPU options in one group per vendor and generation ("NVIDIA Hopper",
 * "AMD CDNA 3"; gpu-links.js groupGpus, shared with the Search tab's GPU list).
 */
function gpuGroups(gpus) {
  return groupGpus(gpus).map(([label, members]) => {
    const og = document.createElement('optgroup');
    og.label = label;
    og.append(...members.map((g) => option(g.id, g.name || g.id, g.source)));
    return og;
  });
}

/** The label text of a field (without its unit), for messages and the sweep picker. */
export function fieldLabel(id) {
  const label = document.querySelector(`label[for="${id}"]`);
  if (label && label.firstChild) return label.firstChild.textContent.trim();
  const input = $(id);
  const by = input && input.getAttribute('aria-labelledby');
  const named = by ? $(by) : null;
  return named ? named.textContent.trim() : id;
}

const SERVING_SELECTS = [
  // [select id, the engine's policy family, extra first option for "engine default"]
  ['sim_arrival', 'arrival_processes'],
  ['sim_router', 'routers', 'Default (round robin)'],
  ['sim_policy', 'scheduler_policies', "The stack's"],
  ['sim_priority', 'scheduler_priorities', "The stack's, else the policy's"],
  ['sim_kv_alloc', 'kv_allocations'],
  ['sim_preemption', 'preemption_modes'],
  ['sim_kv_admission', 'kv_admissions', "The stack's"],
  ['spec_method', 'speculative_methods'],
  ['prompt_dist', 'length_distributions'],
  ['output_dist', 'length_distributions'],
  ['sess_in_dist', 'length_distributions'],
  ['sess_out_dist', 'length_distributions'],
];

// Selects filled from preset lists (the rest take the schema's choices, or a policy family).
const PRESET_SELECTS = new Set(['gpu', 'intra_node', 'inter_node', 'spec_draft', 'sim_kv_tier1', 'sim_kv_tier2']);

/**
 * Gives an input what the engine's parameter schema says of its path: the range
 * of a number (min/max), its default as the placeholder of an empty input, the
 * choices of a select (an integer range for a select of numbers, e.g. the ZeRO stage).
 */
function applySchema(f) {
  const p = parameterAt(f.schema || f.path);
  if (!p) return;
  const input = $(f.id);
  if (f.kind === 'int' || f.kind === 'number') {
    for (const bound of ['min', 'max']) {
      if (typeof p[bound] === 'number') input.setAttribute(bound, String(p[bound]));
      else input.removeAttribute(bound);
    }
    if (p.default !== undefined && !p.default_varies && !input.hasAttribute('placeholder')) input.placeholder = String(p.default);
  } else if (f.kind === 'select' && !PRESET_SELECTS.has(f.id) && !SERVING_SELECTS.some(([id]) => id === f.id)) {
    let values = Array.isArray(p.choices) ? p.choices.map(String) : [];
    if (!values.length && p.type === 'integer' && Number.isInteger(p.min) && Number.isInteger(p.max) && p.max - p.min <= 16) {
      values = Array.from({ length: p.max - p.min + 1 }, (_, i) => String(p.min + i));
    }
    const options = values.map((v) => option(v, v));
    if (values.length) fillSelect(input, f.emptyLabel ? [option(NO_LINK, f.emptyLabel), ...options] : options);
  }
}

/**
 * Builds every dropdown from the engine's preset lists and its catalogue (policy
 * names, data types; catalogue.js, set before this runs) and wires linked inputs.
 */
export function populate({ scenarios, models, gpus, interconnects, kvTiers = [] }) {
  for (const [id, family, empty] of SERVING_SELECTS) {
    const opts = policyList(family).map((e) => option(String(e.name), String(e.name), e.description ? String(e.description) : undefined));
    fillSelect($(id), empty ? [option(NO_LINK, empty), ...opts] : opts);
  }
  fillSelect($('scenario'), scenarios.map((s) => option(s.id, `${s.id} — ${s.title || s.name || ''}`, s.source)));
  fillSelect($('model'), models.map((m) => option(m.id, m.name || m.id, m.source)));
  fillSelect($('gpu'), gpuGroups(gpus));
  const intra = interconnects.filter((i) => !i.scope || i.scope === 'intra_node');
  fillSelect($('intra_node'), [
    option(NO_LINK, 'None (1 GPU)'),
    ...intra.map((i) => option(i.id, i.name || i.id, i.source)),
  ]);
  const inter = interconnects.filter((i) => i.scope === 'inter_node');
  fillSelect($('inter_node'), [
    option(NO_LINK, 'None (1 node)'),
    ...inter.map((i) => option(i.id, i.name || i.id, i.source)),
  ]);
  for (const f of FIELDS) applySchema(f);
  // The SLO's percentile pickers: the engine's choices, in people's words.
  for (const m of SLO_METRICS) {
    const p = parameterAt(`${SLO}/percentiles/${m}`);
    const values = p && Array.isArray(p.choices) ? p.choices.map(String) : [];
    fillSelect($(`sim_slo_${m}_pct`), values.map((v) => option(v, v === SLO_JOINT ? 'Joint (attainment)' : v.toUpperCase())));
    for (const id of [`sim_slo_${m}`, `sim_slo_${m}_pct`]) {
      $(id).addEventListener('input', showSloAttainment);
      $(id).addEventListener('change', showSloAttainment);
    }
  }
  fillSelect($('spec_draft'), [option(NO_LINK, 'None'), ...models.map((m) => option(m.id, m.name || m.id, m.source))]);
  for (const id of ['sim_kv_tier1', 'sim_kv_tier2']) {
    fillSelect($(id), [option(NO_LINK, 'None (HBM only)'), ...kvTiers.map((t) => option(t.id, t.name || t.id, t.source))]);
  }
  for (const prefix of LENGTH_PREFIXES) {
    $(`${prefix}_dist`).addEventListener('change', () => showDistParams(prefix));
    for (const p of ['mean', 'min', 'max']) $(`${prefix}_${p}`).addEventListener('input', () => showDistParams(prefix));
    // Typing a length makes it fixed.
    $(`${prefix}_tokens`).addEventListener('input', () => {
      if (current !== SIM) return;
      $(`${prefix}_dist`).value = 'fixed';
      showDistParams(prefix);
    });
  }
  $('sess_think_dist').addEventListener('change', showThinkParams);
  $('sess_enabled').addEventListener('change', showSessionMode);
  $('sim_arrival').addEventListener('change', showArrivalFields);
  $('spec_method').addEventListener('change', showDependent);
  $('train_recompute').addEventListener('change', showDependent);
  for (const f of FIELDS) {
    if (!f.clears) continue;
    $(f.id).addEventListener('input', () => { $(f.clears).value = ''; });
  }
  for (const t of TOGGLES()) $(t.id).addEventListener('change', (e) => setGroupEnabled(t.toggles, e.target.checked));
}

/** What an input shows when the scenario lacks its key: the engine's default, or the form's starting value. */
function defaultOf(f) {
  if (f.showDefault) {
    const p = parameterAt(f.schema || f.path);
    if (!p || p.default === undefined) throw new Error(`The engine's parameter schema has no default for ${f.schema || f.path}`);
    return p.default;
  }
  return f.def;
}

/** What an input shows for a scenario, as its comparable value. */
function shownValue(f, scenario) {
  if (f.show) return f.show(scenario);
  const value = getAt(scenario, f.path);
  switch (f.kind) {
    case 'int':
    case 'number':
      if (value === undefined || value === null) return defaultOf(f) === undefined ? '' : String(defaultOf(f));
      return String(value);
    case 'bool':
      return typeof value === 'boolean' ? value : Boolean(defaultOf(f));
    case 'toggle':
      return Boolean(value && typeof value === 'object');
    case 'targets':
      return Array.isArray(value) ? value.map(String) : (defaultOf(f) || []);
    default:
      if (value === undefined || value === null) {
        if (f.optional) return NO_LINK;
        const d = defaultOf(f);
        return d === undefined ? ($(f.id).options[0] || { value: '' }).value : String(d);
      }
      return String(value);
  }
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
let filled = new Map();  // field id -> the value fill() put in the input
let current = 'latency'; // the form section fill() showed

/** Fills the inputs from a scenario and shows the fieldsets of its section. */
export function fill(scenario) {
  const section = formSection(scenario);
  current = section;
  for (const node of document.querySelectorAll('#scenario-form [data-section]')) node.hidden = !sectionMatches(node.dataset.section, section);
  filled = new Map();
  for (const f of FIELDS) {
    const input = $(f.id);
    if (f.kind === 'model') {
      const id = modelPresetId(getAt(scenario, f.path));
      if (id === null) {
        ensureOption(input, CUSTOM_MODEL, 'Custom model (from the scenario)');
        input.value = CUSTOM_MODEL;
      } else {
        ensureOption(input, id);
        input.value = id;
      }
      continue;
    }
    const shown = shownValue(f, scenario);
    setInput(f, shown);
    filled.set(f.id, inputValue(f));
  }
  for (const t of TOGGLES()) setGroupEnabled(t.toggles, $(t.id).checked);
  for (const prefix of LENGTH_PREFIXES) showDistParams(prefix);
  showThinkParams();
  // The scenario just filled in sets the run-until-decided box afresh: no earlier choice to bring back.
  $('sim_steady_state').disabled = false;
  showSessionMode();
  showArrivalFields();
  showDependent();
  showSloAttainment();
}

/** Writes one field's input value into a scenario (the sweep writes its values through this too). */
export function writeField(scenario, f, value) {
  if (f.write) return f.write(scenario, value);
  switch (f.kind) {
    case 'int': return setAt(scenario, f.path, typeof value === 'number' ? value : parseInteger(value));
    case 'number': return setAt(scenario, f.path, typeof value === 'number' ? value : parseNumber(value));
    case 'bool': return setAt(scenario, f.path, Boolean(value));
    case 'targets': return setAt(scenario, f.path, [...value]);
    default: return setAt(scenario, f.path, f.optional && value === NO_LINK ? undefined : value);
  }
}

/** The scenario described by the form: a copy of `base` with every edited field applied. */
export function read(base) {
  const scenario = structuredClone(base);
  const section = formSection(base);
  const groupOn = new Map();
  const groupNew = new Map();
  for (const t of TOGGLES()) {
    const on = $(t.id).checked;
    groupOn.set(t.toggles, on);
    groupNew.set(t.toggles, on && !shownValue(t, base));
  }
  for (const f of fieldsOf(section)) {
    const input = $(f.id);
    if (f.kind === 'model') {
      const chosen = input.value;
      // Keep the scenario's own model (with its overrides) while its preset is selected.
      if (chosen !== CUSTOM_MODEL && chosen !== modelPresetId(base.model)) scenario.model = chosen;
      continue;
    }
    if (f.group && !groupOn.get(f.group)) continue;
    const value = inputValue(f);
    const forced = Boolean(f.group) && groupNew.get(f.group);  // a new LoRA / speculative section takes every shown value
    if (!forced && filled.has(f.id) && same(value, filled.get(f.id))) continue;
    writeField(scenario, f, value);
  }
  // An SLO whose every bound was cleared is no SLO (the engine refuses an empty one).
  const slo = getAt(scenario, SLO);
  if (slo && typeof slo === 'object' && !SLO_METRICS.some((m) => slo[`${m}_ms`] !== undefined)) setAt(scenario, SLO, undefined);
  return scenario;
}

/** The field an error's JSON pointer refers to: exact match, else the longest enclosing path. */
export function fieldForPath(path) {
  if (typeof path !== 'string' || path === '') return null;
  let best = null;
  let bestLength = -1;
  // Fields of the shown section first (two fields may edit the same path in different sections).
  const order = [...fieldsOf(current), ...FIELDS.filter((f) => !sectionMatches(f.section, current))];
  for (const f of order) {
    for (const p of [f.path, ...(f.aliases || [])]) {
      if ((path === p || path.startsWith(`${p}/`)) && p.length > bestLength) {
        best = f;
        bestLength = p.length;
      }
    }
  }
  return best;
}

export function clearInvalid() {
  for (const f of FIELDS) {
    const input = $(f.id);
    input.classList.remove('invalid');
    input.removeAttribute('aria-invalid');
    input.removeAttribute('aria-describedby');
  }
}

/** Highlights the input matching `path`; returns its id or null. */
export function markInvalid(path) {
  clearInvalid();
  const f = fieldForPath(path);
  if (!f) return null;
  const input = $(f.id);
  input.classList.add('invalid');
  input.setAttribute('aria-invalid', 'true');
  input.setAttribute('aria-describedby', 'error');
  return f.id;
}
