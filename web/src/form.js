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

export const DTYPES = ['fp32', 'bf16', 'fp16', 'fp8', 'int8', 'int4'];
export const LORA_TARGETS = ['q', 'k', 'v', 'o', 'up', 'gate', 'down'];

const CUSTOM_MODEL = '__custom__';
const NO_LINK = '';

function pointerParts(path) {
  return path.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function getAt(obj, path) {
  let cur = obj;
  for (const key of pointerParts(path)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = cur[key];
  }
  return cur;
}

/** Sets the value at a JSON pointer (creating parents); undefined removes it (creating nothing). */
export function setAt(obj, path, value) {
  const parts = pointerParts(path);
  let cur = obj;
  for (const key of parts.slice(0, -1)) {
    if (cur[key] === null || typeof cur[key] !== 'object') {
      if (value === undefined) return;
      cur[key] = {};
    }
    cur = cur[key];
  }
  const last = parts[parts.length - 1];
  if (value === undefined) delete cur[last];
  else cur[last] = value;
}

/** 'training' when the scenario has a training section, else 'serving'. */
export function sectionOf(scenario) {
  return scenario && typeof scenario === 'object' && scenario.training && typeof scenario.training === 'object'
    ? 'training' : 'serving';
}

const TRAINING_PAR = '/training/parallelism';

/**
 * Each form field edits one JSON pointer of the scenario. `kind`:
 *   int     – integer input; empty removes the key (engine default), non-integers
 *             are passed through as text so the engine reports a located type error
 *   number  – like int, for any number (1e12 tokens, 2.5 USD)
 *   select  – string value; `optional` selects remove the key when empty
 *   bool    – checkbox
 *   targets – a group of checkboxes giving a list of strings
 *   lora    – checkbox that adds or removes a whole object (the fields of its
 *             `group` are enabled only while it is checked)
 * `section`: 'serving' | 'training' (absent: every scenario). `def`: what the
 * input shows when the scenario lacks the key (the engine default). `show` and
 * `write` replace the plain path mapping; `aliases` are other paths whose errors
 * point at this field; `clears` names an input emptied when this one is edited.
 */
export const FIELDS = [
  { id: 'model', path: '/model', kind: 'model' },
  { id: 'gpu', path: '/hardware/gpu', kind: 'select' },
  { id: 'gpus_per_node', path: '/hardware/gpus_per_node', kind: 'int' },
  { id: 'nodes', path: '/hardware/nodes', kind: 'int' },
  { id: 'intra_node', path: '/hardware/intra_node', kind: 'select', optional: true },
  { id: 'inter_node', path: '/hardware/inter_node', kind: 'select', optional: true },
  { id: 'tp', path: '/serving/parallelism/tp', kind: 'int', section: 'serving' },
  { id: 'pp', path: '/serving/parallelism/pp', kind: 'int', section: 'serving' },
  { id: 'prompt_tokens', path: '/serving/workload/prompt_tokens', kind: 'int', section: 'serving' },
  { id: 'output_tokens', path: '/serving/workload/output_tokens', kind: 'int', section: 'serving' },
  { id: 'batch_size', path: '/serving/workload/batch_size', kind: 'int', section: 'serving' },
  { id: 'weights', path: '/precision/weights', kind: 'select' },
  { id: 'activations', path: '/precision/activations', kind: 'select' },
  { id: 'kv_cache', path: '/precision/kv_cache', kind: 'select', section: 'serving' },

  // training: parallelism
  { id: 'train_dp', path: `${TRAINING_PAR}/dp`, kind: 'int', section: 'training', def: 1, gpus: true },
  { id: 'train_tp', path: `${TRAINING_PAR}/tp`, kind: 'int', section: 'training', def: 1, gpus: true },
  { id: 'train_pp', path: `${TRAINING_PAR}/pp`, kind: 'int', section: 'training', def: 1, gpus: true },
  { id: 'train_cp', path: `${TRAINING_PAR}/cp`, kind: 'int', section: 'training', def: 1, gpus: true },
  { id: 'train_ep', path: `${TRAINING_PAR}/ep`, kind: 'int', section: 'training', def: 1 },
  { id: 'train_vstages', path: `${TRAINING_PAR}/virtual_stages`, kind: 'int', section: 'training', def: 1 },
  {
    id: 'train_zero', path: `${TRAINING_PAR}/zero_stage`, kind: 'select', section: 'training',
    aliases: [`${TRAINING_PAR}/fsdp`],
    show: (s) => {
      const par = getAt(s, TRAINING_PAR) || {};
      if (par.fsdp === true && par.zero_stage === undefined) return '3';
      return par.zero_stage === undefined || par.zero_stage === null ? '0' : String(par.zero_stage);
    },
    write: (s, v) => {
      setAt(s, `${TRAINING_PAR}/fsdp`, undefined);
      setAt(s, `${TRAINING_PAR}/zero_stage`, /^\d+$/.test(v) ? Number(v) : v);
    },
  },
  { id: 'train_sp', path: `${TRAINING_PAR}/sequence_parallel`, kind: 'bool', section: 'training', def: false },

  // training: batch
  { id: 'train_seq_len', path: '/training/batch/seq_len', kind: 'int', section: 'training' },
  { id: 'train_mbs', path: '/training/batch/micro_batch_size', kind: 'int', section: 'training', def: 1 },
  {
    id: 'train_gbs', path: '/training/batch/global_batch_size', kind: 'int', section: 'training', clears: 'train_ga',
    write: (s, v) => {
      const n = parseInteger(v);
      setAt(s, '/training/batch/global_batch_size', n);
      if (n !== undefined) setAt(s, '/training/batch/gradient_accumulation', undefined);
    },
  },
  {
    id: 'train_ga', path: '/training/batch/gradient_accumulation', kind: 'int', section: 'training', clears: 'train_gbs',
    write: (s, v) => {
      const n = parseInteger(v);
      setAt(s, '/training/batch/gradient_accumulation', n);
      if (n !== undefined) setAt(s, '/training/batch/global_batch_size', undefined);
    },
  },

  // training: techniques
  { id: 'train_schedule', path: '/training/schedule', kind: 'select', section: 'training', def: '1f1b' },
  {
    id: 'train_recompute', path: '/training/recompute', kind: 'select', section: 'training', def: 'none',
    show: (s) => {
      const r = getAt(s, '/training/recompute');
      if (r && typeof r === 'object' && typeof r.mode === 'string') return r.mode;
      return typeof r === 'string' ? r : 'none';
    },
  },
  { id: 'train_fp8', path: '/training/fp8', kind: 'select', section: 'training', def: 'none' },
  { id: 'train_optimizer', path: '/training/optimizer/type', kind: 'select', section: 'training', def: 'adamw' },
  { id: 'train_offload', path: '/training/optimizer/cpu_offload', kind: 'bool', section: 'training', def: false },

  // training: LoRA
  {
    id: 'lora_enabled', path: '/training/lora', kind: 'lora', section: 'training',
    write: (s, on) => { if (!on) setAt(s, '/training/lora', undefined); },
  },
  { id: 'lora_rank', path: '/training/lora/rank', kind: 'int', section: 'training', group: 'lora', def: 16 },
  { id: 'lora_targets', path: '/training/lora/targets', kind: 'targets', section: 'training', group: 'lora', def: ['q', 'v'] },
  { id: 'lora_base_dtype', path: '/training/lora/base_dtype', kind: 'select', section: 'training', group: 'lora', def: 'bf16' },

  // training: token budget and cost
  { id: 'tokens_to_train', path: '/training/tokens_to_train', kind: 'number', section: 'training' },
  { id: 'gpu_hour_usd', path: '/cost_model/gpu_hour_usd', kind: 'number', section: 'training' },
];

/** The fields a scenario of `section` shows. */
export function fieldsOf(section) {
  return FIELDS.filter((f) => !f.section || f.section === section);
}

/** The preset id a scenario's `model` refers to, or null for an inline model. */
function modelPresetId(model) {
  if (typeof model === 'string') return model;
  if (model && typeof model === 'object' && typeof model.preset === 'string') return model.preset;
  return null;
}

function el(id) {
  return document.getElementById(id);
}

function option(value, text, title) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = text;
  if (title) o.title = title;
  return o;
}

