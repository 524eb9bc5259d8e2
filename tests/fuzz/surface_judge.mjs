// Verdicts of the aimed fuzzer (tests/fuzz/surfaces.mjs) on one reply:
// {verdict: ok | error | crashes | unlocated | lies, why}. An error must be
// located in the document the user wrote (case.user): a JSON pointer that
// exists there (for a missing key, its parent), a /line/N of a text summary,
// or the byte, line or column of a parse error. A result must not lie: the
// invariants below are physics and the user's own numbers, not the engine's
// code.

// A user's document is read as the engine reads it: Python's bare Infinity and NaN taken as strings.
import { quoteNonstandardLiterals } from '../../web/src/client/json-literals.js';

/**
 * Resolves a JSON pointer in `doc`: how many of its last tokens are missing
 * (0: it exists), or null when it leaves the document through a value that
 * is not a container.
 */
export function resolvePointer(doc, pointer) {
  if (pointer === '') return 0;
  if (!pointer.startsWith('/')) return null;
  const tokens = pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  let v = doc;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (v === null || typeof v !== 'object') return null;
    const has = Array.isArray(v) ? /^\d+$/.test(t) && Number(t) < v.length : Object.hasOwn(v, t);
    if (!has) return tokens.length - i;
    v = v[t];
  }
  return 0;
}

const parses = (text) => {
  try { return { ok: true, doc: JSON.parse(quoteNonstandardLiterals(text)) }; } catch { return { ok: false }; }
};
const POSITION = /byte \d+|line \d+|column \d+/;

// An error about the whole file (its kind, its format): at the root.
// (A fit that the file's runs as a whole cannot identify is refused there too.)
const ROOT_WORDS = /format|structure|recogni|empty|no run|not a |not JSON|one JSON object per file|these runs determine/i;
const parsedLines = (lines) => lines.map((l) => parses(l)).map((q, i) => (q.ok ? q.doc : { __unparsed_line: i }));

/** The user's document of a case, parsed once: {doc, alt?} or {lines} or {unparsed}. */
function userDoc(user) {
  if (user.parsed) return user.parsed;
  if ('doc' in user) user.parsed = { doc: user.doc };
  else if (!user.name) {
    const p = parses(user.text);
    user.parsed = p.ok ? { doc: p.doc } : { unparsed: true };
  } else {
    // A benchmark file, taken as the reader takes it: text that does not open
    // with { or [ is a summary (lines); JSON is one document or JSON lines
    // (runs at /N, N counting the lines that are not blank, a line that is
    // not JSON still there to point at).
    const lines = user.text.split('\n').filter((l) => /[^ \t\r]/.test(l));
    const first = lines.length ? lines[0].trimStart()[0] : '';
    const whole = parses(user.text);
    const asLines = lines.length >= 2 && lines.every((l) => l.trimStart().startsWith('{'));
    if (first !== '{' && first !== '[') user.parsed = { lines: user.text.split('\n') };
    else if (whole.ok) user.parsed = { doc: whole.doc, alt: asLines ? parsedLines(lines) : undefined };
    else user.parsed = asLines ? { doc: parsedLines(lines) } : { unparsed: true };
  }
  return user.parsed;
}

