// Seeded, deterministic mutations of scenario documents, as text (bytes) and
// as structure. Same seed => same cases, on any machine.

const enc = new TextEncoder();

/** xorshift128+-like generator on 32-bit ints: deterministic, seedable. */
export function rng(seed) {
  let a = (seed >>> 0) || 1, b = 0x9e3779b9 ^ seed, c = 0x85ebca6b, d = 0xc2b2ae35;
  const next = () => {
    const t = b << 9;
    let r = a * 5;
    r = ((r << 7) | (r >>> 25)) * 9;
    c ^= a; d ^= b; b ^= c; a ^= d; c ^= t;
    d = (d << 11) | (d >>> 21);
    return (r >>> 0) / 4294967296;
  };
  for (let i = 0; i < 20; i++) next();
  return {
    float: next,
    int: (n) => Math.floor(next() * n),
    pick: (arr) => arr[Math.floor(next() * arr.length)],
    chance: (p) => next() < p,
  };
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
}

function insertAt(bytes, pos, ins) { return concat(bytes.subarray(0, pos), ins, bytes.subarray(pos)); }

/** Positions just after an opening quote of a string value or key. */
function quotePositions(bytes) {
  const pos = [];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x22) pos.push(i + 1);
  return pos;
}

/** Byte ranges [start, end) of the number literals in the text. */
function numberRanges(text) {
  const out = [];
  const re = /(?<=[:\[,]\s*)-?\d+(\.\d+)?([eE][+-]?\d+)?/g;
  let m;
  while ((m = re.exec(text))) out.push([m.index, m.index + m[0].length]);
  return out;
}

const HUGE = ['1e400', '-1e400', '1e-400', '9'.repeat(400), '7'.repeat(5000), '18446744073709551616',
  '-9223372036854775809', '1.7976931348623157e309', '0.' + '0'.repeat(3000) + '1', '-0', '1E+308'];
const BAD_BYTES = [[0xff], [0xfe], [0xc0, 0xaf], [0x80], [0xc3], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf],
  [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0xf0, 0x9f, 0x9a]];
const ESCAPES = ['\\ud800', '\\udfff', '\\ud83d', '\\u0000', '\\uDBFF\\uDBFF', '\\uZZZZ', '\\'];
const NON_ASCII = ['ø', 'é', '日本', '🚀', '\u2028', '\u00a0'];

/** One text mutation of `text` (a JSON document): returns bytes. */
export function mutateText(text, r) {
  const bytes = enc.encode(text);
  const kind = r.int(10);
  switch (kind) {
    case 0: return bytes.subarray(0, r.int(bytes.length + 1));                               // truncation
    case 1: return insertAt(bytes, r.int(bytes.length + 1), Uint8Array.from(r.pick(BAD_BYTES)));  // invalid UTF-8 anywhere
    case 2: {                                                                                   // invalid UTF-8 inside a string
      const q = quotePositions(bytes);
      return insertAt(bytes, q.length ? r.pick(q) : 0, Uint8Array.from(r.pick(BAD_BYTES)));
    }
    case 3: {                                                                                   // lone surrogates / bad escapes in a string
      const q = quotePositions(bytes);
      return insertAt(bytes, q.length ? r.pick(q) : 0, enc.encode(r.pick(ESCAPES)));
    }
    case 4: {                                                                                   // huge numbers
      const ranges = numberRanges(text);
      if (!ranges.length) return enc.encode(text + r.pick(HUGE));
      const [a, b] = r.pick(ranges);
      return enc.encode(text.slice(0, a) + r.pick(HUGE) + text.slice(b));
    }
    case 5: {                                                                                   // duplicate a key
      const re = /"([A-Za-z_0-9]+)"\s*:\s*("[^"]*"|-?\d[\d.eE+-]*|true|false|null)/g;
      const members = [...text.matchAll(re)];
      if (!members.length) return bytes;
      const m = r.pick(members);
      return enc.encode(text.slice(0, m.index) + m[0] + ',' + text.slice(m.index));
    }
    case 6: {                                                                                   // deep nesting at a value
      const depth = r.pick([30, 63, 64, 65, 200, 5000, 100000]);
      const ranges = numberRanges(text);
      const open = r.chance(0.5) ? '['.repeat(depth) : '{"a":'.repeat(depth);
      const close = open[0] === '[' ? ']'.repeat(depth) : '}'.repeat(depth);
      if (!ranges.length) return enc.encode(open + text + close);
      const [a, b] = r.pick(ranges);
      return enc.encode(text.slice(0, a) + open + text.slice(a, b) + (r.chance(0.8) ? close : '') + text.slice(b));
    }
    case 7: {                                                                                   // valid non-ASCII in odd places
      const pos = r.int(text.length + 1);
      return enc.encode(text.slice(0, pos) + r.pick(NON_ASCII) + text.slice(pos));
    }
    case 8: {                                                                                   // random byte flips
      const out = Uint8Array.from(bytes);
      for (let i = 0, n = 1 + r.int(4); i < n && out.length; i++) out[r.int(out.length)] = r.int(256);
      return out;
    }
    default: {                                                                                  // delete a range
      const a = r.int(bytes.length + 1);
      return concat(bytes.subarray(0, a), bytes.subarray(Math.min(bytes.length, a + 1 + r.int(40))));
    }
  }
}

