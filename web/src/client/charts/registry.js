// Chart views by name, so toolbar buttons (PNG / SVG export) and embeds find
// the chart a card shows.
import { ChartView } from './core.js';

const views = new Map();

/** The ChartView called `name`, created in `host` on first use. */
export function chartView(name, host, options = {}) {
  let v = views.get(name);
  if (!v || v.host !== host) {
    v = new ChartView(host, { name, ...options });
    views.set(name, v);
  }
  return v;
}

export function getChartView(name) {
  return views.get(name) || null;
}
