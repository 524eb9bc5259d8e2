// Timeline: floating bars on a time axis, one row per lane (a pipeline rank),
// each bar a [start, end] interval of some kind (busy, idle, forward pass…).
// Generic data: row labels, segments {row, start, end, kind, label?}, and the
// kinds with their legend labels and colours.
import { colorFor, compact } from './core.js';

/**
 * @param {object} spec
 * @param {string[]} spec.rows                         lane labels, top to bottom
 * @param {{row: number, start: number, end: number, kind: string, label?: string}[]} spec.segments
 * @param {{key: string, label: string, color?: string}[]} spec.kinds   legend order
 * @param {string} [spec.unit='ms']
 * @param {string} [spec.xLabel]
 * @returns {object} Chart.js config
 */
export function timelineConfig({ rows, segments, kinds, unit = 'ms', xLabel = '' }) {
  const end = Math.max(0, ...segments.map((s) => Number(s.end) || 0));
  const datasets = kinds.map((k, i) => ({
    label: k.label,
    data: segments
      .filter((s) => s.kind === k.key && Number.isFinite(s.start) && Number.isFinite(s.end) && s.end > s.start)
      .map((s) => ({ x: [s.start, s.end], y: rows[s.row], note: s.label || '' })),
    backgroundColor: k.color || colorFor(k.key, i),
    borderColor: '#ffffff',
    borderWidth: 1,
    borderSkipped: false,
    grouped: false,
    order: kinds.length - i,  // later kinds are drawn on top (markers over intervals)
    barPercentage: 0.7,
    categoryPercentage: 1,
  }));
  return {
    type: 'bar',
    data: { labels: rows, datasets },
    options: {
      indexAxis: 'y',
      responsive: true,
      scales: {
        x: {
          type: 'linear',
          min: 0,
          max: end > 0 ? end : undefined,
          title: { display: true, text: xLabel || unit },
          ticks: { callback: (v) => compact(v) },
        },
        y: { type: 'category', labels: rows, grid: { display: false } },
      },
      plugins: {
        legend: { position: 'bottom', labels: { sort: (a, b) => a.datasetIndex - b.datasetIndex } },
        tooltip: {
          callbacks: {
            label: (item) => {
              const [a, b] = item.raw.x;
              const note = item.raw.note ? ` ${item.raw.note}` : '';
              return `${item.dataset.label}:${note} ${compact(a)}–${compact(b)} ${unit} (${compact(b - a)} ${unit})`;
            },
          },
        },
      },
    },
  };
}

/**
 * Timeline segments of pipeline ranks. When a rank lists its passes
 * (`passes: [{kind, start_ms, end_ms, micro_batch?, chunk?}]`) those are drawn
 * as they are; otherwise the rank's totals: busy (forward + backward) from 0,
 * then idle (bubble) to the pipeline's makespan, then what follows the last
 * pass up to the rank's step end (gradient sync, optimizer); and a thin mark
 * at each rank's step end.
 * Returns {segments, perPass}.
 */
export function pipelineSegments(pipeline) {
  const ranks = Array.isArray(pipeline && pipeline.per_rank) ? pipeline.per_rank : [];
  const perPass = ranks.length > 0 && ranks.every((r) => Array.isArray(r.passes));
  const segments = [];
  ranks.forEach((r, row) => {
    if (perPass) {
      for (const p of r.passes) {
        const kind = p.kind === 'bwd' || p.kind === 'backward' ? 'bwd' : p.kind === 'fwd' || p.kind === 'forward' ? 'fwd' : String(p.kind);
        const note = [p.micro_batch !== undefined ? `micro-batch ${p.micro_batch}` : '', p.chunk !== undefined ? `chunk ${p.chunk}` : '']
          .filter(Boolean).join(', ');
        segments.push({ row, start: Number(p.start_ms), end: Number(p.end_ms), kind, label: note });
      }
      return;
    }
    const busy = Number(r.busy_ms) || 0;
    const idle = Number(r.idle_ms) || 0;
    const makespan = Number(pipeline.makespan_ms) || busy + idle;
    const stepEnd = Number(r.step_end_ms) || 0;
    segments.push({ row, start: 0, end: busy, kind: 'busy' });
    if (idle > 0) segments.push({ row, start: busy, end: busy + idle, kind: 'idle' });
    if (stepEnd > makespan) segments.push({ row, start: makespan, end: stepEnd, kind: 'tail' });
  });
  // A thin mark where each rank finishes its step (ranks differ: in 1F1B the
  // last stage finishes its passes first).
  const span = Math.max(0, ...ranks.map((r) => Math.max(Number(r.step_end_ms) || 0, Number(pipeline.makespan_ms) || 0)));
  ranks.forEach((r, row) => {
    const stepEnd = Number(r.step_end_ms);
    if (!(stepEnd > 0)) return;
    segments.push({ row, start: Math.max(0, stepEnd - span / 160), end: stepEnd, kind: 'step_end', label: `at ${+stepEnd.toPrecision(6)} ms` });
  });
  return { segments, perPass };
}
