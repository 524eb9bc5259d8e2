// Stacked bars from generic data: categories (one bar each) × series (one
// stacked segment each). Used for per-family latency (prefill / decode) and
// memory per GPU now; step-time breakdowns can reuse it as they are.
import { colorFor, compact } from './core.js';

/**
 * @param {object} spec
 * @param {string[]} spec.categories       bar labels
 * @param {{label: string, key?: string, values: number[], color?: string}[]} spec.series
 * @param {string} [spec.unit]             axis unit, e.g. 'ms' or 'GiB'
 * @param {boolean} [spec.horizontal=true]
 * @param {boolean} [spec.normalize=false] show each bar as 100 %
 * @param {number} [spec.max]              value axis maximum (e.g. GPU capacity)
 * @returns {object} Chart.js config
 */
export function stackedBarsConfig({ categories, series, unit = '', horizontal = true, normalize = false, max }) {
  const totals = categories.map((_, i) => series.reduce((s, se) => s + (Number(se.values[i]) || 0), 0));
  const datasets = series.map((se, k) => ({
    label: se.label,
    data: se.values.map((v, i) => {
      const x = Number(v) || 0;
      return normalize ? (totals[i] > 0 ? (100 * x) / totals[i] : 0) : x;
    }),
    raw: se.values,
    backgroundColor: se.color || colorFor(se.key || se.label, k),
    borderWidth: 0,
    barPercentage: 0.8,
    categoryPercentage: 0.9,
  }));
  const valueAxis = horizontal ? 'x' : 'y';
  const catAxis = horizontal ? 'y' : 'x';
  const valueUnit = normalize ? '%' : unit;
  return {
    type: 'bar',
    data: { labels: categories, datasets },
    options: {
      indexAxis: horizontal ? 'y' : 'x',
      responsive: true,
      scales: {
        [valueAxis]: {
          stacked: true,
          beginAtZero: true,
          max: normalize ? 100 : max,
          title: { display: Boolean(valueUnit), text: valueUnit },
          ticks: { callback: (v) => compact(v) },
        },
        [catAxis]: { stacked: true, grid: { display: false } },
      },
      plugins: {
        legend: { position: 'bottom' },
        tooltip: {
          callbacks: {
            label: (item) => {
              const raw = Number(item.dataset.raw[item.dataIndex]) || 0;
              const total = totals[item.dataIndex];
              const share = total > 0 ? ` (${((100 * raw) / total).toFixed(1)}%)` : '';
              return `${item.dataset.label}: ${compact(raw)} ${unit}${share}`;
            },
          },
        },
      },
    },
  };
}

/** Sums rows' `valueKey` by their `groupKey` (e.g. time_us by family), in first-seen order. */
export function groupSum(rows, groupKey, valueKey) {
  const out = new Map();
  for (const r of rows || []) {
    const g = String(r[groupKey] ?? 'other');
    out.set(g, (out.get(g) || 0) + (Number(r[valueKey]) || 0));
  }
  return out;
}
