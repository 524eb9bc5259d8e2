// The one place that knows about the chart library (Chart.js, bundled under
// vendor/ by web/build.mjs; no CDN). Chart modules next to this file turn generic
// data into a chart description; a ChartView draws it into a host element and
// can export it as PNG or SVG. Labels are drawn on a canvas, never parsed as HTML.

// Chart.js, loaded with the first chart to draw rather than with the page: its
// ~200 KB take ~0.1-0.2 s to fetch and evaluate on a slow machine, which the
// page's first result does not wait for (its charts are drawn after its numbers).
let Chart = null;
let chartLoading = null;

/** Resolves once Chart.js is loaded and set up. */
export function loadChartLibrary() {
  if (!chartLoading) {
    chartLoading = import('../../vendor/chart.umd.min.js').then(() => {
      Chart = globalThis.Chart;
      Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
      Chart.defaults.font.size = 12;
      Chart.defaults.color = '#5f6b7d';
      Chart.defaults.borderColor = '#e6eaf0';
      Chart.defaults.animation = false;          // deterministic screenshots and exports
      Chart.defaults.maintainAspectRatio = false;
      Chart.defaults.plugins.legend.labels.boxWidth = 12;
      Chart.defaults.plugins.legend.labels.boxHeight = 12;
    });
  }
  return chartLoading;
}

export const PALETTE = ['#2f6fdb', '#17a589', '#e0a526', '#8e6fd8', '#d9534f', '#3fb6d3', '#7f8c2d', '#e67e22', '#c2579a', '#5d6d7e'];

const FIXED = new Map([
  ['gemm', '#2f6fdb'], ['attention_decode', '#17a589'], ['attention_prefill', '#0f7a63'],
  ['norm', '#e0a526'], ['rope', '#8e6fd8'], ['kv_cache_write', '#d9534f'], ['embedding', '#3fb6d3'],
  ['activation', '#7f8c2d'], ['sampling', '#c2579a'], ['elementwise', '#e67e22'], ['moe_router', '#c2579a'],
  ['all_reduce', '#5d6d7e'], ['host', '#9aa6b8'], ['collective', '#5d6d7e'], ['communication', '#5d6d7e'], ['lm_head', '#1f4e9c'],
  ['weights_GiB', '#2f6fdb'], ['kv_cache_GiB', '#17a589'], ['activations_GiB', '#e0a526'],
  ['runtime_overhead_GiB', '#8e6fd8'], ['free_GiB', '#dfe4ec'],
]);

/** A stable colour for a series name (known names have fixed colours). */
export function colorFor(name, index = 0) {
  if (FIXED.has(name)) return FIXED.get(name);
  let h = index;
  for (const c of String(name)) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return PALETTE[h % PALETTE.length];
}

/** Compact number for axes and tooltips: 3 significant digits, SI suffix above 10k. */
export function compact(v) {
  if (typeof v !== 'number' || !Number.isFinite(v)) return '—';
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e15)) return v.toExponential(2);
  if (a >= 1e4) {
    for (const [d, s] of [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'k']]) if (a >= d) return `${+(v / d).toPrecision(3)}${s}`;
  }
  return `${+v.toPrecision(3)}`;
}

/** Tick callback for logarithmic axes: 1-2-5 ticks, or powers of ten only on axes over 4 decades. */
export function logTick(value, index, ticks) {
  const m = value / 10 ** Math.floor(Math.log10(value) + 1e-9);
  const lo = ticks && ticks.length ? ticks[0].value : value;
  const hi = ticks && ticks.length ? ticks[ticks.length - 1].value : value;
  const keep = lo > 0 && Math.log10(hi / lo) > 4 ? [1] : [1, 2, 5];
  return keep.some((k) => Math.abs(m - k) < 1e-6) ? compact(value) : '';
}

// While set (deferDraws), the ChartViews whose drawing waits: the page's first
// result shows its numbers, then draws its charts (~0.4 s of Chart.js on a slow
// machine) after the next paint (app.js).
let deferred = null;

/**
 * Defers every chart's drawing from now on until the function returned is
 * called; it loads Chart.js if need be and resolves once what is waiting (each
 * chart's latest description) is drawn.
 */