/** Why an error is not located in the user's document, or null when it is. */
function mislocated(err, c) {
  const u = c.user;
  let p = err.path;
  if (u.hfWrapper && (p === '/hf_config' || p.startsWith('/hf_config/'))) p = p.slice('/hf_config'.length);
  if (u.prefix) {
    if (p !== u.prefix && !p.startsWith(`${u.prefix}/`)) return `path '${p}' is outside the user's document at ${u.prefix}`;
    p = p.slice(u.prefix.length);
  }
  if (u.name && !err.message.includes(u.name)) return `the message does not name the file '${u.name}'`;
  // A parse error is located by its byte, line and column (its path is where the parser had got to).
  if (err.code === 'parse_error' && POSITION.test(err.message)) return null;
  const d = userDoc(u);
  if (d.lines) {
    // The root: a line that is missing, or a file that is not a summary at all.
    if (p === '') return POSITION.test(err.message) || err.code === 'missing_key' || ROOT_WORDS.test(err.message) ? null : 'no line in the path or message';
    const m = /^\/line\/(\d+)$/.exec(p);
    if (!m) return `'${p}' is not a /line/N of the summary`;
    return Number(m[1]) >= 1 && Number(m[1]) <= d.lines.length ? null : `line ${m[1]} is not in the file`;
  }
  // A duplicate key is located by its pointer (the reader stops there, before
  // any later syntax error JavaScript's parser would report first).
  if (err.code === 'duplicate_key' && p.split('/').pop() === /duplicate key '([^']*)'/.exec(err.message)?.[1]) return null;
  if (d.unparsed) return p === '' && (POSITION.test(err.message) || ROOT_WORDS.test(err.message)) ? null : `'${p}' in a file that is not JSON, without a position`;
  if (p === '') {
    const root = d.doc;
    const rootIsContainer = root !== null && typeof root === 'object';
    // The root is the place for a document of the wrong kind or an empty one.
    return !rootIsContainer || POSITION.test(err.message) || Object.keys(root).length === 0 || err.code === 'type_error' ||
      ROOT_WORDS.test(err.message) ? null : 'path "" for an error inside the document';
  }
  // It exists; or it is a key the user left out (the engine's default): its
  // object exists, or (a defaulted section and its key) that object's parent.
  let missing = resolvePointer(d.doc, p);
  if (missing !== 0 && d.alt !== undefined) {
    const m2 = resolvePointer(d.alt, p);
    if (m2 !== null && (missing === null || m2 < missing)) missing = m2;
  }
  if (missing === 0) return null;
  const last = p.split('/').pop();
  const says = err.code === 'missing_key' || /missing|required|absent|need|give|default|has no|without/i.test(err.message);
  // A pasted HF config: a key it lacks is named as missing, never under an engine name.
  if (u.strictKeys) return missing === 1 && says ? null : `path '${err.path}' names a key the config does not have`;
  if (missing !== null && missing <= 2 && (says || err.message.includes(last))) return null;
  return `path '${err.path}' does not exist in the user's document`;
}

const finite = (x) => typeof x === 'number' && Number.isFinite(x);
const LATENCY_FLOOR_MS = { ttft: 0.1, e2e: 0.1, tpot: 0.001, itl: 0.001 };

/** Lies in one imported benchmark run, or null. */
function benchRunLie(run) {
  if (!(Number.isInteger(run.requests?.completed) && run.requests.completed >= 1)) return `completed ${run.requests?.completed}`;
  const { prompt_tokens_mean: p, output_tokens_mean: o } = run.lengths ?? {};
  for (const [k, v] of [['prompt', p], ['output', o]]) if (v !== null && v !== undefined && !(finite(v) && v >= 1 && v <= 1e7)) return `${k} mean ${v}`;
  const load = run.load ?? {};
  if (load.kind === 'rate' && !(finite(load.rate_qps) && load.rate_qps > 0 && load.rate_qps <= 1e9)) return `rate ${load.rate_qps}`;
  if (load.kind === 'closed_loop' && !(Number.isInteger(load.concurrency) && load.concurrency >= 1)) return `concurrency ${load.concurrency}`;
  const m = run.measured ?? {};
  for (const [metric, f] of Object.entries(m)) {
    if (!finite(f.value) || f.value <= 0) return `${metric} ${f.value}`;
    const kind = metric.split('_')[0];
    // A day is longer than any benchmark's mean latency; a figure beyond it is a unit slip.
    if (metric.endsWith('_ms') && (f.value < (LATENCY_FLOOR_MS[kind] ?? 0) || f.value > 8.64e7)) return `${metric} ${f.value} ms`;
    if (metric.endsWith('_per_s') && f.value > 1e9) return `${metric} ${f.value}`;
  }
  const e2e = m.e2e_mean_ms?.value;
  if (e2e && m.ttft_mean_ms && m.ttft_mean_ms.value > e2e * (1 + 1e-9)) return `TTFT ${m.ttft_mean_ms.value} > E2E ${e2e}`;
  const tpot = m.tpot_mean_ms ?? m.itl_mean_ms ?? m.itl_median_ms;
  if (tpot && o !== null && o !== undefined && o < 2) return `a per-token figure with ${o} output tokens`;
  if (e2e && tpot && tpot.value > e2e * (1 + 1e-9)) return `per-token ${tpot.value} > E2E ${e2e}`;
  return null;
}

