// Result kinds: how each `result.kind` the engine returns is shown. A view is
//   {
//     kind, title,
//     section: id of the element that shows it (the others are hidden),
//     render(result, warnings, ctx)   draw tables and charts (ctx: {scenario, gpus})
//     headline(result) -> [{key, label, unit, value, title}]   embed + compare
//     charts: [{id, title}]           chart cards an embed may choose (?charts=a,b)
//     rows(result) -> [{name, rows: [object]}]   per-row CSV exports
//     compare(result) -> [[group, key, value]]   numbers compared side by side
//     optional:
//     summary(result, ctx) -> string  the line above the results (else the scenario's description)
//     sweepMetrics(result) -> {key: number}   what a sweep can plot (else result.metrics)
//     embedCharts: [id]                charts an embed shows without ?charts=
//     csvTitle                         tooltip of the CSV export button
//   }
// A headline entry may carry `text` instead of a number (e.g. a fits verdict).
// The serving simulator and the training estimator register their own views
// here (loaded with their first result: registerLazyKind); anything unknown
// falls back to the generic view, which shows every numeric metric.
import * as generic from './views/generic.js';

const views = new Map();
const lazy = new Map();  // kind -> () => promise of its view

export function registerKind(view) {
  views.set(view.kind, view);
}

/** A kind whose view `load()` brings (its code and markup) the first time a result of that kind arrives. */
export function registerLazyKind(kind, load) {
  let loading = null;
  lazy.set(kind, () => (loading = loading || load().then((view) => {
    registerKind(view);
    return view;
  })));
}

/** Resolves once the view of result kind `kind` is loaded (at once for a loaded or an unknown kind). */
export function loadKind(kind) {
  return views.has(kind) || !lazy.has(kind) ? Promise.resolve() : lazy.get(kind)();
}

export function viewFor(result) {
  return views.get(result && result.kind) || generic.view;
}

export function allViews() {
  return [...views.values(), generic.view];
}