export function deferDraws() {
  const waiting = deferred || new Set();
  deferred = waiting;
  return () => {
    if (deferred === waiting) deferred = null;
    return loadChartLibrary().then(() => {
      for (const view of waiting) view.drawPending();
    });
  };
}

/**
 * Draws charts into `host` (a block element). `describe` gives the canvas's
 * accessible name (role=img). render(build) takes a function returning a
 * Chart.js config, so the same chart can be drawn again for SVG export.
 */
export class ChartView {
  constructor(host, { name = 'chart', height = 240 } = {}) {
    this.host = host;
    this.name = name;
    this.height = height;
    this.chart = null;
    this.build = null;
    this.pending = false;  // described, its drawing deferred (deferDraws)
    this.canvas = document.createElement('canvas');
    this.canvas.setAttribute('role', 'img');
    this.wrap = document.createElement('div');
    this.wrap.className = 'chart-wrap';
    this.wrap.style.height = `${height}px`;
    this.wrap.append(this.canvas);
    host.replaceChildren(this.wrap);
  }

  /** @param {() => object} build  returns a Chart.js config  @param {string} description */
  render(build, description) {
    this.build = build;
    this.canvas.setAttribute('aria-label', description || this.name);
    this.host.dataset.empty = 'false';
    if (deferred || !Chart) {
      this.pending = true;
      if (deferred) deferred.add(this);
      else loadChartLibrary().then(() => this.drawPending());
      return;
    }
    this.pending = false;
    if (this.chart) this.chart.destroy();
    this.chart = new Chart(this.canvas, build());
  }

  /** Draws the description whose drawing was deferred, unless it was cleared or drawn since. */
  drawPending() {
    if (!this.pending || !this.build || !Chart) return;
    this.pending = false;
    if (this.chart) this.chart.destroy();
    this.chart = new Chart(this.canvas, this.build());
  }

  clear(message) {
    this.pending = false;
    if (this.chart) this.chart.destroy();
    this.chart = null;
    this.build = null;
    this.host.dataset.empty = 'true';
    this.canvas.setAttribute('aria-label', message || `${this.name}: no data`);
    const ctx = this.canvas.getContext('2d');
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
  }

  get hasData() {
    return Boolean(this.chart);
  }

  /** PNG of the chart as drawn, on a white background. Resolves with a Blob. */
  toPng() {
    if (!this.chart) return Promise.reject(new Error('nothing to export'));
    const src = this.canvas;
    const out = document.createElement('canvas');
    out.width = src.width;
    out.height = src.height;
    const ctx = out.getContext('2d');
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, out.width, out.height);
    ctx.drawImage(src, 0, 0);
    return new Promise((resolve, reject) => out.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG encoding failed'))), 'image/png'));
  }

  /** The chart drawn again into an SVG drawing context; resolves with the SVG text. */
  async toSvg() {
    if (!this.build) throw new Error('nothing to export');
    const [{ SvgContext }] = await Promise.all([import('./svg-context.js'), loadChartLibrary()]);  // on demand: only an SVG export needs it
    const width = Math.max(1, Math.round(this.wrap.clientWidth || 640));
    const height = Math.max(1, Math.round(this.wrap.clientHeight || this.height));
    const ctx = new SvgContext({ width, height });
    // A stand-in canvas for Chart.js's DOM-free platform.
    const fake = { width, height, style: {}, getContext: () => ctx, ownerDocument: document };
    ctx.canvas = fake;
    const config = this.build();
    config.options = { ...config.options, responsive: false, animation: false, devicePixelRatio: 1 };
    config.platform = Chart.BasicPlatform;
    // Lines drawn through Path2D do not reach the SVG context: a `segment`
    // option makes Chart.js draw them segment by segment instead.
    for (const ds of config.data.datasets) if (ds.showLine || config.type === 'line') ds.segment = ds.segment || {};
    // A plain font list that SVG viewers resolve (system-ui is a CSS-only name).
    const family = Chart.defaults.font.family;
    Chart.defaults.font.family = 'Helvetica, Arial, sans-serif';
    let chart;
    try {
      chart = new Chart(ctx, config);  // draws synchronously (no animation)
    } finally {
      Chart.defaults.font.family = family;
    }
    const svg = ctx.getSerializedSvg(true);
    chart.destroy();
    return svg;
  }
}