/** Lies in a serving or training result: numbers out of range anywhere. */
function resultLie(result) {
  let lie = null;
  const walk = (v, key, depth) => {
    if (lie || depth > 30 || /ratio/.test(key)) return;  // a ratio of two figures has no range of its own
    if (typeof v === 'number') {
      const k = key.toLowerCase();
      if (!finite(v) || Math.abs(v) > 1e200) lie = `${key} = ${v}`;
      else if (/(^|_)(ms|s|us|ns|gib|tokens|usd)$|_ms_|_s_/.test(k) && v < 0) lie = `${key} = ${v} < 0`;
      else if (/mfu|utilization|efficiency/.test(k) && !/scale/.test(k) && (v < 0 || v > (/pct|percent/.test(k) ? 100 : 1) + 1e-9)) lie = `${key} = ${v}`;
      return;
    }
    if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        // A memory margin is negative by design where the result says it does not fit (fits: false, with a warning).
        if (/^free_/.test(k) && v.fits === false) continue;
        walk(x, Array.isArray(v) ? key : k, depth + 1);
      }
    }
  };
  walk(result, '', 0);
  return lie;
}

const FACTORS = { compute_efficiency_scale: [0.05, 20, 1], memory_efficiency_scale: [0.05, 20, 1], comm_efficiency_scale: [0.05, 20, 1], host_us_per_step: [0, 1e6, 0] };

/** A calibration in a resolved scenario must be the user's, number for number. */
function calibrationLie(result, given) {
  const cal = result?.cost_model?.calibration;
  if (!cal) return given && typeof given === 'object' ? 'the calibration was dropped' : null;
  for (const [k, [lo, hi, dflt]] of Object.entries(FACTORS)) {
    const v = cal.factors?.[k];
    if (!finite(v) || v < lo || v > hi) return `${k} = ${v}`;
    const wrote = given?.factors?.[k];
    if (typeof wrote === 'number' ? v !== wrote : v !== dflt) return `${k} = ${v}, the file says ${JSON.stringify(wrote)}`;
  }
  return null;
}

/** A fitted calibration: factors finite, in range, and not pinned at a bound without a word. */
function fitLie(cal) {
  const words = JSON.stringify(cal.fit?.warnings ?? []) + JSON.stringify(cal.fit?.held_at_no_correction ?? {});
  for (const [k, [lo, hi]] of Object.entries(FACTORS)) {
    const v = cal.factors?.[k];
    if (!finite(v) || v < lo || v > hi) return `${k} = ${v}`;
    if ((v <= lo * 1.0001 || v >= hi * 0.9999) && v !== 0 && !words.includes(k)) return `${k} = ${v} at its bound without a warning`;
  }
  const errs = JSON.stringify(cal.fit?.in_sample ?? {}).match(/"error_calibrated":(-?[\d.e+]+)/g) ?? [];
  for (const e of errs) if (Math.abs(Number(e.split(':')[1])) > 100) return `an error of ${e}`;
  return null;
}

