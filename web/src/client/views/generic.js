// The view of any result kind that has no view of its own yet: the engine's
// key metrics as headline cards, every numeric metric in a table, and the
// whole result as JSON text.
import { fixed3, metricLabel, unitName } from '../format.js';
import { metricKeys, numericLeaves } from '../result-values.js';
import { $, cell } from '../dom.js';


export const view = {
  kind: '*',
  title: 'Result',
  section: 'generic-view',
  charts: [],

  headline(result) {
    // The engine's choice: its key metrics (each with its label and unit); the page picks none.
    const list = result && Array.isArray(result.key_metrics) ? result.key_metrics : [];
    return list.filter((k) => k && typeof k === 'object' && typeof k.id === 'string')
      .map((k) => ({ key: k.id, label: String(k.label || k.id), unit: unitName(String(k.unit || '')), value: k.value, title: String(k.description || k.id) }));
  },

  render(result) {
    const m = (result && result.metrics) || {};
    $('generic-kind').textContent = String((result && result.kind) || 'unknown');
    const rows = metricKeys(result).map((key) => {
      const { label, unit } = metricLabel(key);
      const tr = document.createElement('tr');
      const th = cell('th', label);
      th.scope = 'row';
      th.title = key;
      const td = cell('td', undefined, 'num');
      const span = cell('span', fixed3(m[key]));
      span.dataset.metric = key;
      td.append(span);
      tr.append(th, td, cell('td', unit, 'unitcell'));
      return tr;
    });
    $('generic-metrics').querySelector('tbody').replaceChildren(...rows);
    $('generic-json').textContent = JSON.stringify(result, null, 2);
  },

  rows() {
    return [];
  },

  compare(result) {
    return numericLeaves(result && result.metrics).map(([k, v]) => ['metrics', k, v]);
  },
};
