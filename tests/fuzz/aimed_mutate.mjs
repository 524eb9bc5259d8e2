// Structure-aware mutations aimed at the input surfaces added for issue 34:
// benchmark result files (JSON, JSON lines, MLPerf LoadGen text summaries),
// calibration files, pasted HF configs and custom hardware. They act on what
// a user's file holds: keys removed, types changed, numbers written as
// non-finite or suffixed text ("42abc", "inf", "1e400", hex), units slipped
// (seconds under an _ms key, x1000), contradictions (TTFT above E2E, nothing
// completed, a TPOT with one output token), deep nesting, duplicate keys and
// size. Seeded (mutate.mjs's rng): same seed, same cases.
import { mutateText } from './mutate.mjs';

/** Every [parent, key] slot of a JSON value (objects and arrays, any depth). */
export function slots(value, out = [], depth = 0) {
  if (value && typeof value === 'object' && depth < 40) {
    for (const k of Object.keys(value)) {
      out.push([value, Array.isArray(value) ? Number(k) : k]);
      slots(value[k], out, depth + 1);
    }
  }
  return out;
}

const numberSlots = (doc) => slots(doc).filter(([p, k]) => typeof p[k] === 'number');
const keyOf = (k) => String(k).toLowerCase();

// Numbers as text a reader must refuse whole (never read by prefix).
export const BAD_NUMBER_TEXT = ['42abc', 'inf', '-inf', 'Infinity', 'nan', 'NaN', '0x1A', '1e400', '-1e400', '1e-400',
  '1,5', '1 000', '', ' ', '12.5.3', '+-3', '--1', '1e', '.', '∞', '１２'];
// Numbers a JSON reader parses but a measurement or spec cannot be.
const ODD_NUMBERS = [0, -1, -0.5, 1e-300, 1e-12, 1e-9, 0.001, 1e12, 1e15, 1e300, -1e300, 2 ** 53 + 1, 2 ** 63, 0.5];
const ODD_VALUES = [null, true, false, '', 'x', [], {}, [1, 2], { unknown: 1 }, '12', '1e3'];

// Contradiction groups: a key matched by `is` is set from a sibling matched by `rel`.
const IS_TTFT = /ttft|first.?token/;
const IS_E2E = /e2e|request_latency|^latency|mean_latency|e2el/;
const IS_PER_TOKEN = /tpot|itl|inter.?token|output_token|time_to_output/;
const IS_COUNT = /^completed$|request_count|num_requests|successful|total_requests|^count$|samples/;
const IS_OUTPUT_LEN = /output.*(len|tokens)|osl|output_sequence/;
const IS_PROMPT_LEN = /input.*(len|tokens)|prompt.*(len|tokens)|isl|input_sequence/;
const IS_RATE = /rate|qps|concurrency|streams|throughput|per_s/;

function pick(r, arr) { return arr.length ? arr[r.int(arr.length)] : null; }

/** Sets one numeric value of a measurement group to a contradiction or unit slip. */
function contradict(doc, r) {
  const nums = numberSlots(doc);
  if (!nums.length) return;
  const kind = r.int(7);
  const matching = (re) => nums.filter(([p, k]) => re.test(keyOf(k)));
  if (kind === 0) {                                   // TTFT above E2E (or above every latency in its object)
    const s = pick(r, matching(IS_TTFT));
    if (!s) return;
    const [p, k] = s;
    const siblings = Object.keys(p).filter((x) => IS_E2E.test(keyOf(x)) && typeof p[x] === 'number');
    const top = siblings.length ? Math.max(...siblings.map((x) => p[x])) : p[k] * 1000;
    p[k] = top * r.pick([1.5, 10, 1000]);
  } else if (kind === 1) {                            // nothing completed
    const s = pick(r, matching(IS_COUNT));
    if (s) s[0][s[1]] = r.pick([0, 0, -1, 0.5]);
  } else if (kind === 2) {                            // one (or zero) output tokens with a per-token figure kept
    for (const [p, k] of matching(IS_OUTPUT_LEN)) p[k] = r.pick([1, 0, 1, 0.5]) * (/total/.test(keyOf(k)) ? 1 : 1);
  } else if (kind === 3) {                            // seconds under an _ms key (or ns read as ms)
    const ms = nums.filter(([, k]) => /_ms$|\(ms\)|_ns$|latency/.test(keyOf(k)));
    for (const [p, k] of ms.length ? (r.chance(0.5) ? ms : [pick(r, ms)]) : []) p[k] = p[k] * r.pick([0.001, 1e-6, 1000, 1e6]);
  } else if (kind === 4) {                            // zero or negative lengths
    const s = pick(r, matching(IS_PROMPT_LEN).concat(matching(IS_OUTPUT_LEN)));
    if (s) s[0][s[1]] = r.pick([0, -1, 1e-3, 1e12]);
  } else if (kind === 5) {                            // rates and throughputs at nothing or at everything
    const s = pick(r, matching(IS_RATE));
    if (s) s[0][s[1]] = r.pick([0, -1, 1e-12, 1e15, 1e300]);
  } else {                                            // a per-token time above the whole request
    const s = pick(r, matching(IS_PER_TOKEN));
    if (s) s[0][s[1]] = s[0][s[1]] * r.pick([1e3, 1e6]);
  }
}