const PEAK_FLOOR_TFLOPS = 0.1;  // slower than any GPU made since 2010 in its fastest format
/** Hardware a resolved scenario prices: every GPU's peaks and bandwidths physical, precisions it has. */
function hardwareLie(resolved) {
  const gpus = [resolved.hardware?.gpu];
  for (const p of resolved.serving?.cluster?.pools ?? []) if (p.gpu) gpus.push(p.gpu);
  const weights = resolved.precision?.weights;
  for (const g of gpus) {
    if (!g || typeof g !== 'object') continue;
    for (const [k, v] of Object.entries(g.peak_tflops ?? {})) {
      if (!finite(v) || v < 0 || (v > 0 && v < PEAK_FLOOR_TFLOPS) || v > 1e5) return `${g.id} ${k} peak ${v} TFLOP/s`;
    }
    if (!(g.hbm_bandwidth_GBps >= 10 && g.hbm_bandwidth_GBps <= 1e5)) return `${g.id} bandwidth ${g.hbm_bandwidth_GBps} GB/s`;
    if (!(g.memory_GiB > 0 && g.memory_GiB <= 1e5)) return `${g.id} memory ${g.memory_GiB} GiB`;
    // A weight format the GPU cannot compute in must not be priced on it.
    if ((weights === 'fp8' || weights === 'fp4') && !(g.peak_tflops?.[weights] > 0)) return `${weights} weights on ${g.id} (no ${weights} peak)`;
  }
  for (const link of [resolved.hardware?.intra_node]) {
    if (link && typeof link === 'object' && ['nvswitch', 'nvlink_p2p', 'xgmi'].includes(link.kind) && !(link.domain_gpus >= 2)) return `${link.id} without a domain size`;
  }
  return null;
}

/** Lies in an inspected model: counts whole and positive, a known family. */
function modelLie(result, c) {
  let lie = null;
  const walk = (v, key) => {
    if (lie) return;
    if (typeof v === 'number' && (!finite(v) || (/^num_|_size$|layers|heads|experts/.test(key) && v < 0))) lie = `${key} = ${v}`;
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(result, '');
  if (lie) return lie;
  const p = parses(c.text).doc;
  const cfg = p?.hf_config ?? p;
  if (cfg && typeof cfg === 'object' && typeof cfg.model_type === 'string' && !KNOWN_TYPES.has(cfg.model_type) &&
      !JSON.stringify(result.warnings ?? []).includes('model_type')) return `model_type '${cfg.model_type}' read without a word`;
  return null;
}
// The model_type of every published config the fuzzer starts from (surface_seeds.mjs hfSeeds).
export const KNOWN_TYPES = new Set();

export function judgeReply(surface, reply, c) {
  let e;
  try { e = JSON.parse(reply); } catch { return { verdict: 'crashes', why: 'not JSON' }; }
  if (typeof e.ok !== 'boolean') return { verdict: 'crashes', why: 'no ok' };
  if (!e.ok) {
    const err = e.error ?? {};
    if (err.code === 'internal_error') return { verdict: 'crashes', why: 'internal_error' };
    if (typeof err.code !== 'string' || !err.code || typeof err.path !== 'string' || typeof err.message !== 'string' || !err.message) {
      return { verdict: 'unlocated', why: 'no code, path or message' };
    }
    if (err.code === 'limit_exceeded') return { verdict: 'error' };  // the work cap: located at the run's limits
    const why = mislocated(err, c);
    return why ? { verdict: 'unlocated', why } : { verdict: 'error' };
  }
  let lie = null;
  if (surface === 'bench') {
    if (!Array.isArray(e.result) || !e.result.length) lie = 'no runs';
    for (const run of e.result ?? []) lie = lie ?? benchRunLie(run);
  } else if (surface === 'fit') lie = fitLie(e.result);
  else if (surface === 'calibration') lie = c.op === 'validate' ? calibrationLie(e.result, c.user.given) : resultLie(e.result);
  else if (surface === 'hf') lie = c.op === 'inspect' ? modelLie(e.result, c) : hardwareLie(e.result);
  else lie = c.op === 'validate' ? hardwareLie(e.result) : resultLie(e.result);
  return lie ? { verdict: 'lies', why: lie } : { verdict: 'ok' };
}
