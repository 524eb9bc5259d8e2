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

import { parameterAt, policyList } from './catalogue.js';
import { groupGpus } from './gpu-links.js';

const CUSTOM_MODEL = '__custom__';
const NO_LINK = '';
// The empty choice of a precision select: the model's own dtype (its checkpoint's, else the
// activations'; the fields' help says so). A pasted config that states its quantization
// shows it as "From the config (mxfp4)" (custom.js).
export const FROM_THE_MODEL = 'From the model';

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

/** The form's finer section: 'training', 'simulate' (serving.mode simulate) or 'latency'. */
export function formSection(scenario) {
  if (sectionOf(scenario) === 'training') return 'training';
  const mode = scenario && scenario.serving && scenario.serving.mode;
  return mode === 'simulate' ? 'simulate' : 'latency';
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

/** Token counts: an integer shows as itself, a distribution object as empty (kept unless edited). */
function tokensField(id, path) {
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

const SIM = 'simulate';

/** Speculative decoding and other toggled groups: the checkbox adds or removes the object. */
function toggleField(id, path, group) {
  return { id, path, kind: 'toggle', toggles: group, section: SIM, write: (s, on) => { if (!on) setAt(s, path, undefined); } };
}

/**
 * A checkbox for an engine option that is on when its object is present: checking it adds the
 * object ({} takes the engine's defaults), unchecking removes it; its own keys are kept while on.
 */
function blockField(id, path) {
  return {
    id, path, kind: 'bool', section: SIM,
    show: (s) => { const v = getAt(s, path); return Boolean(v && typeof v === 'object'); },
    write: (s, on) => {
      const v = getAt(s, path);
      setAt(s, path, on ? (v && typeof v === 'object' ? v : {}) : undefined);
    },
  };
}

/**
 * The router lives in serving.cluster; next to serving.parallelism the engine lays
 * the GPUs out as one pool of tp × pp replicas (no pools needed), so the page only
 * sets the router and leaves the layout to the engine.
 */
function writeRouter(s, v) {
  setAt(s, '/serving/cluster/router', v === NO_LINK ? undefined : v);
  const cluster = getAt(s, '/serving/cluster');
  if (cluster && typeof cluster === 'object' && !Object.keys(cluster).length) setAt(s, '/serving/cluster', undefined);
}

const KV_TIERS = '/serving/kv_cache/offload/tiers';

/**
 * The i-th KV offload tier (serving.kv_cache.offload.tiers[i]) as a kv_tiers
 * preset id; empty: none (and none after it). A tier written inline as an
 * object is kept as it is until its own select is changed.
 */
function kvTierField(i) {
  return {
    id: `sim_kv_tier${i + 1}`, path: `${KV_TIERS}/${i}`, kind: 'select', section: SIM, optional: true,
    show: (s) => {
      const t = getAt(s, `${KV_TIERS}/${i}`);
      return typeof t === 'string' ? t : NO_LINK;
    },
    write: (s, v) => {
      const current = getAt(s, KV_TIERS);
      const tiers = Array.isArray(current) ? current.slice() : [];
      if (v === NO_LINK) tiers.splice(i);
      else tiers[i] = v;
      if (tiers.some((t) => t === undefined)) return;  // a second tier without a first: left to the first's select
      if (tiers.length) setAt(s, KV_TIERS, tiers);
      else setAt(s, '/serving/kv_cache/offload', undefined);
    },
  };
}

const SESSIONS = '/serving/workload/sessions';
// The per-request workload keys a sessions workload replaces (the engine refuses
// them beside `sessions`): turned off in the form while sessions are on.
const REQUEST_WORKLOAD_KEYS = ['num_requests', 'duration_s', 'prompt_tokens', 'output_tokens', 'shared_prefix'];
const REQUEST_WORKLOAD_FIELDS = ['prompt_tokens', 'output_tokens', 'prompt_dist', 'output_dist', 'sim_num_requests', 'sim_duration',
  'prefix_enabled', ...['prompt', 'output'].flatMap((w) => ['min', 'max', 'mean', 'stddev', 'cv', 'theta'].map((p) => `${w}_${p}`))];

/**
 * Multi-turn sessions (serving.workload.sessions): the checkbox adds a sessions
 * workload (every shown session field written) in place of the per-request
 * count, lengths and shared prefix, or takes it away, putting back the request
 * count and lengths the form shows (an empty one is left for the engine to ask for).
 */
function sessionsToggle() {
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
        const n = parseInteger(el(id).value);
        if (n !== undefined && getAt(s, `/serving/workload/${key}`) === undefined) setAt(s, `/serving/workload/${key}`, n);
      }
    },
  };
}