/**
 * One structural mutation of a parsed document (a copy); `focus`, when
 * given, maps the copy to the parts to mutate (the hardware, the pools).
 */
export function mutateDoc(doc, r, focus = null) {
  const copy = structuredClone(doc);
  const n = 1 + r.int(3);
  for (let i = 0; i < n; i++) {
    const all = (focus ? focus(copy) : [copy]).flatMap((root) => slots(root));
    if (!all.length) return copy;
    const [parent, key] = r.pick(all);
    const kind = r.int(12);
    if (kind === 0) {                                 // remove a key (or an array element)
      if (Array.isArray(parent)) parent.splice(key, 1); else delete parent[key];
    } else if (kind === 1) {                          // change the type
      parent[key] = structuredClone(r.pick(ODD_VALUES));  // a copy: a shared object mutated later could close a cycle
    } else if (kind === 2) {                          // a number written as text, refused whole
      parent[key] = r.pick(BAD_NUMBER_TEXT);
    } else if (kind === 3 && typeof parent[key] === 'number') {  // scaled: units and magnitudes
      parent[key] = parent[key] * r.pick([0, -1, 1e-3, 1e3, 1e6, 1e-6, 1e300, 1e-300]);
    } else if (kind === 4) {                          // an odd number
      parent[key] = r.pick(ODD_NUMBERS);
    } else if (kind === 5 || kind === 6) {            // contradictions and unit slips in the measurements
      contradict(copy, r);
    } else if (kind === 7 && !Array.isArray(parent)) {  // an unknown key beside a known one
      parent[`${key}${r.pick(['_typo', 's', '_ms', '_s'])}`] = parent[key];
    } else if (kind === 8) {                          // deep nesting at a value
      const depth = r.pick([3, 63, 64, 65, 200, 1000]);
      let v = parent[key];
      for (let d = 0; d < depth; d++) v = r.chance(0.5) ? [v] : { a: v };
      parent[key] = v;
      // The case's last mutation: another one inside a value 1,000 deep (a
      // copy of it grown again, or a second nesting) overflowed the fuzzer's
      // own stack in structuredClone (a 100,000-case run, seed 21, 2026-11-29).
      return copy;
    } else if (kind === 9 && Array.isArray(parent[key]) && parent[key].length) {  // size: more elements, up to 4 MB
      const arr = parent[key];
      let bytes = JSON.stringify(arr).length;
      for (let j = 0, m = r.pick([2, 10, 300]); j < m && bytes < (4 << 20); j++) {
        arr.push(structuredClone(arr[r.int(arr.length)]));
        bytes += JSON.stringify(arr[arr.length - 1]).length;
      }
    } else if (kind === 10) {                         // a long string
      parent[key] = 'x'.repeat(r.pick([1000, 100000]));
    } else {                                          // stringified (a number "42" where 42 was)
      parent[key] = typeof parent[key] === 'object' ? JSON.stringify(parent[key]) : String(parent[key]);
    }
  }
  return copy;
}

/** Text-level JSON mutations a structural edit cannot make. */
export function mutateJsonText(text, r) {
  const kind = r.int(5);
  if (kind === 0) {                                   // a raw non-JSON number literal in place of a number
    const re = /(?<=:\s*)-?\d+(\.\d+)?([eE][+-]?\d+)?/g;
    const ms = [...text.matchAll(re)];
    if (!ms.length) return text;
    const m = r.pick(ms);
    const bad = r.pick(['Infinity', '-Infinity', 'NaN', '0x1A', '42abc', '1e400', '01', '1.', '.5', '+1', '1e99999']);
    return text.slice(0, m.index) + bad + text.slice(m.index + m[0].length);
  }
  if (kind === 1) {                                   // a duplicate key (same or other value)
    const re = /"([A-Za-z_0-9]+)"\s*:\s*("[^"]*"|-?\d[\d.eE+-]*|true|false|null)/g;
    const ms = [...text.matchAll(re)];
    if (!ms.length) return text;
    const m = r.pick(ms);
    const dup = r.chance(0.5) ? m[0] : `"${m[1]}": ${r.pick(['0', '1e9', '"x"', 'null'])}`;
    return text.slice(0, m.index) + dup + ',' + text.slice(m.index);
  }
  if (kind === 2) return new TextDecoder().decode(mutateText(text, r));  // mutate.mjs's byte-level kinds
  if (kind === 3) return text.slice(0, r.int(text.length + 1));        // truncated
  return text + r.pick(['\n', ' ', '\n{}', 'x', '\u0000', '\n' + text]);  // trailing bytes, a second document
}

