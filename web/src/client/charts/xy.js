// Points and lines on numeric axes: sweep curves, Pareto views, and (later)
// latency CDFs and time series. Generic data: series of {x, y, label?}.
import { colorFor, compact, logTick } from './core.js';

/**
 * @param {object} spec
 * @param {{label: string, points: {x: number, y: number, label?: string}[], color?: string,
 *          line?: boolean, dashed?: boolean, pointRadius?: number, pointStyle?: string,
 *          fill?: boolean, order?: number}[]} spec.series
 * @param {string} spec.xLabel  @param {string} spec.yLabel
 * @param {boolean} [spec.logX] @param {boolean} [spec.logY]
 * @param {{x?: [number, number], y?: [number, number]}} [spec.range]
 * @param {boolean} [spec.legend=true]
 */
export function xyConfig({ series, xLabel, yLabel, logX = false, logY = false, range = {}, legend = true }) {
  const datasets = series.map((s, k) => {
    const color = s.color || colorFor(s.label, k);
    return {
      label: s.label,
      data: s.points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y)
        && (!logX || p.x > 0) && (!logY || p.y > 0)),
      showLine: Boolean(s.line),
      borderColor: color,
      backgroundColor: s.fill ? `${color}33` : color,
      borderDash: s.dashed ? [6, 4] : [],
      borderWidth: s.line ? 2 : 1,
      pointRadius: s.pointRadius ?? (s.line ? 3 : 4),
      pointStyle: s.pointStyle || 'circle',
      pointHoverRadius: (s.pointRadius ?? 4) + 2,
      fill: Boolean(s.fill),
      tension: 0,
      order: s.order ?? k,
    };
  });
  const axis = (log, title, r) => ({
    type: log ? 'logarithmic' : 'linear',
    title: { display: Boolean(title), text: title },
    min: r ? r[0] : undefined,
    max: r ? r[1] : undefined,
    ticks: { callback: log ? logTick : (v) => compact(v), autoSkip: !log, maxRotation: 0 },
    // On log axes, grid lines only at the labelled 1-2-5 ticks.
    grid: log ? { color: (c) => (c.tick && c.tick.label ? '#e6eaf0' : 'rgba(0, 0, 0, 0)') } : {},
  });
  return {
    type: 'scatter',
    data: { datasets },
    options: {
      responsive: true,
      scales: { x: axis(logX, xLabel, range.x), y: axis(logY, yLabel, range.y) },
      plugins: {
        legend: { display: legend, position: 'bottom', labels: { sort: (a, b) => a.datasetIndex - b.datasetIndex } },
        tooltip: {
          callbacks: {
            label: (item) => {
              const p = item.raw || {};
              const head = p.label ? `${p.label}: ` : `${item.dataset.label}: `;
              return `${head}${compact(p.x)} ${xLabel ? `(${xLabel})` : ''}, ${compact(p.y)} ${yLabel ? `(${yLabel})` : ''}`;
            },
          },
        },
      },
    },
  };
}

/**
 * Pareto front of points where smaller x and larger y are better
 * (latency vs throughput). Returns the front sorted by x.
 */
export function paretoFront(points) {
  const sorted = points.filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y))
    .slice().sort((a, b) => a.x - b.x || b.y - a.y);
  const front = [];
  let best = -Infinity;
  for (const p of sorted) {
    if (p.y > best) {
      front.push(p);
      best = p.y;
    }
  }
  return front;
}
