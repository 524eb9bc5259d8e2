// Number formatting for the page. What people read has three significant
// digits (counts in full), grouped thousands and units that scale
// (ms -> s -> min, tok/s -> k tok/s, MiB -> GiB). Every element with
// data-metric also keeps the exact number with three decimals in data-value
// (tests and the compare view read it) and the full number in data-raw.

export function fixed3(value) {
  return typeof value === 'number' && Number.isFinite(value) ? value.toFixed(3) : '—';
}

export function percent(fraction) {
  return typeof fraction === 'number' && Number.isFinite(fraction) ? `${(fraction * 100).toFixed(1)}%` : '—';
}

export function integer(value) {
  return typeof value === 'number' && Number.isFinite(value) ? String(Math.round(value)) : '—';
}

const UNIT_SUFFIXES = [
  ['_tokens_per_s_per_gpu', 'tok/s/GPU'], ['_per_s_per_gpu', '/s/GPU'], ['_tokens_per_s', 'tok/s'], ['_per_s', '/s'], ['_ms', 'ms'], ['_us', 'µs'], ['_s', 's'],
  ['_GiB', 'GiB'], ['_MiB', 'MiB'], ['_GBps', 'GB/s'], ['_tflops', 'TFLOP/s'], ['_pct', '%'],
  ['_B', 'B'], ['_days', 'days'], ['_hours', 'h'],
];
const ACRONYMS = new Set(['ttft', 'tpot', 'e2e', 'mfu', 'mbu', 'hfu', 'qps', 'kv', 'gpu', 'gpus', 'slo', 'tp', 'pp', 'dp', 'ep', 'p50', 'p90', 'p95', 'p99']);

/** A readable label and unit from a metric key: 'ttft_p99_ms' -> {label: 'TTFT p99', unit: 'ms'}. */
export function metricLabel(key) {
  const k = String(key);
  const last = k.split('.').pop();
  let unit = '';
  let stem = last;
  for (const [suffix, u] of UNIT_SUFFIXES) {
    if (last.endsWith(suffix) && last.length > suffix.length) {
      unit = u;
      stem = last.slice(0, -suffix.length) + (suffix.startsWith('_tokens_') ? '_tokens' : '');
      break;
    }
  }
  const words = stem.split('_').filter(Boolean).map((w, i) => {
    if (ACRONYMS.has(w.toLowerCase())) return /^p\d+$/.test(w) ? w : w.toUpperCase();
    return i === 0 ? w.charAt(0).toUpperCase() + w.slice(1) : w;
  });
  return { label: words.join(' ') || k, unit };
}

/** Three significant digits for charts and compact tables; '—' when not a number. */
export function sig3(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  const a = Math.abs(value);
  if (a !== 0 && (a < 1e-3 || a >= 1e9)) return value.toExponential(2);
  return String(+value.toPrecision(3));
}

/**
 * Three significant digits for reading; integers (counts) in full; thousands grouped.
 * `count` says whether the value is a count; by default, whether it is whole. A
 * measured quantity that scales to a whole number (a share of 0.96 shown as
 * 96 %) keeps its three digits: pass count: false.
 */
export function display(value, { count = Number.isInteger(value) } = {}) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  if (count && Number.isInteger(value)) return group(value);
  const a = Math.abs(value);
  if (a < 1e-3 || a >= 1e15) return value.toExponential(2);
  const text = value.toPrecision(3);
  return text.includes('e') ? group(Number(text)) : groupText(text);
}

function group(n) {
  return Math.abs(n) < 10000 ? String(n) : groupThousands(n);
}

/**
 * A whole number with its thousands grouped by commas (1234567 → "1,234,567"),
 * as toLocaleString('en-US') writes it, without its first call's cost (loading
 * the locale data: ~0.1 s of the page's thread before its first result).
 */
