// The scenario as the form sees it: values at JSON pointers, the section a
// scenario's form shows (latency, serving simulation or training), and the
// text of an input read as a number. No DOM: the field table (form-fields.js),
// its workload fields (form-workload.js) and the form (form.js) share these.

// A pointer's tokens, read once per pointer: filling and reading the form walks
// each field's path on every run (~7 ms of the first result's, split anew).
const POINTER_PARTS = new Map();

function pointerParts(path) {
  let parts = POINTER_PARTS.get(path);
  if (!parts) {
    parts = Object.freeze(path.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~')));
    POINTER_PARTS.set(path, parts);
  }
  return parts;
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

/** The form section of a serving simulation (serving.mode "simulate"). */
export const SIM = 'simulate';

/** The form's finer section: 'training', 'simulate' (serving.mode simulate) or 'latency'. */
export function formSection(scenario) {
  if (sectionOf(scenario) === 'training') return 'training';
  const mode = scenario && scenario.serving && scenario.serving.mode;
  return mode === SIM ? SIM : 'latency';
}

/**
 * Whether a field or element tagged `tag` (data-section) shows in form section
 * `section`: 'serving' covers both serving modes ('latency' and 'simulate').
 */
export function sectionMatches(tag, section) {
  if (!tag) return true;
  if (tag === section) return true;
  if (tag === 'serving') return section === 'latency' || section === 'simulate' || section === 'serving';
  if (section === 'serving') return tag === 'latency';
  return false;
}

/** An integer input's text: a number, undefined when empty, else the text itself (the engine reports a located type error). */
export function parseInteger(text) {
  const t = String(text).trim();
  if (t === '') return undefined;
  if (/^[+-]?\d+$/.test(t)) return Number(t);
  return t;  // not an integer: let the engine report a located type error
}

/** A number input's text: a finite number, undefined when empty, else the text itself. */
export function parseNumber(text) {
  const t = String(text).trim();
  if (t === '') return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : t;
}
