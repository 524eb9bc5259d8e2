// The form <-> scenario mapping: which input edits which JSON path, filling the
// inputs from a scenario, reading an edited scenario back, and highlighting the
// input an engine error points at. Everything is set with textContent/value.

export const DTYPES = ['fp32', 'bf16', 'fp16', 'fp8', 'int8', 'int4'];

const CUSTOM_MODEL = '__custom__';
const NO_LINK = '';

/**
 * Each form field edits one JSON pointer of the scenario. `kind`:
 *   int    – integer input; empty removes the key (engine default), non-integers
 *            are passed through as text so the engine reports a located type error
 *   select – string value; `optional` selects remove the key when empty
 */
export const FIELDS = [
  { id: 'model', path: '/model', kind: 'model' },
  { id: 'gpu', path: '/hardware/gpu', kind: 'select' },
  { id: 'gpus_per_node', path: '/hardware/gpus_per_node', kind: 'int' },
  { id: 'intra_node', path: '/hardware/intra_node', kind: 'select', optional: true },
  { id: 'tp', path: '/serving/parallelism/tp', kind: 'int' },
  { id: 'pp', path: '/serving/parallelism/pp', kind: 'int' },
  { id: 'prompt_tokens', path: '/serving/workload/prompt_tokens', kind: 'int' },
  { id: 'output_tokens', path: '/serving/workload/output_tokens', kind: 'int' },
  { id: 'batch_size', path: '/serving/workload/batch_size', kind: 'int' },
  { id: 'weights', path: '/precision/weights', kind: 'select' },
  { id: 'activations', path: '/precision/activations', kind: 'select' },
  { id: 'kv_cache', path: '/precision/kv_cache', kind: 'select' },
];

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

export function setAt(obj, path, value) {
  const parts = pointerParts(path);
  let cur = obj;
  for (const key of parts.slice(0, -1)) {
    if (cur[key] === null || typeof cur[key] !== 'object') cur[key] = {};
    cur = cur[key];
  }
  const last = parts[parts.length - 1];
  if (value === undefined) delete cur[last];
  else cur[last] = value;
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

/** Builds every dropdown from the engine's preset lists. */
export function populate({ scenarios, models, gpus, interconnects }) {
  fillSelect(el('scenario'), scenarios.map((s) => option(s.id, `${s.id} — ${s.title || s.name || ''}`, s.source)));
  fillSelect(el('model'), models.map((m) => option(m.id, m.name || m.id, m.source)));
  fillSelect(el('gpu'), gpus.map((g) => option(g.id, g.name || g.id, g.source)));
  const intra = interconnects.filter((i) => !i.scope || i.scope === 'intra_node');
  fillSelect(el('intra_node'), [
    option(NO_LINK, 'None (1 GPU)'),
    ...intra.map((i) => option(i.id, i.name || i.id, i.source)),
  ]);
  for (const id of ['weights', 'activations', 'kv_cache']) fillSelect(el(id), DTYPES.map((d) => option(d, d)));
}

/** Fills the inputs from a scenario. */
export function fill(scenario) {
  for (const f of FIELDS) {
    const input = el(f.id);
    const value = getAt(scenario, f.path);
    if (f.kind === 'model') {
      const id = modelPresetId(value);
      if (id === null) {
        ensureOption(input, CUSTOM_MODEL, 'Custom model (from the scenario)');
        input.value = CUSTOM_MODEL;
      } else {
        ensureOption(input, id);
        input.value = id;
      }
    } else if (f.kind === 'int') {
      input.value = value === undefined || value === null ? '' : String(value);
    } else {
      const v = value === undefined || value === null ? (f.optional ? NO_LINK : 'bf16') : String(value);
      ensureOption(input, v);
      input.value = v;
    }
  }
}

function parseInteger(text) {
  const t = text.trim();
  if (t === '') return undefined;
  if (/^[+-]?\d+$/.test(t)) return Number(t);
  return t;  // not an integer: let the engine report a located type error
}

/** The scenario described by the form: a copy of `base` with every field applied. */
export function read(base) {
  const scenario = structuredClone(base);
  for (const f of FIELDS) {
    const input = el(f.id);
    if (f.kind === 'model') {
      const chosen = input.value;
      // Keep the scenario's own model (with its overrides) while its preset is selected.
      if (chosen !== CUSTOM_MODEL && chosen !== modelPresetId(base.model)) scenario.model = chosen;
    } else if (f.kind === 'int') {
      setAt(scenario, f.path, parseInteger(input.value));
    } else {
      const v = input.value;
      setAt(scenario, f.path, f.optional && v === NO_LINK ? undefined : v);
    }
  }
  return scenario;
}

/** The field an error's JSON pointer refers to: exact match, else the longest enclosing path. */
export function fieldForPath(path) {
  if (typeof path !== 'string' || path === '') return null;
  let best = null;
  for (const f of FIELDS) {
    if (path === f.path || path.startsWith(f.path + '/')) {
      if (!best || f.path.length > best.path.length) best = f;
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
