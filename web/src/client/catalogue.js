// The engine's exported catalogue (listRegistries, the same JSON `sightline
// registries` prints): every metric's label, unit and description with its
// place in the result, the per-request distributions, the policy name tables,
// the data types and (when the engine exports it) the parameter schema. The
// views and the form read their words, units, choices and ranges from here, so
// the page says what the CLI says; nothing here is kept by hand. app.js sets
// it once, before anything is drawn; a page whose engine returns no catalogue
// shows an error instead of guessing.
import { unitName } from './format.js';

let registries = null;
const metrics = new Map();        // `${kind}/${id}` -> entry
const byPointer = new Map();      // `${kind}${pointer}` -> entry
const distributions = new Map();  // id -> entry
const parameters = new Map();     // pointer (array indices as `*`) -> entry
const memoryParts = new Map();    // `${kind}/${id}` -> entry
const stepParts = new Map();      // id -> entry

/** Takes the registries object; throws when it is not a catalogue (the page then shows the error). */
export function setCatalogue(reg) {
  if (!reg || typeof reg !== 'object' || !Array.isArray(reg.metrics) || !reg.policies) {
    throw new Error('The engine returned no catalogue (listRegistries): metric labels and policy names are unavailable');
  }
  registries = reg;
  metrics.clear();
  byPointer.clear();
  distributions.clear();
  parameters.clear();
  memoryParts.clear();
  stepParts.clear();
  for (const p of Array.isArray(reg.step_parts) ? reg.step_parts : []) stepParts.set(p.id, p);
  for (const p of Array.isArray(reg.memory_parts) ? reg.memory_parts : []) memoryParts.set(`${p.kind}/${p.id}`, p);
  for (const m of reg.metrics) {
    metrics.set(`${m.kind}/${m.id}`, m);
    byPointer.set(`${m.kind}${m.pointer}`, m);
  }
  for (const d of Array.isArray(reg.distributions) ? reg.distributions : []) distributions.set(d.id, d);
  for (const p of Array.isArray(reg.parameters) ? reg.parameters : []) parameters.set(p.pointer, p);
}

/** Whether the catalogue is loaded. */
export function hasCatalogue() {
  return registries !== null;
}

function need() {
  if (!registries) throw new Error('The engine catalogue is not loaded yet');
  return registries;
}

/** The entry of `map` at `key`; a view naming one the engine does not catalogue is a bug: it throws. */
function entry(map, key, what) {
  need();
  const e = map.get(key);
  if (!e) throw new Error(`The engine's catalogue has no ${what}`);
  return e;
}

/**
 * The catalogue entry {kind, id, label, unit, pointer, description} of metric `id`
 * of result kind `kind` ('latency' | 'serving' | 'training'). A view naming a metric
 * the engine does not catalogue is a bug: it throws.
 */
export function metricInfo(kind, id) {
  return entry(metrics, `${kind}/${id}`, `${kind} metric '${id}'`);
}

/** Every catalogued metric of result kind `kind`, in catalogue order. */
export function metricList(kind) {
  return need().metrics.filter((m) => m.kind === kind);
}

/** The catalogue kind of a result kind: 'serving_latency' -> 'latency', 'serving_simulation' -> 'serving'. */
export function catalogueKind(resultKind) {
  return { serving_latency: 'latency', serving_simulation: 'serving', training: 'training' }[resultKind] || null;
}

/** The entry of a `kind` metric at `pointer` in the result, or null. */
export function metricAt(kind, pointer) {
  need();
  return byPointer.get(`${kind}${pointer}`) || null;
}