export function groupThousands(n) {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function groupText(text) {
  const [int, frac] = text.split('.');
  const i = Number(int);
  return Math.abs(i) < 10000 ? text : `${group(i)}${frac ? `.${frac}` : ''}`;
}

const UNIT_ALIASES = { 'tokens/s': 'tok/s', 'tokens/s/GPU': 'tok/s/GPU', us: 'µs', 'req/s': 'req/s', x: '×', hours: 'h', day: 'days' };

// Ladders of units: [unit, size in the ladder's first unit]. A value moves to the
// largest unit it is at least one of (minutes from 60 s, hours from 60 min).
const LADDERS = [
  [['µs', 1e-3], ['ms', 1], ['s', 1e3], ['min', 6e4], ['h', 3.6e6], ['days', 8.64e7]],
  [['tok/s', 1], ['k tok/s', 1e3], ['M tok/s', 1e6]],
  [['tok/s/GPU', 1], ['k tok/s/GPU', 1e3], ['M tok/s/GPU', 1e6]],
  [['KiB', 1 / 1048576], ['MiB', 1 / 1024], ['GiB', 1], ['TiB', 1024]],
  [['GFLOP', 1], ['TFLOP', 1e3], ['PFLOP', 1e6]],
];

/** The unit a result names, in the page's spelling ('tokens/s' -> 'tok/s'). */
export function unitName(unit) {
  const u = String(unit ?? '');
  return UNIT_ALIASES[u] || u;
}

/**
 * A value and its unit scaled for reading: {factor, unit} such that value / factor
 * is shown in `unit`. Units outside the ladders stay as they are.
 */
export function scaleFor(value, unit) {
  const u = unitName(unit);
  if (u === 'fraction') return { factor: 0.01, unit: '%' };  // a share reads as a percentage: 0.037 -> 3.70 %
  const ladder = LADDERS.find((l) => l.some(([name]) => name === u));
  if (!ladder || typeof value !== 'number' || !Number.isFinite(value) || value === 0) return { factor: 1, unit: u };
  const base = ladder.find(([name]) => name === u)[1];
  const inFirst = Math.abs(value) * base;
  let chosen = ladder[0];
  for (const step of ladder) if (inFirst >= step[1] * (1 - 1e-12)) chosen = step;
  // Sub-unit steps (µs, KiB) only for values below one of the named unit.
  if (chosen[1] < base && Math.abs(value) >= 1) chosen = ladder.find(([name]) => name === u);
  return { factor: chosen[1] / base, unit: chosen[0] };
}

/** `value` in `unit`, scaled and with three significant digits: {text, unit}. */
export function quantity(value, unit) {
  const { factor, unit: shown } = scaleFor(value, unit);
  // A count stays a count; anything else keeps three digits even when scaling makes it whole.
  const count = Number.isInteger(value);
  return { text: display(typeof value === 'number' ? value / factor : value, { count }), unit: shown, factor };
}

/** "low–high" of an interval in the scale of a shown quantity; '' without one. */
export function intervalText(low, high, factor = 1) {
  if (![low, high].every((x) => typeof x === 'number' && Number.isFinite(x))) return '';
  return `${display(low / factor)}–${display(high / factor)}`;
}

/**
 * A GPU as people name it ("NVIDIA H100 SXM"): an inline GPU's own name (the
 * custom GPU the user named), else its preset's name, else its id.
 * `ctx`: {scenario, gpus: Map id -> preset record}.
 */
export function gpuName(id, ctx = {}) {
  const hw = ctx.scenario && ctx.scenario.hardware && ctx.scenario.hardware.gpu;
  if (hw && typeof hw === 'object' && typeof hw.name === 'string' && hw.name && (!id || hw.id === undefined || hw.id === id)) return hw.name;
  const rec = ctx.gpus && typeof ctx.gpus.get === 'function' ? ctx.gpus.get(id) : null;
  return rec && rec.name ? String(rec.name) : String(id ?? '?');
}

/** An arrival rate in the unit a person would use: "10 req/s", "0.5 req/s", or per minute below 0.1 req/s ("1 req/min"). */
export function rateText(qps) {
  if (typeof qps !== 'number' || !Number.isFinite(qps)) return '—';
  return qps > 0 && qps < 0.1 ? `${display(qps * 60)} req/min` : `${display(qps)} req/s`;
}
