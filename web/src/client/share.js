// Share links: the canonical scenario (a preset id + the overrides that turn the
// preset into the scenario, as a JSON merge patch, RFC 7386) compressed into the
// URL hash as `#v1=<base64url(deflate-raw(JSON))>`. A deployment-search
// question travels the same way as `#s1=<base64url(deflate-raw(JSON))>`.
//
// A link is untrusted input. decodeLink() bounds every size, rejects anything
// that is not the exact v1 shape, refuses keys that could reach Object.prototype,
// and throws a LinkError whose message is safe to show as text. Nothing here
// touches the DOM, so Node can import it (the docs and the tests do).
import { deflateSync, Inflate, strToU8, strFromU8 } from '../vendor/fflate.js';

export const LINK_VERSION = 1;
export const MAX_LINK_CHARS = 32 * 1024;      // compressed, base64url
export const MAX_JSON_BYTES = 512 * 1024;     // after decompression
const MAX_DEPTH = 32;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export class LinkError extends Error {
  constructor(message) {
    super(message);
    this.name = 'LinkError';
    this.code = 'bad_link';
  }
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// ---- JSON merge patch --------------------------------------------------------

/** Deep copy with keys sorted, so equal scenarios give equal bytes. */
export function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (isObject(value)) {
    const out = {};
    for (const k of Object.keys(value).sort()) out[k] = canonical(value[k]);
    return out;
  }
  return value;
}

function deepEqual(a, b) {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** The merge patch that turns `from` into `to` (null deletes a key). */
export function diff(from, to) {
  if (!isObject(from) || !isObject(to)) return canonical(to);
  const patch = {};
  for (const k of Object.keys(from)) if (!(k in to)) patch[k] = null;
  for (const k of Object.keys(to)) {
    if (k in from && deepEqual(from[k], to[k])) continue;
    patch[k] = isObject(from[k]) && isObject(to[k]) ? diff(from[k], to[k]) : canonical(to[k]);
  }
  return canonical(patch);
}

/** Applies a merge patch to a copy of `target`. */
export function applyPatch(target, patch) {
  if (!isObject(patch)) return structuredClone(patch);
  const out = isObject(target) ? structuredClone(target) : {};
  for (const k of Object.keys(patch)) {
    if (FORBIDDEN_KEYS.has(k)) throw new LinkError(`the link contains the forbidden key "${k}"`);
    if (patch[k] === null) delete out[k];
    else out[k] = applyPatch(out[k], patch[k]);
  }
  return out;
}

// ---- base64url ---------------------------------------------------------------

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const B64_INDEX = new Map([...B64].map((c, i) => [c, i]));

function toBase64url(bytes) {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] || 0) << 8) | (bytes[i + 2] || 0);
    out += B64[(n >> 18) & 63] + B64[(n >> 12) & 63];
    if (i + 1 < bytes.length) out += B64[(n >> 6) & 63];
    if (i + 2 < bytes.length) out += B64[n & 63];
  }
  return out;
}

function fromBase64url(text) {
  if (text.length % 4 === 1) throw new LinkError('the link is damaged (its data has an impossible length): it was probably cut off when copied');
  const bytes = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let acc = 0;
  let j = 0;
  for (const c of text) {
    const v = B64_INDEX.get(c);
    if (v === undefined) throw new LinkError('the link is damaged (it contains a character that is not part of a Sightline link)');
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes[j++] = (acc >> bits) & 255;
    }
  }
  return bytes.subarray(0, j);
}

// ---- compression -------------------------------------------------------------