/** The value at a JSON pointer of `obj`; undefined when absent. */
export function valueAt(obj, pointer) {
  let cur = obj;
  for (const key of String(pointer).split('/').slice(1)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = cur[key.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return cur;
}

/** The value of catalogued metric `m` in `result`. */
export function metricValue(result, m) {
  return valueAt(result, m.pointer);
}

/** A metric's data-metric key: its place in the result, dotted, without a leading 'metrics.' ('concurrency.waiting_max'). */
export function metricKey(m) {
  return m.pointer.replace(/^\/metrics\//, '').replace(/^\//, '').replace(/\//g, '.');
}

/** The words a view shows for metric `id`: {label, unit (page spelling), title}. */
export function metricWords(kind, id) {
  const m = metricInfo(kind, id);
  return { label: m.label, unit: unitName(m.unit), title: m.description || m.label };
}

/**
 * The result's headline cards, as the engine chose them (result.headline_metrics:
 * catalogue ids, in order; max_qps only where a capacity search ran, the time to
 * train only where the scenario gives tokens to train): [{key, label, unit, title,
 * value, metric}]. The page keeps no list of its own; a result without the field
 * has no cards.
 */
export function headlineCards(result) {
  const kind = catalogueKind(result && result.kind);
  const ids = result && Array.isArray(result.headline_metrics) ? result.headline_metrics : [];
  if (!kind) return [];
  return ids.map((key) => {
    const metric = metricInfo(kind, key);
    return { key, ...metricWords(kind, key), value: metricValue(result, metric), metric };
  });
}

/** A part of a result's memory per GPU ({kind, id, label, unit, description}); throws when absent. */
export function memoryPart(kind, id) {
  return entry(memoryParts, `${kind}/${id}`, `${kind} memory part '${id}'`);
}

/** A part of a training step ({id, label, unit, description}; `exposed_comm/tp` for nested ones); throws when absent. */
export function stepPart(id) {
  return entry(stepParts, id, `step part '${id}'`);
}

/** The per-request distributions of serving results [{id, label, unit, pointer, stats, description}]. */
export function distributionList() {
  return [...need().distributions || []];
}

/** One distribution by id (throws when absent). */
export function distributionInfo(id) {
  return entry(distributions, id, `distribution '${id}'`);
}

/** A policy family's entries [{name, description}] (throws when the engine lacks the family). */
export function policyList(family) {
  const list = need().policies[family];
  if (!Array.isArray(list) || !list.length) throw new Error(`The engine's catalogue has no policy family '${family}'`);
  return list;
}

/**
 * The schema entry of an input at JSON pointer `path` ({pointer, type, min, max,
 * default, choices}); array indices match `*`. Null when the engine exports none.
 */
export function parameterAt(path) {
  if (!registries) return null;
  const key = String(path).split('/').map((p) => (/^\d+$/.test(p) ? '*' : p)).join('/');
  return parameters.get(key) || null;
}

/**
 * Writes a field's words {label, unit (null: none), help}: the label's text, then
 * its unit, and the help as the label's and the control's tooltip.
 */
export function writeFieldWords(label, control, w) {
  const unit = document.createElement('span');
  unit.className = 'unit';
  unit.textContent = w.unit;
  label.replaceChildren(...(w.unit ? [`${w.label} `, unit] : [w.label]));
  label.title = w.help;
  if (control) control.title = w.help;
}

/**
 * The words of the scenario parameter at `path` ({label, unit, help}, from its
 * schema entry: engine/scenario/parameter_words.cpp); throws when it has none.
 * They come in registries.json only: a catalogue from the worker's engine has
 * none (the wasm module leaves them out; web/catalogue-words.mjs).
 */
export function parameterWords(path) {
  const p = parameterAt(path);
  if (!p || !p.label) throw new Error(`The engine's parameter schema has no words for ${path} (they ship in registries.json)`);
  return { label: p.label, unit: p.unit ?? null, help: p.help };
}

/** Labels in markup that edit a scenario parameter (<label for=ID data-parameter=POINTER>) take its words. */
export function labelParameters(root = document) {
  for (const label of root.querySelectorAll('label[data-parameter]')) {
    writeFieldWords(label, root.querySelector(`#${label.htmlFor}`), parameterWords(label.dataset.parameter));
  }
}

/** Shows catalogue words in static markup: [data-catalogue="kind/id"] gets its label, unit and title. */
export function labelStatic(root = document) {
  for (const node of root.querySelectorAll('[data-catalogue]')) {
    const [kind, id] = node.dataset.catalogue.split('/');
    const w = metricWords(kind, id);
    node.title = w.title;
    const label = node.querySelector('.kpi-label, .catalogue-label');
    if (label) label.textContent = w.label;
    const unit = node.querySelector('.unit, .unitcell');
    if (unit) unit.textContent = w.unit;
  }
}
