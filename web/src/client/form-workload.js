// The serving workload's fields, built by kind: token counts, multi-turn
// sessions (turns, lengths, think time), the arrival process and its own
// parameters, and the length distributions. Each builder gives form-fields.js
// entries of FIELDS ({id, path, kind, show, write}); the rules of which of
// them show (form-visibility.js) read the constants exported here.
import { policyList } from './catalogue.js';
import { $ } from './dom.js';
import { getAt, setAt, parseInteger, parseNumber, SIM } from './form-paths.js';
import { inputValue } from './form-controls.js';

/** Token counts: an integer shows as itself, a distribution object as empty (kept unless edited). */
export function tokensField(id, path) {
  return {
    id, path, kind: 'int', section: 'serving',
    show: (s) => {
      const v = getAt(s, path);
      return typeof v === 'number' ? String(v) : '';
    },
    write: (s, v) => {
      const n = parseInteger(v);
      if (n !== undefined) setAt(s, path, n);  // empty: the scenario's own value (a distribution) stays
    },
  };
}

export const SESSIONS = '/serving/workload/sessions';
// The per-request workload keys a sessions workload replaces (the engine refuses
// them beside `sessions`): turned off in the form while sessions are on.
const REQUEST_WORKLOAD_KEYS = ['num_requests', 'duration_s', 'prompt_tokens', 'output_tokens', 'shared_prefix'];
export const REQUEST_WORKLOAD_FIELDS = ['prompt_tokens', 'output_tokens', 'prompt_dist', 'output_dist', 'sim_num_requests', 'sim_duration',
  'prefix_enabled', ...['prompt', 'output'].flatMap((w) => ['min', 'max', 'mean', 'stddev', 'cv', 'theta'].map((p) => `${w}_${p}`))];

/**
 * Multi-turn sessions (serving.workload.sessions): the checkbox adds a sessions
 * workload (every shown session field written) in place of the per-request
 * count, lengths and shared prefix, or takes it away, putting back the request
 * count and lengths the form shows (an empty one is left for the engine to ask for).
 */
export function sessionsToggle() {
  return {
    id: 'sess_enabled', path: SESSIONS, kind: 'toggle', toggles: 'sessions', section: SIM,
    write: (s, on) => {
      if (on) {
        for (const k of REQUEST_WORKLOAD_KEYS) setAt(s, `/serving/workload/${k}`, undefined);
        return;
      }
      setAt(s, SESSIONS, undefined);
      setAt(s, '/serving/workload/num_sessions', undefined);
      for (const [id, key] of [['sim_num_requests', 'num_requests'], ['prompt_tokens', 'prompt_tokens'], ['output_tokens', 'output_tokens']]) {
        const n = parseInteger($(id).value);
        if (n !== undefined && getAt(s, `/serving/workload/${key}`) === undefined) setAt(s, `/serving/workload/${key}`, n);
      }
    },
  };
}

/** Turns per session, min and max of a uniform draw (one number when they are equal). */
export function turnsField(id, bound, def) {
  const path = `${SESSIONS}/turns`;
  return {
    id, path: `${path}/${bound}`, kind: 'int', section: SIM, group: 'sessions',
    show: (s) => {
      const t = getAt(s, path);
      if (typeof t === 'number') return String(t);
      if (t && typeof t === 'object' && t[bound] !== undefined) return String(t[bound]);
      return t === undefined ? String(def) : '';
    },
    write: (s) => {
      const lo = parseInteger($('sess_turns_min').value);
      const hi = parseInteger($('sess_turns_max').value);
      if (lo === undefined || hi === undefined) return;
      setAt(s, path, lo === hi ? lo : { dist: 'uniform', min: lo, max: hi });
    },
  };
}

/** A session's token count (one number) with the form's starting value when the scenario has none. */
export function sessionTokensField(id, key, def) {
  const f = tokensField(id, `${SESSIONS}/${key}`);
  return { ...f, section: SIM, group: 'sessions', show: (s) => (getAt(s, f.path) === undefined ? String(def) : f.show(s)) };
}

// Think or tool time between a session's turns: seconds, or a distribution
// (the engine's read_time: fixed value_s, uniform min_s/max_s, exponential
// mean_s, lognormal mean_s and cv); these are the inputs each one shows.
const THINK = `${SESSIONS}/think_time_s`;
export const THINK_PARAMS = { fixed: ['mean'], uniform: ['min', 'max'], exponential: ['mean'], lognormal: ['mean', 'cv'] };
export const THINK_KEYS = { mean: 'mean_s', cv: 'cv', min: 'min_s', max: 'max_s' };
const THINK_DEFAULT = { dist: 'exponential', mean_s: 10 };

function thinkValue(s) {
  const t = getAt(s, THINK);
  return t === undefined ? THINK_DEFAULT : t;
}

function writeThink(s) {
  const dist = $('sess_think_dist').value;
  const value = (p) => parseNumber($(`sess_think_${p}`).value);
  if (dist === 'fixed') {
    const v = value('mean');
    if (v !== undefined) setAt(s, THINK, v);
    return;
  }
  const t = { dist };
  for (const p of THINK_PARAMS[dist] || []) {
    const v = value(p);
    if (v !== undefined) t[THINK_KEYS[p]] = v;
  }
  setAt(s, THINK, t);
}