function inflateBounded(bytes) {
  const chunks = [];
  let total = 0;
  const inflater = new Inflate((chunk) => {
    total += chunk.length;
    if (total > MAX_JSON_BYTES) throw new LinkError(`the link expands to more than ${MAX_JSON_BYTES / 1024} KiB, more than any scenario`);
    chunks.push(chunk);
  });
  try {
    // Small input pieces keep every output chunk small, so a hostile link is
    // stopped early instead of being expanded in full first.
    const piece = 256;
    for (let i = 0; i < bytes.length; i += piece) inflater.push(bytes.subarray(i, i + piece), i + piece >= bytes.length);
    if (bytes.length === 0) inflater.push(new Uint8Array(0), true);
  } catch (err) {
    if (err instanceof LinkError) throw err;
    throw new LinkError('the link is damaged (its data does not decompress): it was probably cut off or edited');
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return out;
}

// ---- link payload ------------------------------------------------------------

function checkDepthAndKeys(value, depth = 0) {
  if (depth > MAX_DEPTH) throw new LinkError('the link nests data too deeply to be a scenario');
  if (Array.isArray(value)) for (const v of value) checkDepthAndKeys(v, depth + 1);
  else if (isObject(value)) {
    for (const k of Object.keys(value)) {
      if (FORBIDDEN_KEYS.has(k)) throw new LinkError(`the link contains the forbidden key "${k}"`);
      checkDepthAndKeys(value[k], depth + 1);
    }
  }
}

/** The JSON of a link entry's data (base64url of deflate-raw), bounded; `what` names it in errors. */
function readPayload(data, what) {
  if (data === '') throw new LinkError(`the link is damaged (its ${what} is empty)`);
  const json = inflateBounded(fromBase64url(data));
  try {
    return JSON.parse(strFromU8(json));
  } catch (_) {
    throw new LinkError(`the link is damaged (its ${what} is not valid JSON)`);
  }
}

const compress = (value) => toBase64url(deflateSync(strToU8(JSON.stringify(canonical(value))), { level: 9 }));

/**
 * Encodes the canonical scenario {preset, overrides} as the hash payload
 * `v1=...` (without the leading '#').
 */
export function encodeLink({ preset, overrides }) {
  const payload = canonical({ p: preset ?? null, o: overrides || {} });
  return `v${LINK_VERSION}=${compress(payload)}`;
}

/** The canonical scenario of a scenario relative to its preset record (or null). */
export function canonicalOf(presetId, presetRecord, scenario) {
  return {
    preset: presetId ?? null,
    overrides: presetRecord ? diff(presetRecord, scenario) : canonical(scenario),
  };
}

/** The share link of a scenario: encodeLink(canonicalOf(...)). */
export function scenarioLink(presetId, presetRecord, scenario) {
  return encodeLink(canonicalOf(presetId, presetRecord, scenario));
}

/**
 * Decodes a hash (with or without '#'). Returns null when the hash holds no
 * scenario, {preset, overrides} when it does; throws LinkError otherwise.
 */
export function decodeLink(hash) {
  let text = String(hash ?? '');
  if (text.startsWith('#')) text = text.slice(1);
  if (text === '') return null;
  if (text.length > MAX_LINK_CHARS) throw new LinkError(`the link is too long (${text.length} characters; a scenario link is at most ${MAX_LINK_CHARS})`);
  const params = text.split('&');
  const entry = params.find((p) => /^v\d+=/.test(p));
  if (!entry && params.some((p) => /^s\d+=/.test(p))) return null;  // a search question alone
  if (!entry) {
    if (params.some((p) => /^v\d+$/.test(p))) throw new LinkError('the link is damaged (its scenario is empty)');
    throw new LinkError('the part of the link after "#" is not a Sightline scenario (expected "#v1=…")');
  }
  const eq = entry.indexOf('=');
  const version = Number(entry.slice(1, eq));
  if (version !== LINK_VERSION) {
    throw new LinkError(version > LINK_VERSION
      ? `the link uses scenario format v${version}, made by a newer Sightline; this page reads v${LINK_VERSION}`
      : `the link uses an unknown scenario format v${version}; this page reads v${LINK_VERSION}`);
  }
  const payload = readPayload(entry.slice(eq + 1), 'scenario');
  if (!isObject(payload)) throw new LinkError('the link does not hold a scenario (expected an object)');
  const extra = Object.keys(payload).filter((k) => k !== 'p' && k !== 'o');
  if (extra.length) throw new LinkError('the link holds unexpected data (it was not made by this version of Sightline)');
  if (payload.p !== null && typeof payload.p !== 'string') throw new LinkError('the link names its preset with something that is not a string');
  if (typeof payload.p === 'string' && (payload.p.length === 0 || payload.p.length > 200)) throw new LinkError('the link names an invalid preset id');
  if (!isObject(payload.o)) throw new LinkError('the link\'s overrides are not an object');
  checkDepthAndKeys(payload.o);
  if (payload.p === null && Object.keys(payload.o).length === 0) throw new LinkError('the link holds neither a preset nor a scenario');
  return { preset: payload.p, overrides: payload.o };
}

/**
 * The scenario a decoded link describes, given the preset records by id.
 * Throws LinkError when it names a preset this page does not have.
 */
export function resolveLink({ preset, overrides }, presets) {
  if (preset === null) return applyPatch({}, overrides);
  const record = presets.get(preset);
  if (!record) throw new LinkError(`the link starts from the preset "${preset}", which this version of Sightline does not have`);
  return applyPatch(record, overrides);
}

/**
 * The payload of the hash entry `<letter><version>=...` (a search question
 * `s1=`, a calibration `c1=`), or null when the hash has none; LinkError when
 * the link is too long, the entry's version is not `version` or its data is
 * damaged. `format` and `what` name it in messages.
 */
function readEntry(hash, letter, version, format, what) {
  let text = String(hash ?? '');
  if (text.startsWith('#')) text = text.slice(1);
  if (text.length > MAX_LINK_CHARS) throw new LinkError(`the link is too long (${text.length} characters; a link is at most ${MAX_LINK_CHARS})`);
  const entry = text.split('&').find((p) => new RegExp(`^${letter}\\d+=`).test(p));
  if (!entry) return null;
  const eq = entry.indexOf('=');
  const found = Number(entry.slice(1, eq));
  if (found !== version) throw new LinkError(`the link uses ${format} format ${letter}${found}; this page reads ${letter}${version}`);
  return readPayload(entry.slice(eq + 1), what);
}

// ---- deployment-search questions ----------------------------------------------

export const SEARCH_LINK_VERSION = 1;

/**
 * The hash payload `s1=...` (without '#') of a deployment-search question and,
 * once it has one, the answer it got ({deployment, usd_per_million_tokens, ...}).
 */
export function encodeSearchLink({ question, answer = null }) {
  return `s${SEARCH_LINK_VERSION}=${compress({ q: question, a: answer })}`;
}

/**
 * {question, answer} of a hash, or null when it holds no search question;
 * throws LinkError when the question is damaged. The question's own checks (the
 * engine reads it) come later: this only bounds sizes and refuses dangerous keys.
 */
export function decodeSearchLink(hash) {
  const payload = readEntry(hash, 's', SEARCH_LINK_VERSION, 'search', 'search question');
  if (payload === null) return null;
  if (!isObject(payload) || !isObject(payload.q) || !(payload.a === null || isObject(payload.a))
    || Object.keys(payload).some((k) => k !== 'q' && k !== 'a')) {
    throw new LinkError('the link does not hold a search question (it was not made by this version of Sightline)');
  }
  checkDepthAndKeys(payload);
  return { question: payload.q, answer: payload.a };
}

/** Whether `hash` holds a search question (#s1=…), readable or not (decodeSearchLink then says why not). */
export function holdsSearchLink(hash) {
  try {
    return decodeSearchLink(hash) !== null;
  } catch (_) {
    return true;
  }
}

// ---- cluster calibrations ------------------------------------------------------

export const CALIBRATION_LINK_VERSION = 1;

/**
 * The calibration a link carries: the file `sightline fit` wrote, without the
 * per-run rows of its report (the factors, what was fitted and held, the
 * warnings and the fit's base stay), so a link stays far below MAX_LINK_CHARS.
 */
export function shareableCalibration(calibration) {
  const c = structuredClone(calibration);
  if (isObject(c.fit)) {
    delete c.fit.runs;
    for (const part of ['in_sample', 'held_out']) if (isObject(c.fit[part])) delete c.fit[part].runs;
  }
  return canonical(c);
}

/** The hash entry `c1=...` (without '&') that carries a calibration beside a scenario's `v1=...`. */
export function encodeCalibrationLink(calibration) {
  return `c${CALIBRATION_LINK_VERSION}=${compress(shareableCalibration(calibration))}`;
}

/**
 * The calibration of a hash, or null when it carries none; throws LinkError
 * when it is damaged. The engine checks the factors when a run uses it.
 */
export function decodeCalibrationLink(hash) {
  const cal = readEntry(hash, 'c', CALIBRATION_LINK_VERSION, 'calibration', 'calibration');
  if (cal === null) return null;
  if (!isObject(cal) || typeof cal.id !== 'string' || cal.id === '' || cal.id.length > 200 || !isObject(cal.factors)) {
    throw new LinkError('the link\'s calibration is not a calibration (expected {id, factors, ...})');
  }
  checkDepthAndKeys(cal);
  return cal;
}