function fillSelect(select, options) {
  select.replaceChildren(...options);
}

/** Makes sure `value` is one of the select's options (a scenario may name a preset not listed). */
function ensureOption(select, value, text) {
  if (![...select.options].some((o) => o.value === value)) select.append(option(value, text || value));
}

function targetBoxes() {
  return [...el('lora_targets').querySelectorAll('input[type="checkbox"]')];
}

/** The label text of a field (without its unit), for messages and the sweep picker. */
export function fieldLabel(id) {
  const label = document.querySelector(`label[for="${id}"]`);
  if (label && label.firstChild) return label.firstChild.textContent.trim();
  const input = el(id);
  const by = input && input.getAttribute('aria-labelledby');
  const named = by ? el(by) : null;
  return named ? named.textContent.trim() : id;
}

function setGroupEnabled(group, on) {
  for (const f of FIELDS) {
    if (f.group !== group) continue;
    const input = el(f.id);
    if (f.kind === 'targets') for (const box of targetBoxes()) box.disabled = !on;
    else input.disabled = !on;
    input.closest('.field')?.classList.toggle('disabled', !on);
  }
}

/** Builds every dropdown from the engine's preset lists and wires linked inputs. */
export function populate({ scenarios, models, gpus, interconnects }) {
  fillSelect(el('scenario'), scenarios.map((s) => option(s.id, `${s.id} — ${s.title || s.name || ''}`, s.source)));
  fillSelect(el('model'), models.map((m) => option(m.id, m.name || m.id, m.source)));
  fillSelect(el('gpu'), gpus.map((g) => option(g.id, g.name || g.id, g.source)));
  const intra = interconnects.filter((i) => !i.scope || i.scope === 'intra_node');
  fillSelect(el('intra_node'), [
    option(NO_LINK, 'None (1 GPU)'),
    ...intra.map((i) => option(i.id, i.name || i.id, i.source)),
  ]);
  const inter = interconnects.filter((i) => i.scope === 'inter_node');
  fillSelect(el('inter_node'), [
    option(NO_LINK, 'None (1 node)'),
    ...inter.map((i) => option(i.id, i.name || i.id, i.source)),
  ]);
  for (const id of ['weights', 'activations', 'kv_cache']) fillSelect(el(id), DTYPES.map((d) => option(d, d)));
  for (const f of FIELDS) {
    if (!f.clears) continue;
    el(f.id).addEventListener('input', () => { el(f.clears).value = ''; });
  }
  el('lora_enabled').addEventListener('change', (e) => setGroupEnabled('lora', e.target.checked));
}

