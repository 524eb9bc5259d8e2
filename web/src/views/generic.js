// The view of any result kind that has no view of its own yet: every numeric
// metric as a headline card and a table, and the whole result as JSON text.
import { fixed3, metricLabel } from '../format.js';
import { metricKeys, numericLeaves } from '../result-values.js';
import { $, cell } from '../dom.js';


export const view = {
  kind: '*',
  title: 'Result',
  section: 'generic-view',
  charts: [],

  headline(result) {
    const m = (result && result.metrics) || {};
    return metricKeys(result).slice(0, 4).map((key) => ({ key, ...metricLabel(key), value: m[key], title: key }));
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
