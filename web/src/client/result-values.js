// Numeric values read out of a result, for the views, sweeps and compare.
// Imports nothing, so any view can use it without an import cycle.

/** Numeric leaves of an object as [path, value] pairs ('a.b.c'), arrays skipped. */
export function numericLeaves(obj, prefix = '') {
  const out = [];
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return out;
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    const p = prefix ? `${prefix}.${k}` : k;
    if (typeof v === 'number' && Number.isFinite(v)) out.push([p, v]);
    else if (v && typeof v === 'object' && !Array.isArray(v)) out.push(...numericLeaves(v, p));
  }
  return out;
}

/** Keys of numeric values directly under result.metrics (what sweeps can plot). */
export function metricKeys(result) {
  const m = (result && result.metrics) || {};
  return Object.keys(m).filter((k) => typeof m[k] === 'number' && Number.isFinite(m[k]));
}