/** What an input shows for a scenario, as its comparable value. */
function shownValue(f, scenario) {
  if (f.show) return f.show(scenario);
  const value = getAt(scenario, f.path);
  switch (f.kind) {
    case 'int':
    case 'number':
      if (value === undefined || value === null) return f.def === undefined ? '' : String(f.def);
      return String(value);
    case 'bool':
      return typeof value === 'boolean' ? value : Boolean(f.def);
    case 'lora':
      return Boolean(value && typeof value === 'object');
    case 'targets':
      return Array.isArray(value) ? value.map(String) : (f.def || []);
    default:
      if (value === undefined || value === null) return f.optional ? NO_LINK : (f.def ?? 'bf16');
      return String(value);
  }
}

/** The current value of an input, in the same shape as shownValue. */
function inputValue(f) {
  const input = el(f.id);
  if (f.kind === 'bool' || f.kind === 'lora') return input.checked;
  if (f.kind === 'targets') return targetBoxes().filter((b) => b.checked).map((b) => b.value);
  return input.value;
}

function setInput(f, value) {
  const input = el(f.id);
  if (f.kind === 'bool' || f.kind === 'lora') input.checked = Boolean(value);
  else if (f.kind === 'targets') {
    const set = new Set(value);
    for (const box of targetBoxes()) box.checked = set.has(box.value);
  } else if (f.kind === 'select') {
    ensureOption(input, value);
    input.value = value;
  } else input.value = value;
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
let filled = new Map();  // field id -> the value fill() put in the input

/** Fills the inputs from a scenario and shows the fieldsets of its section. */
export function fill(scenario) {
  const section = sectionOf(scenario);
  for (const node of document.querySelectorAll('#scenario-form [data-section]')) node.hidden = node.dataset.section !== section;
  filled = new Map();
  for (const f of FIELDS) {
    const input = el(f.id);
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
  setGroupEnabled('lora', el('lora_enabled').checked);
}

function parseInteger(text) {
  const t = String(text).trim();
  if (t === '') return undefined;
  if (/^[+-]?\d+$/.test(t)) return Number(t);
  return t;  // not an integer: let the engine report a located type error
}

function parseNumber(text) {
  const t = String(text).trim();
  if (t === '') return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : t;
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
  const section = sectionOf(base);
  const loraOn = el('lora_enabled').checked;
  const loraNew = loraOn && !shownValue(FIELDS.find((f) => f.id === 'lora_enabled'), base);
  for (const f of fieldsOf(section)) {
    const input = el(f.id);
    if (f.kind === 'model') {
      const chosen = input.value;
      // Keep the scenario's own model (with its overrides) while its preset is selected.
      if (chosen !== CUSTOM_MODEL && chosen !== modelPresetId(base.model)) scenario.model = chosen;
      continue;
    }
    if (f.group === 'lora' && !loraOn) continue;
    const value = inputValue(f);
    const forced = f.group === 'lora' && loraNew;  // a new LoRA section takes every shown value
    if (!forced && filled.has(f.id) && same(value, filled.get(f.id))) continue;
    writeField(scenario, f, value);
  }
  return scenario;
}

/** The field an error's JSON pointer refers to: exact match, else the longest enclosing path. */
export function fieldForPath(path) {
  if (typeof path !== 'string' || path === '') return null;
  let best = null;
  let bestLength = -1;
  for (const f of FIELDS) {
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
    const input = el(f.id);
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
  const input = el(f.id);
  input.classList.add('invalid');
  input.setAttribute('aria-invalid', 'true');
  input.setAttribute('aria-describedby', 'error');
  return f.id;
}
