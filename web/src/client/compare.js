// Compare: a pinned scenario A beside the current scenario B, every input and
// every number of the two results, with the differences highlighted (colour
// plus a text marker, so it does not rely on colour alone).
import { viewFor } from './kinds.js';
import { fixed3, metricLabel, unitName } from './format.js';
import { catalogueKind, hasCatalogue, metricAt } from './catalogue.js';
import { $, cell } from './dom.js';

/** A compared number's words: the catalogue's where the number is a catalogued metric, else read from its key. */
function compareWords(result, key) {
  const kind = catalogueKind(result && result.kind);
  const m = kind && hasCatalogue() ? metricAt(kind, `/${key.replace(/\./g, '/')}`) : null;
  return m ? { label: m.label, unit: unitName(m.unit) } : metricLabel(key);
}

const IGNORED_INPUTS = new Set(['/source', '/title', '/id']);

/** Leaves of a scenario as [JSON pointer, value text]. */
export function scenarioLeaves(obj, prefix = '') {
  const out = [];
  if (Array.isArray(obj)) obj.forEach((v, i) => out.push(...scenarioLeaves(v, `${prefix}/${i}`)));
  else if (obj && typeof obj === 'object') {
    for (const k of Object.keys(obj).sort()) out.push(...scenarioLeaves(obj[k], `${prefix}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`));
  } else out.push([prefix || '/', obj === undefined ? '' : typeof obj === 'string' ? obj : JSON.stringify(obj)]);
  return out;
}

function relDiff(a, b) {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === b ? 0 : Infinity;
  if (a === b) return 0;
  return Math.abs(b - a) / Math.max(Math.abs(a), Math.abs(b), 1e-300);
}

export class Compare {
  constructor() {
    this.a = null;  // {scenario, result, label}
    this.b = null;
  }

  pin(entry) {
    this.a = entry;
    this.render();
  }

  clear() {
    this.a = null;
    this.render();
  }

  update(entry) {
    this.b = entry;
    this.render();
  }

  render() {
    const empty = !this.a;
    $('compare-empty').hidden = !empty;
    $('compare-body').hidden = empty;
    $('compare-clear').disabled = empty;
    $('compare-swap').disabled = empty || !this.b;
    if (empty) return;
    const { a, b } = this;
    $('compare-a-label').textContent = a.label;
    $('compare-b-label').textContent = b ? b.label : '—';
    const onlyDiff = $('compare-only-diff').checked;

    // inputs
    const la = new Map(scenarioLeaves(a.scenario));
    const lb = new Map(scenarioLeaves(b ? b.scenario : {}));
    const keys = [...new Set([...la.keys(), ...lb.keys()])].filter((k) => !IGNORED_INPUTS.has(k)).sort();
    let inputDiffs = 0;
    const inputRows = [];
    for (const k of keys) {
      const va = la.has(k) ? la.get(k) : '(default)';
      const vb = lb.has(k) ? lb.get(k) : '(default)';
      const differs = va !== vb;
      if (differs) inputDiffs += 1;
      if (onlyDiff && !differs) continue;
      const tr = document.createElement('tr');
      tr.dataset.path = k;
      if (differs) tr.className = 'diff';
      const th = cell('th', k, 'mono');
      th.scope = 'row';
      tr.append(th, cell('td', va), cell('td', vb), cell('td', differs ? 'changed' : '', 'marker'));
      inputRows.push(tr);
    }
    $('compare-inputs').querySelector('tbody').replaceChildren(...inputRows);

    // numbers
    const na = viewFor(a.result).compare(a.result);
    const nb = b ? viewFor(b.result).compare(b.result) : [];
    const map = (list) => new Map(list.map(([g, k, v]) => [`${g}.${k}`, v]));
    const ma = map(na);
    const mb = map(nb);
    const order = [...new Set([...na, ...nb].map(([g, k]) => `${g}.${k}`))];
    let metricDiffs = 0;
    const metricRows = [];
    for (const key of order) {
      const va = ma.get(key);
      const vb = mb.get(key);
      const d = relDiff(va, vb);
      const differs = d > 1e-9;
      if (differs) metricDiffs += 1;
      if (onlyDiff && !differs) continue;
      const { label, unit } = compareWords(a.result, key);
      const tr = document.createElement('tr');
      tr.dataset.key = key;
      if (differs) tr.className = 'diff';
      const th = cell('th', `${label}${unit ? ` (${unit})` : ''}`);
      th.scope = 'row';
      th.title = key;
      let delta = '';
      if (Number.isFinite(va) && Number.isFinite(vb) && va !== 0) delta = `${vb >= va ? '+' : ''}${(((vb - va) / Math.abs(va)) * 100).toFixed(1)}%`;
      else if (differs) delta = 'changed';
      tr.append(th, cell('td', fixed3(va), 'num'), cell('td', fixed3(vb), 'num'), cell('td', delta, 'num marker'));
      metricRows.push(tr);
    }
    $('compare-metrics').querySelector('tbody').replaceChildren(...metricRows);
    $('compare-summary').textContent = `${inputDiffs} input${inputDiffs === 1 ? '' : 's'} and ${metricDiffs} number${metricDiffs === 1 ? '' : 's'} differ.`;
    $('compare-summary').dataset.inputs = String(inputDiffs);
    $('compare-summary').dataset.metrics = String(metricDiffs);
  }
}