/** A JSON lines file (one object per line) mutated as lines and as structure. */
export function mutateJsonl(text, r) {
  const lines = text.split('\n').filter((l) => l.trim());
  const k = r.int(7);
  if (k === 0 && lines.length) lines.splice(r.int(lines.length), 1);
  else if (k === 1 && lines.length) lines.splice(r.int(lines.length + 1), 0, r.pick(['', '   ', '{}', '[]', 'null', '{"a":', 'x']));
  else if (k === 2 && lines.length) {                // size: many runs (300 runs: `fit`'s work cap), up to 4 MB
    let bytes = lines.reduce((n, l) => n + l.length, 0);
    for (let j = 0, m = r.pick([10, 300, 1000]); j < m && bytes < (4 << 20); j++) {
      lines.push(lines[r.int(lines.length)]);
      bytes += lines[lines.length - 1].length;
    }
  } else if (lines.length) {
    const i = r.int(lines.length);
    let doc = null;
    try { doc = JSON.parse(lines[i]); } catch { /* a line that is already broken */ }
    lines[i] = doc && k < 5 ? JSON.stringify(mutateDoc(doc, r)) : mutateJsonText(lines[i], r).replace(/\n/g, ' ');
  }
  return lines.join('\n') + (r.chance(0.9) ? '\n' : '');
}

/** An MLPerf LoadGen summary ("key : value" lines) mutated as lines, values and units. */
export function mutateSummary(text, r) {
  const lines = text.split('\n');
  const valued = lines.map((l, i) => [l, i]).filter(([l]) => /:\s*\S/.test(l) && /\d/.test(l.split(':').pop()));
  const k = r.int(9);
  if (k <= 3 && valued.length) {                     // a value replaced
    const [l, i] = r.pick(valued);
    const at = l.lastIndexOf(':');
    const v = l.slice(at + 1).trim();
    const num = Number(v);
    const repl = k === 0 ? r.pick(BAD_NUMBER_TEXT.concat(['42abc', '1e400', 'inf', '0x10']))
      : k === 1 ? String(num * r.pick([1e-3, 1e-6, 1e3, 1e6, 1e9]))
        : k === 2 ? r.pick(['0', '-1', '-0', '0.0000001', '1e-300', '9'.repeat(400)])
          : `${v}${r.pick(['abc', ' ms', 's', 'e', '.', ' 12', '\t7'])}`;
    lines[i] = l.slice(0, at + 1) + ' ' + repl;
  } else if (k === 4 && valued.length) {             // a line dropped
    lines.splice(r.pick(valued)[1], 1);
  } else if (k === 5 && valued.length) {             // a line repeated (a duplicate key) with another value
    const [l, i] = r.pick(valued);
    lines.splice(i + 1, 0, l.replace(/:\s*.*$/, `: ${r.pick(['1', '0', '123456789', 'x'])}`));
  } else if (k === 6) {                              // units in the key changed: (ns) -> (ms) / (us)
    const [l, i] = pick(r, lines.map((x, j) => [x, j]).filter(([x]) => /\((ns|ms|us)\)/.test(x))) || [null, -1];
    if (i >= 0) lines[i] = l.replace(/\((ns|ms|us)\)/, `(${r.pick(['ms', 'us', 's', 'ns', ''])})`);
  } else if (k === 7) {                              // contradictions: first token after the whole request, nothing completed
    const set = (re, f) => {
      for (let i = 0; i < lines.length; i++) if (re.test(lines[i])) lines[i] = lines[i].replace(/:\s*\S+\s*$/, `: ${f(lines[i])}`);
    };
    const pickC = r.int(3);
    if (pickC === 0) set(/Mean First Token latency/i, () => '99000000000');
    else if (pickC === 1) set(/samples per second|tokens per second|Completed samples/i, () => '0');
    else set(/Scenario/, () => r.pick(['Server', 'Offline', 'SingleStream', 'MultiStream', 'server', '']));
  } else {                                           // byte-level kinds, truncation, size
    const t = lines.join('\n');
    if (r.chance(0.3)) return t + ('\nExtra stat (ns) : 1' ).repeat(r.pick([10, 10000]));
    return new TextDecoder().decode(mutateText(t, r));
  }
  return lines.join('\n');
}