/** Turns per session, min and max of a uniform draw (one number when they are equal). */
function turnsField(id, bound, def) {
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
      const lo = parseInteger(el('sess_turns_min').value);
      const hi = parseInteger(el('sess_turns_max').value);
      if (lo === undefined || hi === undefined) return;
      setAt(s, path, lo === hi ? lo : { dist: 'uniform', min: lo, max: hi });
    },
  };
}

/** A session's token count (one number) with the form's starting value when the scenario has none. */
function sessionTokensField(id, key, def) {
  const f = tokensField(id, `${SESSIONS}/${key}`);
  return { ...f, section: SIM, group: 'sessions', show: (s) => (getAt(s, f.path) === undefined ? String(def) : f.show(s)) };
}

// Think or tool time between a session's turns: seconds, or a distribution
// (the engine's read_time: fixed value_s, uniform min_s/max_s, exponential
// mean_s, lognormal mean_s and cv); these are the inputs each one shows.
const THINK = `${SESSIONS}/think_time_s`;
const THINK_PARAMS = { fixed: ['mean'], uniform: ['min', 'max'], exponential: ['mean'], lognormal: ['mean', 'cv'] };
const THINK_KEYS = { mean: 'mean_s', cv: 'cv', min: 'min_s', max: 'max_s' };
const THINK_DEFAULT = { dist: 'exponential', mean_s: 10 };

function thinkValue(s) {
  const t = getAt(s, THINK);
  return t === undefined ? THINK_DEFAULT : t;
}

