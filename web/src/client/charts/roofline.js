// Roofline: operators placed at (arithmetic intensity, achieved TFLOP/s) under
// the GPU's compute roof and memory-bandwidth slope. Generic data: groups of
// {flops, bytes, time_us, name} rows, plus the roof numbers.
import { xyConfig } from './xy.js';

/** Points of rows with both FLOPs and bytes: x = FLOP/byte, y = TFLOP/s. */
export function rooflinePoints(rows) {
  const points = [];
  let skipped = 0;
  for (const r of rows || []) {
    const flops = Number(r.flops);
    const bytes = Number(r.bytes);
    const seconds = Number(r.time_us) * 1e-6;
    if (!(flops > 0 && bytes > 0 && seconds > 0)) {
      skipped += 1;
      continue;
    }
    points.push({ x: flops / bytes, y: flops / seconds / 1e12, label: String(r.name ?? '') });
  }
  return { points, skipped };
}

/**
 * @param {object} spec
 * @param {{label: string, points: {x, y, label}[], color?: string}[]} spec.groups
 * @param {number} spec.peakTflops        compute roof, TFLOP/s
 * @param {number} spec.bandwidthGBps     memory roof slope, GB/s
 * @param {string} [spec.roofLabel]
 */
export function rooflineConfig({ groups, peakTflops, bandwidthGBps, roofLabel = 'Roof' }) {
  const all = groups.flatMap((g) => g.points);
  const haveRoof = peakTflops > 0 && bandwidthGBps > 0;
  const ridge = haveRoof ? (peakTflops * 1000) / bandwidthGBps : 1;
  const xs = all.map((p) => p.x).concat(haveRoof ? [ridge] : []);
  const ys = all.map((p) => p.y).concat(haveRoof ? [peakTflops] : []);
  const xMin = 10 ** Math.floor(Math.log10(Math.max(1e-3, Math.min(...xs, 1)) / 2));
  const xMax = 10 ** Math.ceil(Math.log10(Math.max(...xs, 10) * 2));
  const yMax = 10 ** Math.ceil(Math.log10(Math.max(...ys, 1) * 1.5));
  const yMin = 10 ** Math.floor(Math.log10(Math.max(1e-6, Math.min(...ys, haveRoof ? (xMin * bandwidthGBps) / 1000 : 1))));
  const styles = ['circle', 'rectRot', 'triangle', 'rect'];
  // Later groups are drawn on top, in a different marker shape, so points that
  // coincide (a norm in prefill and in decode) stay visible.
  const series = groups.map((g, i) => ({
    label: g.label, points: g.points, color: g.color, pointStyle: styles[i % styles.length], pointRadius: 5, order: groups.length - i,
  }));
  if (haveRoof) {
    const roofAt = (x) => Math.min(peakTflops, (x * bandwidthGBps) / 1000);
    series.push({
      label: roofLabel,
      points: [{ x: xMin, y: roofAt(xMin) }, { x: ridge, y: peakTflops }, { x: xMax, y: peakTflops }],
      color: '#1c2330',
      line: true,
      pointRadius: 0,
      order: 100,
    });
  }
  return xyConfig({
    series,
    xLabel: 'Arithmetic intensity (FLOP/byte)',
    yLabel: 'Achieved TFLOP/s',
    logX: true,
    logY: true,
    range: { x: [xMin, xMax], y: [yMin, yMax] },
  });
}
