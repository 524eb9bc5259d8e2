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