function writeThink(s) {
  const dist = el('sess_think_dist').value;
  const value = (p) => parseNumber(el(`sess_think_${p}`).value);
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

function thinkFields() {
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

/** Shows the think-time inputs of the distribution chosen. */
function showThinkParams() {
  const chosen = THINK_PARAMS[el('sess_think_dist').value] || Object.keys(THINK_KEYS);
  for (const p of Object.keys(THINK_KEYS)) el(`sess_think_${p}`).closest('.field').hidden = !chosen.includes(p);
}

const ARRIVAL = '/serving/workload/arrival';

/**
 * The engine's rules of an arrival process (its registry, policy_registry.cpp):
 * the keys beside `process` it takes, and whether the steady-state verdict judges it.
 */
function arrivalRules(process) {
  const e = policyList('arrival_processes').find((x) => x.name === process);
  return { keys: (e && e.keys) || [], judged: Boolean(e && e.steady_state_judged) };
}

/** An input of the arrival process's own parameters: shown, and written, only while the process takes its key. */
function arrivalField(id, key, kind) {
  const path = `${ARRIVAL}/${key}`;
  const f = {
    id, path, kind, section: SIM, arrivalKey: key,
    parse: (v) => (typeof v === 'number' ? v : (kind === 'int' ? parseInteger : parseNumber)(v)),
    write: (s, v) => { if (fieldApplies(s, f)) setAt(s, path, f.parse(v)); },
  };
  return f;
}

/**
 * A new arrival process keeps the scenario's values of the keys it takes, takes
 * the form's for the others it takes, and drops the keys it does not take (an
 * offline batch has no rate), so switching never leaves a key the engine refuses.
 */
function writeArrivalProcess(s, process) {
  const old = getAt(s, ARRIVAL) || {};
  const next = { process };
  for (const key of arrivalRules(process).keys) {
    const f = FIELDS.find((x) => x.arrivalKey === key);
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

/** Shows the inputs of the chosen arrival process's own parameters, and no other's. */
function showArrivalFields() {
  const keys = arrivalRules(el('sim_arrival').value).keys;
  for (const f of FIELDS) if (f.arrivalKey) el(f.id).closest('.field').hidden = !keys.includes(f.arrivalKey);
  showSteadyState();
}

/** The session fields: the per-request workload inputs are off while sessions are on. */
function showSessionMode() {
  const on = el('sess_enabled').checked;
  for (const id of REQUEST_WORKLOAD_FIELDS) {
    el(id).disabled = on;
    el(id).closest('.field')?.classList.toggle('disabled', on);
  }
  // The shared prefix's own inputs follow its checkbox, and are off with it while sessions are on.
  setGroupEnabled('prefix', !on && el('prefix_enabled').checked);
  showSteadyState();
}

/** Why the engine would refuse serving.steady_state here ('' when it would not). */
function steadyStateRefusal() {
  // The engine's own rules (engine/scenario/simulation_spec.cpp, read_steady_state_check,
  // and its refusal beside sessions): it judges arrivals over time under an SLO.
  if (el('sess_enabled').checked) return 'The run-until-decided check does not apply to sessions';
  const arrival = el('sim_arrival').value;
  if (!arrivalRules(arrival).judged) return `The run-until-decided check needs arrivals with a rate (not ${arrival})`;
  if (!SLO_METRICS.some((m) => String(el(`sim_slo_${m}`).value).trim() !== '')) return 'The run-until-decided check needs an SLO to judge against';
  return '';
}

/**
 * The run-until-decided box is off, with the reason as its title, wherever the
 * engine would refuse it, rather than a located error until it is unticked;
 * the user's choice comes back with the conditions it needs.
 */
function showSteadyState() {
  const steady = el('sim_steady_state');
  const why = steadyStateRefusal();
  if (why && !steady.disabled) steady.dataset.wanted = steady.checked ? 'yes' : '';
  if (!why && steady.disabled) steady.checked = steady.dataset.wanted === 'yes';
  if (why) steady.checked = false;
  steady.disabled = Boolean(why);
  // Its help stays in its tooltip, after the reason when there is one.
  if (steady.dataset.help === undefined) steady.dataset.help = steady.title;
  steady.title = why ? `${why}. ${steady.dataset.help}` : steady.dataset.help;
  steady.closest('.field')?.classList.toggle('disabled', Boolean(why));
}

const TRAINING_PAR = '/training/parallelism';

// Length distributions of prompt_tokens / output_tokens: an integer ('fixed') or a {"dist": ...} object
// (the names come from the engine's length_distributions table; these are the inputs each one shows).
const DIST_PARAMS = {
  fixed: [], uniform: ['min', 'max'], normal: ['mean', 'stddev', 'min', 'max'],
  lognormal: ['mean', 'cv', 'min', 'max'], zipf: ['min', 'max', 'theta'],
};
const PARAMS = ['min', 'max', 'mean', 'stddev', 'cv', 'theta'];
// The length fields with a distribution: a request's prompt and output, a session turn's input and output.
const LENGTH_PREFIXES = ['prompt', 'output', 'sess_in', 'sess_out'];
const INT_PARAMS = new Set(['min', 'max']);

function distOf(v) {
  if (v && typeof v === 'object' && typeof v.dist === 'string') return v.dist;
  return 'fixed';
}

/** The distribution selector of a length (`prefix` 'prompt' | 'output') and its parameter inputs. */
function distFields(prefix, path) {
  const parse = (p, t) => (INT_PARAMS.has(p) ? parseInteger(t) : parseNumber(t));
  const select = {
    id: `${prefix}_dist`, path, kind: 'select', section: SIM,
    show: (s) => distOf(getAt(s, path)),
    write: (s, v) => {
      const cur = getAt(s, path);
      if (v === 'fixed') {
        // A fixed length is the plain integer: the token field's, else the distribution's mean (or min).
        const n = parseInteger(el(`${prefix}_tokens`).value);
        if (n !== undefined) return setAt(s, path, n);
        if (cur && typeof cur === 'object') {
          const x = Number(cur.value ?? cur.mean ?? cur.min);
          if (Number.isFinite(x)) setAt(s, path, Math.max(1, Math.round(x)));
        }
        return undefined;
      }
      const obj = { dist: v };
      for (const p of DIST_PARAMS[v] || []) {
        const x = parse(p, el(`${prefix}_${p}`).value);
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

/** Shows the parameter inputs of the distribution chosen for `prefix`. */
function showDistParams(prefix) {
  const chosen = DIST_PARAMS[el(`${prefix}_dist`).value] || PARAMS;
  for (const p of PARAMS) el(`${prefix}_${p}`).closest('.field').hidden = !chosen.includes(p);
}

/** num_requests and duration_s exclude each other: setting one removes the other. */
function exclusive(path, other, parse) {
  return (s, v) => {
    const n = typeof v === 'number' ? v : parse(v);
    setAt(s, path, n);
    if (n !== undefined) setAt(s, other, undefined);
  };
}

const MAX_QPS = '/serving/max_qps_search';
const POOLS = '/serving/cluster/pools';

function disaggPools(s) {
  const pools = getAt(s, POOLS);
  if (!Array.isArray(pools)) return null;
  const prefill = pools.find((p) => p && p.role === 'prefill');
  const decode = pools.find((p) => p && p.role === 'decode');
  return prefill && decode ? { prefill, decode } : null;
}

/**
 * What the disaggregation inputs show: the scenario's pools; else, until the engine
 * has laid the scenario out (showLayout), its tp and empty replica counts.
 */
function disaggShown(s, key) {
  const d = disaggPools(s);
  if (d) return String(key === 'tp' ? (d.prefill.tp ?? 1) : (d[key].replicas ?? ''));
  return key === 'tp' ? String(Number(getAt(s, '/serving/parallelism/tp')) || 1) : '';
}

/**
 * After a run without disaggregation: the disaggregation inputs offer the engine's own
 * layout (result.deployment, one pool of replicas) split in two halves, so turning it on
 * starts from the GPUs the engine counted rather than from a count the page makes.
 */
export function showLayout(deployment) {
  const pools = deployment && Array.isArray(deployment.pools) ? deployment.pools : [];
  if (pools.length !== 1 || el('disagg_enabled').checked) return;
  const { replicas, tp, pp } = pools[0];
  const n = (Number(replicas) || 1) * (Number(pp) || 1);  // a pp-stage replica's GPUs hold pp replicas at pp 1
  const prefill = Math.max(1, Math.floor(n / 2));
  const shown = { disagg_prefill: prefill, disagg_decode: Math.max(1, n - prefill), disagg_tp: Number(tp) || 1 };
  for (const [id, v] of Object.entries(shown)) {
    el(id).value = String(v);
    filled.set(id, String(v));
  }
}

/** Rebuilds the cluster as a prefill pool and a decode pool from the disaggregation inputs. */
function writeDisagg(s) {
  const serving = s.serving || (s.serving = {});
  const tp = parseInteger(el('disagg_tp').value) ?? 1;
  const pools = [
    { name: 'prefill', replicas: parseInteger(el('disagg_prefill').value), tp, role: 'prefill' },
    { name: 'decode', replicas: parseInteger(el('disagg_decode').value), tp, role: 'decode' },
  ];
  delete serving.parallelism;
  serving.cluster = { ...(serving.cluster || {}), pools };
}

/**
 * Unchecking disaggregation keeps the decode pool's tp × pp as serving.parallelism
 * and drops the pools: the engine lays the GPUs out as replicas of that layout.
 */
function writeDisaggToggle(s, on) {
  if (on) return writeDisagg(s);
  const d = disaggPools(s);
  if (!d) return undefined;
  const serving = s.serving;
  const cluster = { ...serving.cluster };
  delete cluster.pools;
  delete cluster.kv_transfer_link;
  if (Object.keys(cluster).length) serving.cluster = cluster;
  else delete serving.cluster;
  serving.parallelism = { tp: Number(d.decode.tp) || 1, pp: Number(d.decode.pp) || 1 };
  return undefined;
}

// The SLO: a bound per metric and how each is judged (serving.slo.percentiles):
// 'joint' (the default) counts it in the share of requests within every joint
// bound at once, which must reach `attainment`; p50…p99 judge it alone.
const SLO = '/serving/slo';
const SLO_METRICS = ['ttft', 'tpot', 'itl', 'e2e'];
const SLO_JOINT = 'joint';

/** Whether the scenario's SLO keeps a bound judged jointly (only then does `attainment` apply). */
function sloJointLeft(s) {
  const slo = getAt(s, SLO);
  if (!slo || typeof slo !== 'object') return false;
  const pct = slo.percentiles && typeof slo.percentiles === 'object' ? slo.percentiles : {};
  return SLO_METRICS.some((m) => Number(slo[`${m}_ms`]) > 0 && (pct[m] === undefined || pct[m] === SLO_JOINT));
}

/** The percentile picker of one SLO bound: 'joint' removes the key (the engine's default). */
function sloPercentileField(metric) {
  const path = `${SLO}/percentiles/${metric}`;
  return {
    id: `sim_slo_${metric}_pct`, path, kind: 'select', section: SIM,
    show: (s) => { const v = getAt(s, path); return typeof v === 'string' ? v : SLO_JOINT; },
    write: (s, v) => {
      setAt(s, path, v === SLO_JOINT ? undefined : v);
      const pct = getAt(s, `${SLO}/percentiles`);
      if (pct && typeof pct === 'object' && !Object.keys(pct).length) setAt(s, `${SLO}/percentiles`, undefined);
      // Every bound now names its percentile: the joint share has nothing left to judge.
      if (!sloJointLeft(s)) setAt(s, `${SLO}/attainment`, undefined);
    },
  };
}

/** The attainment input applies only while some bound shown is judged jointly. */
function showSloAttainment() {
  const joint = SLO_METRICS.some((m) => String(el(`sim_slo_${m}`).value).trim() !== '' && el(`sim_slo_${m}_pct`).value === SLO_JOINT);
  el('sim_slo_attainment').disabled = !joint;
  el('sim_slo_attainment').closest('.field').classList.toggle('disabled', !joint);
  showSteadyState();  // it needs an SLO
}

const RECOMPUTE = '/training/recompute';

function recomputeMode(s) {
  const r = getAt(s, RECOMPUTE);
  if (r && typeof r === 'object') return r.mode;
  return r;
}

/** A recompute option (every_n_layers of full, modules of selective) turns the mode string into an object. */
function recomputeOption(mode, key, parse) {
  return (s, v) => {
    if (recomputeMode(s) !== mode) return;  // the option of another mode stays out
    const value = parse(v);
    const r = getAt(s, RECOMPUTE);
    const obj = r && typeof r === 'object' ? { ...r } : { mode };
    if (value === undefined) delete obj[key];
    else obj[key] = value;
    setAt(s, RECOMPUTE, Object.keys(obj).length === 1 ? mode : obj);
  };
}

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
 * `section`: 'serving' | 'training' (absent: every scenario). `showDefault`: the
 * input shows the engine's default (its parameter schema, catalogue.js) when the
 * scenario lacks the key. `def`: the value a key the engine requires (the schema
 * has no default for it) starts with when the form adds its section. Ranges
 * (min/max), placeholders of defaults and the choices of selects without a preset
 * or policy list come from the schema too, by `path` (or `schema`). `show` and
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
  tokensField('prompt_tokens', '/serving/workload/prompt_tokens'),
  tokensField('output_tokens', '/serving/workload/output_tokens'),
  ...distFields('prompt', '/serving/workload/prompt_tokens'),
  ...distFields('output', '/serving/workload/output_tokens'),
  { id: 'batch_size', path: '/serving/workload/batch_size', kind: 'int', section: 'latency' },

  // serving simulation (serving.mode "simulate")
  { id: 'sim_arrival', path: `${ARRIVAL}/process`, kind: 'select', section: SIM, def: 'poisson', write: writeArrivalProcess },
  arrivalField('sim_rate', 'rate_qps', 'number'),
  {
    id: 'sim_num_requests', path: '/serving/workload/num_requests', kind: 'int', section: SIM, clears: 'sim_duration',
    write: exclusive('/serving/workload/num_requests', '/serving/workload/duration_s', parseInteger),
  },
  {
    id: 'sim_duration', path: '/serving/workload/duration_s', kind: 'number', section: SIM, clears: 'sim_num_requests',
    write: exclusive('/serving/workload/duration_s', '/serving/workload/num_requests', parseNumber),
  },
  arrivalField('sim_cv', 'cv', 'number'),
  arrivalField('sim_concurrency', 'concurrency', 'int'),
  arrivalField('sim_think_time', 'think_time_s', 'number'),
  toggleField('prefix_enabled', '/serving/workload/shared_prefix', 'prefix'),
  { id: 'prefix_tokens', path: '/serving/workload/shared_prefix/tokens', kind: 'int', section: SIM, group: 'prefix', def: 512 },
  { id: 'prefix_fraction', path: '/serving/workload/shared_prefix/request_fraction', kind: 'number', section: SIM, group: 'prefix', showDefault: true },
  { id: 'prefix_groups', path: '/serving/workload/shared_prefix/groups', kind: 'int', section: SIM, group: 'prefix', showDefault: true },
  // Multi-turn sessions, after the per-request fields they replace (their toggle removes them).
  sessionsToggle(),
  { id: 'sess_num', path: '/serving/workload/num_sessions', kind: 'int', section: SIM, group: 'sessions', def: 100 },
  turnsField('sess_turns_min', 'min', 2),
  turnsField('sess_turns_max', 'max', 8),
  { id: 'sess_system', path: `${SESSIONS}/system_prompt_tokens`, kind: 'int', section: SIM, group: 'sessions', showDefault: true },
  sessionTokensField('sess_first_tokens', 'first_input_tokens', 1000),
  sessionTokensField('sess_in_tokens', 'input_tokens', 500),
  ...distFields('sess_in', `${SESSIONS}/input_tokens`).map((f) => ({ ...f, group: 'sessions' })),
  sessionTokensField('sess_out_tokens', 'output_tokens', 200),
  ...distFields('sess_out', `${SESSIONS}/output_tokens`).map((f) => ({ ...f, group: 'sessions' })),
  ...thinkFields(),
  { id: 'sim_router', path: '/serving/cluster/router', kind: 'select', section: SIM, optional: true, write: writeRouter },
  { id: 'sim_policy', path: '/serving/scheduler/policy', kind: 'select', section: SIM, showDefault: true },
  { id: 'sim_priority', path: '/serving/scheduler/priority', kind: 'select', section: SIM, optional: true },
  { id: 'sim_max_num_seqs', path: '/serving/scheduler/max_num_seqs', kind: 'int', section: SIM, showDefault: true },
  { id: 'sim_max_batched', path: '/serving/scheduler/max_num_batched_tokens', kind: 'int', section: SIM },
  { id: 'sim_chunk_size', path: '/serving/scheduler/chunk_size', kind: 'int', section: SIM, showDefault: true },
  { id: 'sim_kv_alloc', path: '/serving/kv_cache/allocation', kind: 'select', section: SIM, showDefault: true },
  { id: 'sim_block_size', path: '/serving/kv_cache/block_size', kind: 'int', section: SIM, showDefault: true },
  { id: 'sim_gpu_util', path: '/serving/kv_cache/gpu_memory_utilization', kind: 'number', section: SIM, showDefault: true },
  { id: 'sim_watermark', path: '/serving/kv_cache/watermark', kind: 'number', section: SIM, showDefault: true },
  { id: 'sim_preemption', path: '/serving/kv_cache/preemption', kind: 'select', section: SIM, showDefault: true },
  { id: 'sim_swap_space', path: '/serving/kv_cache/swap_space_GiB', kind: 'number', section: SIM, showDefault: true },
  { id: 'sim_prefix_caching', path: '/serving/kv_cache/prefix_caching', kind: 'bool', section: SIM, showDefault: true },
  kvTierField(0),
  kvTierField(1),
  toggleField('spec_enabled', '/serving/speculative', 'spec'),
  { id: 'spec_method', path: '/serving/speculative/method', kind: 'select', section: SIM, group: 'spec', def: 'ngram' },
  { id: 'spec_k', path: '/serving/speculative/k', kind: 'int', section: SIM, group: 'spec', showDefault: true },
  { id: 'spec_accept', path: '/serving/speculative/acceptance_rate', kind: 'number', section: SIM, group: 'spec', showDefault: true },
  {
    id: 'spec_draft', path: '/serving/speculative/draft_model', kind: 'select', section: SIM, group: 'spec', optional: true,
    show: (s) => modelPresetId(getAt(s, '/serving/speculative/draft_model')) || NO_LINK,
    write: (s, v) => {
      // Only the draft method takes a draft model.
      const draft = getAt(s, '/serving/speculative/method') === 'draft';
      setAt(s, '/serving/speculative/draft_model', draft && v !== NO_LINK ? v : undefined);
    },
  },
  ...SLO_METRICS.map((m) => ({ id: `sim_slo_${m}`, path: `${SLO}/${m}_ms`, kind: 'number', section: SIM })),
  ...SLO_METRICS.map(sloPercentileField),
  { id: 'sim_slo_attainment', path: `${SLO}/attainment`, kind: 'number', section: SIM, showDefault: true },
  blockField('sim_steady_state', '/serving/steady_state'),
  blockField('sim_max_qps', MAX_QPS),
  toggleField('srv_lora_enabled', '/serving/lora', 'slora'),
  { id: 'srv_lora_adapters', path: '/serving/lora/adapters', kind: 'int', section: SIM, group: 'slora', def: 8 },
  { id: 'srv_lora_rank', path: '/serving/lora/rank', kind: 'int', section: SIM, group: 'slora', showDefault: true },
  { id: 'srv_lora_max_batch', path: '/serving/lora/max_adapters_per_batch', kind: 'int', section: SIM, group: 'slora', showDefault: true },
  { id: 'srv_moe_imbalance', path: '/serving/moe/load_imbalance', kind: 'number', section: SIM },
  {
    id: 'disagg_enabled', path: POOLS, kind: 'toggle', toggles: 'disagg', section: SIM,
    show: (s) => Boolean(disaggPools(s)), write: writeDisaggToggle,
  },
  {
    id: 'disagg_prefill', path: `${POOLS}/0/replicas`, kind: 'int', section: SIM, group: 'disagg',
    show: (s) => disaggShown(s, 'prefill'), write: (s) => writeDisagg(s),
  },
  {
    id: 'disagg_decode', path: `${POOLS}/1/replicas`, kind: 'int', section: SIM, group: 'disagg',
    show: (s) => disaggShown(s, 'decode'), write: (s) => writeDisagg(s),
  },
  {
    id: 'disagg_tp', path: `${POOLS}/0/tp`, kind: 'int', section: SIM, group: 'disagg', aliases: [`${POOLS}/1/tp`],
    show: (s) => disaggShown(s, 'tp'), write: (s) => writeDisagg(s),
  },
  // Weights and KV cache default to the model's own (a checkpoint's quantization, else
  // the activations' dtype): the empty choice leaves the key out for the engine to decide.
  { id: 'weights', path: '/precision/weights', kind: 'select', optional: true, emptyLabel: FROM_THE_MODEL },
  { id: 'activations', path: '/precision/activations', kind: 'select' },
  { id: 'kv_cache', path: '/precision/kv_cache', kind: 'select', section: 'serving', optional: true, emptyLabel: FROM_THE_MODEL },

  // training: parallelism
  { id: 'train_dp', path: `${TRAINING_PAR}/dp`, kind: 'int', section: 'training', showDefault: true, gpus: true },
  { id: 'train_tp', path: `${TRAINING_PAR}/tp`, kind: 'int', section: 'training', showDefault: true, gpus: true },
  { id: 'train_pp', path: `${TRAINING_PAR}/pp`, kind: 'int', section: 'training', showDefault: true, gpus: true },
  { id: 'train_cp', path: `${TRAINING_PAR}/cp`, kind: 'int', section: 'training', showDefault: true, gpus: true },
  { id: 'train_ep', path: `${TRAINING_PAR}/ep`, kind: 'int', section: 'training', showDefault: true },
  { id: 'train_vstages', path: `${TRAINING_PAR}/virtual_stages`, kind: 'int', section: 'training', showDefault: true },
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
  { id: 'train_sp', path: `${TRAINING_PAR}/sequence_parallel`, kind: 'bool', section: 'training', showDefault: true },

  // training: batch
  { id: 'train_seq_len', path: '/training/batch/seq_len', kind: 'int', section: 'training' },
  { id: 'train_mbs', path: '/training/batch/micro_batch_size', kind: 'int', section: 'training', showDefault: true },
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
  { id: 'train_schedule', path: '/training/schedule', kind: 'select', section: 'training', showDefault: true },
  {
    id: 'train_recompute', path: '/training/recompute', schema: '/training/recompute/mode', kind: 'select', section: 'training', def: 'none',
    show: (s) => {
      const r = getAt(s, '/training/recompute');
      if (r && typeof r === 'object' && typeof r.mode === 'string') return r.mode;
      return typeof r === 'string' ? r : 'none';
    },
  },
  {
    id: 'train_every_n', path: `${RECOMPUTE}/every_n_layers`, kind: 'int', section: 'training', def: 1,
    write: recomputeOption('full', 'every_n_layers', parseInteger),
  },
  {
    id: 'train_rc_modules', path: `${RECOMPUTE}/modules`, kind: 'targets', section: 'training', def: ['core_attn'],
    write: recomputeOption('selective', 'modules', (v) => [...v]),
  },
  { id: 'train_attention', path: '/training/attention', kind: 'select', section: 'training', showDefault: true },
  { id: 'train_fp8', path: '/training/fp8', kind: 'select', section: 'training', showDefault: true },
  { id: 'train_moe_imbalance', path: '/training/moe/load_imbalance', kind: 'number', section: 'training', showDefault: true },
  { id: 'train_runtime', path: '/training/runtime_overhead_GiB', kind: 'number', section: 'training', showDefault: true },
  { id: 'train_optimizer', path: '/training/optimizer/type', kind: 'select', section: 'training', showDefault: true },
  { id: 'train_offload', path: '/training/optimizer/cpu_offload', kind: 'bool', section: 'training', showDefault: true },

  // training: LoRA
  {
    id: 'lora_enabled', path: '/training/lora', kind: 'toggle', toggles: 'lora', section: 'training',
    write: (s, on) => { if (!on) setAt(s, '/training/lora', undefined); },
  },
  { id: 'lora_rank', path: '/training/lora/rank', kind: 'int', section: 'training', group: 'lora', def: 16 },
  { id: 'lora_targets', path: '/training/lora/targets', kind: 'targets', section: 'training', group: 'lora', def: ['q', 'v'] },
  { id: 'lora_base_dtype', path: '/training/lora/base_dtype', kind: 'select', section: 'training', group: 'lora', showDefault: true },

  // training: token budget and cost
  { id: 'tokens_to_train', path: '/training/tokens_to_train', kind: 'number', section: 'training' },
  { id: 'gpu_hour_usd', path: '/cost_model/gpu_hour_usd', kind: 'number', section: 'training' },
];

/** The fields a scenario of `section` shows ('latency' | 'simulate' | 'training'; 'serving' means latency). */
export function fieldsOf(section) {
  return FIELDS.filter((f) => sectionMatches(f.section, section));
}

const TOGGLES = () => FIELDS.filter((f) => f.kind === 'toggle');

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

/** Makes sure `value` is one of the select's options (a scenario may name a preset not listed). */
function ensureOption(select, value, text) {
  if (![...select.options].some((o) => o.value === value)) select.append(option(value, text || value));
}

function targetBoxes(id) {
  return [...el(id).querySelectorAll('input[type="checkbox"]')];
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
    if (f.kind === 'targets') for (const box of targetBoxes(f.id)) box.disabled = !on;
    else input.disabled = !on;
    input.closest('.field')?.classList.toggle('disabled', !on);
  }
}

const SERVING_SELECTS = [
  // [select id, the engine's policy family, extra first option for "engine default"]
  ['sim_arrival', 'arrival_processes'],
  ['sim_router', 'routers', 'Default (round robin)'],
  ['sim_policy', 'scheduler_policies'],
  ['sim_priority', 'scheduler_priorities', "Policy's own"],
  ['sim_kv_alloc', 'kv_allocations'],
  ['sim_preemption', 'preemption_modes'],
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
  const input = el(f.id);
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
    fillSelect(el(id), empty ? [option(NO_LINK, empty), ...opts] : opts);
  }
  fillSelect(el('scenario'), scenarios.map((s) => option(s.id, `${s.id} — ${s.title || s.name || ''}`, s.source)));
  fillSelect(el('model'), models.map((m) => option(m.id, m.name || m.id, m.source)));
  fillSelect(el('gpu'), gpuGroups(gpus));
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
  for (const f of FIELDS) applySchema(f);
  // The SLO's percentile pickers: the engine's choices, in people's words.
  for (const m of SLO_METRICS) {
    const p = parameterAt(`${SLO}/percentiles/${m}`);
    const values = p && Array.isArray(p.choices) ? p.choices.map(String) : [];
    fillSelect(el(`sim_slo_${m}_pct`), values.map((v) => option(v, v === SLO_JOINT ? 'Joint (attainment)' : v.toUpperCase())));
    for (const id of [`sim_slo_${m}`, `sim_slo_${m}_pct`]) {
      el(id).addEventListener('input', showSloAttainment);
      el(id).addEventListener('change', showSloAttainment);
    }
  }
  fillSelect(el('spec_draft'), [option(NO_LINK, 'None'), ...models.map((m) => option(m.id, m.name || m.id, m.source))]);
  for (const id of ['sim_kv_tier1', 'sim_kv_tier2']) {
    fillSelect(el(id), [option(NO_LINK, 'None (HBM only)'), ...kvTiers.map((t) => option(t.id, t.name || t.id, t.source))]);
  }
  for (const prefix of LENGTH_PREFIXES) {
    el(`${prefix}_dist`).addEventListener('change', () => showDistParams(prefix));
    // Typing a length makes it fixed.
    el(`${prefix}_tokens`).addEventListener('input', () => {
      if (current !== SIM) return;
      el(`${prefix}_dist`).value = 'fixed';
      showDistParams(prefix);
    });
  }
  el('sess_think_dist').addEventListener('change', showThinkParams);
  el('sess_enabled').addEventListener('change', showSessionMode);
  el('sim_arrival').addEventListener('change', showArrivalFields);
  el('spec_method').addEventListener('change', showDependent);
  el('train_recompute').addEventListener('change', showDependent);
  for (const f of FIELDS) {
    if (!f.clears) continue;
    el(f.id).addEventListener('input', () => { el(f.clears).value = ''; });
  }
  for (const t of TOGGLES()) el(t.id).addEventListener('change', (e) => setGroupEnabled(t.toggles, e.target.checked));
}

/** Shows the inputs that only apply to one choice of another (draft model, recompute options). */
function showDependent() {
  el('spec_draft').closest('.field').hidden = el('spec_method').value !== 'draft';
  el('train_every_n').closest('.field').hidden = el('train_recompute').value !== 'full';
  el('train_rc_modules').closest('.field').hidden = el('train_recompute').value !== 'selective';
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
        return d === undefined ? (el(f.id).options[0] || { value: '' }).value : String(d);
      }
      return String(value);
  }
}

/** The current value of an input, in the same shape as shownValue. */
function inputValue(f) {
  const input = el(f.id);
  if (f.kind === 'bool' || f.kind === 'toggle') return input.checked;
  if (f.kind === 'targets') return targetBoxes(f.id).filter((b) => b.checked).map((b) => b.value);
  return input.value;
}

function setInput(f, value) {
  const input = el(f.id);
  if (f.kind === 'bool' || f.kind === 'toggle') input.checked = Boolean(value);
  else if (f.kind === 'targets') {
    const set = new Set(value);
    for (const box of targetBoxes(f.id)) box.checked = set.has(box.value);
  } else if (f.kind === 'select') {
    ensureOption(input, value);
    input.value = value;
  } else input.value = value;
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
  for (const t of TOGGLES()) setGroupEnabled(t.toggles, el(t.id).checked);
  for (const prefix of LENGTH_PREFIXES) showDistParams(prefix);
  showThinkParams();
  // The scenario just filled in sets the run-until-decided box afresh: no earlier choice to bring back.
  el('sim_steady_state').disabled = false;
  showSessionMode();
  showArrivalFields();
  showDependent();
  showSloAttainment();
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
  const section = formSection(base);
  const groupOn = new Map();
  const groupNew = new Map();
  for (const t of TOGGLES()) {
    const on = el(t.id).checked;
    groupOn.set(t.toggles, on);
    groupNew.set(t.toggles, on && !shownValue(t, base));
  }
  for (const f of fieldsOf(section)) {
    const input = el(f.id);
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