/** Every [parent, key] slot of a JSON value (objects and arrays, any depth). */
function slots(value, out = []) {
  if (value && typeof value === 'object') {
    for (const k of Object.keys(value)) {
      out.push([value, Array.isArray(value) ? Number(k) : k]);
      slots(value[k], out);
    }
  }
  return out;
}

const ODD_VALUES = [null, 0, -1, 1, 0.5, -0.5, 1e9, 2 ** 53, 1e308, -1e308, '', 'x', 'é', '0x10', true, false, [],
  {}, [1, 2, 3], { unknown: 1 }, 'nan', 'inf'];

/** One structural mutation of a parsed document (mutates a copy; returns it). */
export function mutateStructure(doc, r) {
  const copy = structuredClone(doc);
  const all = slots(copy);
  if (!all.length) return copy;
  for (let i = 0, n = 1 + r.int(3); i < n; i++) {
    const [parent, key] = r.pick(all);
    const kind = r.int(7);
    if (kind === 0) {
      if (Array.isArray(parent)) parent.splice(key, 1); else delete parent[key];
    } else if (kind === 1) {
      parent[key] = r.pick(ODD_VALUES);
    } else if (kind === 2 && typeof parent[key] === 'number') {
      parent[key] = parent[key] * r.pick([0, -1, 10, 1000, 1e6, 0.001, 1.5]);
    } else if (kind === 3 && !Array.isArray(parent)) {
      parent[`${key}_typo`] = parent[key];
    } else if (kind === 4) {
      parent[key] = structuredClone(r.pick(all)[0]);
    } else if (kind === 5 && Array.isArray(parent[key])) {
      const arr = parent[key];
      for (let j = 0, m = r.int(50); j < m && arr.length; j++) arr.push(structuredClone(arr[r.int(arr.length)]));
    } else {
      parent[key] = String(parent[key]);
    }
  }
  return copy;
}

/**
 * A scenario grown toward the limits, for full runs under a tight work
 * budget: more requests, higher rates, longer outputs, bigger batches.
 */
export function growScenario(doc, r, maxWorkUnits) {
  const s = structuredClone(doc);
  const scale = r.pick([1, 2, 10, 100, 1000, 100000]);
  const grow = (obj, key, cap) => {
    if (obj && typeof obj[key] === 'number') obj[key] = Math.min(cap, Math.round(obj[key] * scale) || 1);
  };
  const w = s.serving?.workload;
  if (w) {
    grow(w, 'num_requests', 2000000);
    if (w.arrival) grow(w.arrival, 'rate_qps', 1e6);
    grow(w, 'output_tokens', 4096);
  }
  if (s.serving) grow(s.serving.workload ?? {}, 'batch_size', 4096);
  if (s.training?.batch) grow(s.training.batch, 'gradient_accumulation', 4096);
  s.limits = { max_work_units: maxWorkUnits };
  return r.chance(0.5) ? mutateStructure(s, r) : s;
}