export function thinkFields() {
  const select = {
    id: 'sess_think_dist', path: `${THINK}/dist`, kind: 'select', section: SIM, group: 'sessions',
    show: (s) => {
      const t = thinkValue(s);
      return typeof t === 'number' ? 'fixed' : String(t.dist);
    },
    write: writeThink,
  };
  const params = Object.entries(THINK_KEYS).map(([p, key]) => ({
    id: `sess_think_${p}`, path: `${THINK}/${key}`, kind: 'number', section: SIM, group: 'sessions',
    show: (s) => {
      const t = thinkValue(s);
      if (typeof t === 'number') return p === 'mean' ? String(t) : '';
      const v = p === 'mean' && t.dist === 'fixed' ? t.value_s : t[key];
      return v === undefined || v === null ? '' : String(v);
    },
    write: writeThink,
  }));
  return [select, ...params];
}

export const ARRIVAL = '/serving/workload/arrival';

/**
 * The engine's rules of an arrival process (its registry, policy_registry.cpp):
 * the keys beside `process` it takes, and whether the steady-state verdict judges it.
 */
export function arrivalRules(process) {
  const e = policyList('arrival_processes').find((x) => x.name === process);
  return { keys: (e && e.keys) || [], judged: Boolean(e && e.steady_state_judged) };
}

// The field of each arrival parameter (its key beside `process`), as arrivalField made it.
const ARRIVAL_FIELDS = new Map();

/** An input of the arrival process's own parameters: shown, and written, only while the process takes its key. */
export function arrivalField(id, key, kind) {
  const path = `${ARRIVAL}/${key}`;
  const f = {
    id, path, kind, section: SIM, arrivalKey: key,
    parse: (v) => (typeof v === 'number' ? v : (kind === 'int' ? parseInteger : parseNumber)(v)),
    write: (s, v) => { if (fieldApplies(s, f)) setAt(s, path, f.parse(v)); },
  };
  ARRIVAL_FIELDS.set(key, f);
  return f;
}

/**
 * A new arrival process keeps the scenario's values of the keys it takes, takes
 * the form's for the others it takes, and drops the keys it does not take (an
 * offline batch has no rate), so switching never leaves a key the engine refuses.
 */
export function writeArrivalProcess(s, process) {
  const old = getAt(s, ARRIVAL) || {};
  const next = { process };
  for (const key of arrivalRules(process).keys) {
    const f = ARRIVAL_FIELDS.get(key);
    if (old[key] !== undefined) next[key] = old[key];
    else if (f && inputValue(f) !== '') next[key] = f.parse(inputValue(f));
  }
  setAt(s, ARRIVAL, next);
}

/**
 * Whether field `f` is written into `scenario`: a parameter of an arrival
 * process other than the scenario's is not (a sweep of it would repeat one point).
 */
export function fieldApplies(scenario, f) {
  return !f.arrivalKey || arrivalRules(getAt(scenario, `${ARRIVAL}/process`)).keys.includes(f.arrivalKey);
}

// Length distributions of prompt_tokens / output_tokens: an integer ('fixed') or a {"dist": ...} object
// (the names come from the engine's length_distributions table; these are the inputs each one shows).
export const DIST_PARAMS = {
  fixed: [], uniform: ['min', 'max'], normal: ['mean', 'stddev', 'min', 'max'],
  lognormal: ['mean', 'cv', 'min', 'max'], zipf: ['min', 'max', 'theta'],
};
export const PARAMS = ['min', 'max', 'mean', 'stddev', 'cv', 'theta'];
// The length fields with a distribution: a request's prompt and output, a session turn's input and output.
export const LENGTH_PREFIXES = ['prompt', 'output', 'sess_in', 'sess_out'];
const INT_PARAMS = new Set(['min', 'max']);

function distOf(v) {
  if (v && typeof v === 'object' && typeof v.dist === 'string') return v.dist;
  return 'fixed';
}

/** The distribution selector of a length (`prefix` 'prompt' | 'output') and its parameter inputs. */
export function distFields(prefix, path) {
  const parse = (p, t) => (INT_PARAMS.has(p) ? parseInteger(t) : parseNumber(t));
  const select = {
    id: `${prefix}_dist`, path, schema: `${path}/dist`, kind: 'select', section: SIM,
    show: (s) => distOf(getAt(s, path)),
    write: (s, v) => {
      const cur = getAt(s, path);
      if (v === 'fixed') {
        // A fixed length is the plain integer: the token field's, else the distribution's mean (or min).
        const n = parseInteger($(`${prefix}_tokens`).value);
        if (n !== undefined) return setAt(s, path, n);
        if (cur && typeof cur === 'object') {
          const x = Number(cur.value ?? cur.mean ?? cur.min);
          if (Number.isFinite(x)) setAt(s, path, Math.max(1, Math.round(x)));
        }
        return undefined;
      }
      const obj = { dist: v };
      for (const p of DIST_PARAMS[v] || []) {
        const x = parse(p, $(`${prefix}_${p}`).value);
        if (x !== undefined) obj[p] = x;
      }
      return setAt(s, path, obj);
    },
  };
  const params = PARAMS.map((p) => ({
    id: `${prefix}_${p}`, path: `${path}/${p}`, kind: INT_PARAMS.has(p) ? 'int' : 'number', section: SIM, distParam: p,
    show: (s) => {
      const v = getAt(s, path);
      return v && typeof v === 'object' && v[p] !== undefined && v[p] !== null ? String(v[p]) : '';
    },
    write: (s, value) => {
      const cur = getAt(s, path);
      // Only a parameter of the chosen distribution is written (a hidden one stays out).
      if (!cur || typeof cur !== 'object' || !(DIST_PARAMS[cur.dist] || []).includes(p)) return;
      setAt(s, `${path}/${p}`, parse(p, value));
    },
  }));
  return [select, ...params];
}

/** num_requests and duration_s exclude each other: setting one removes the other. */
export function exclusive(path, other, parse) {
  return (s, v) => {
    const n = typeof v === 'number' ? v : parse(v);
    setAt(s, path, n);
    if (n !== undefined) setAt(s, other, undefined);
  };
}
