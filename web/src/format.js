// Number formatting for the page. Every element with data-metric shows its
// number with exactly three decimals (tests read these), without grouping.

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
const ACRONYMS = new Set(['ttft', 'tpot', 'e2e', 'mfu', 'hfu', 'qps', 'kv', 'gpu', 'gpus', 'slo', 'tp', 'pp', 'dp', 'ep', 'p50', 'p90', 'p95', 'p99']);

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
  return String(+value.toPrecision(4));
}
