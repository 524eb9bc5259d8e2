// Headline numbers read honestly: every headline card (.kpi-value holding a
// data-metric or data-headline number and its .unit) is shown in a scaled unit
// with three significant digits, with the 80% interval beside it when the
// result has one, and the result carries a badge naming its cost tier and the
// end-to-end error measured for its kind at that tier, linking to the accuracy page. Views stay unaware of this:
// app.js runs decorate() after every render.
import { quantity, intervalText, unitName } from './format.js';
import { cell } from './dom.js';
import { catalogueKind, metricInfo, valueAt } from './catalogue.js';

/**
 * The result's key metrics: every kind has one ordered array of
 * {id, label, unit, value, low, high}; the latency result's `intervals_80`
 * ({id: [low, high]}) adds intervals for metrics outside it.
 */
export function keyMetrics(result) {
  const raw = result && result.key_metrics;
  const list = Array.isArray(raw) ? raw.filter((k) => k && typeof k === 'object').map((k) => ({ ...k })) : [];
  const intervals = (result && result.intervals_80) || {};
  for (const [id, pair] of Object.entries(intervals)) {
    if (!Array.isArray(pair) || pair.length !== 2) continue;
    const found = list.find((k) => k.id === id);
    if (found) {
      if (found.low === undefined) [found.low, found.high] = pair;
    } else list.push({ id, value: result.metrics ? result.metrics[id] : undefined, low: pair[0], high: pair[1] });
  }
  addSiblingIntervals(result, list);
  return list;
}

/**
 * The headline cards outside the key metrics whose figure the result carries
 * with its 80% interval beside it (`NAME_low` and `NAME_high` next to `NAME`, as
 * the steady window's goodput in result.headline): their intervals join the list.
 */
function addSiblingIntervals(result, list) {
  const kind = catalogueKind(result && result.kind);
  const ids = kind && Array.isArray(result.headline_metrics) ? result.headline_metrics : [];
  for (const id of ids) {
    if (list.some((k) => k.id === id)) continue;
    const { pointer } = metricInfo(kind, id);
    const cut = pointer.lastIndexOf('/');
    const parent = valueAt(result, pointer.slice(0, cut));
    const name = pointer.slice(cut + 1);
    if (parent && typeof parent === 'object' && Number.isFinite(parent[`${name}_low`]) && Number.isFinite(parent[`${name}_high`]))
      list.push({ id, value: parent[name], low: parent[`${name}_low`], high: parent[`${name}_high`] });
  }
}

/** The interval of metric `id` (a view's key without its 'serve.' / 'train.' prefix), or null. */
function intervalOf(list, key) {
  const id = String(key).replace(/^(serve|train)\./, '');
  const k = list.find((m) => m.id === id);
  return k && Number.isFinite(k.low) && Number.isFinite(k.high) ? k : null;
}

/**
 * Where a figure's interval comes from, for its line's tooltip: the kernels'
 * interval at the result's tier, widened where the result's `interval_band`
 * lists the figure; the band's sentence is the engine's (its `note`).
 */
function intervalSource(result, id) {
  const band = result && result.interval_band;
  const tier = `(${(result && result.cost_tier) || ''} tier)`;
  return band && band.applied && band.kernel_intervals && band.kernel_intervals[id]
    ? { source: 'kind_band', title: `80% interval: the kernels' ${tier}, ${band.note}` }
    : { source: 'kernels', title: `80% interval from the kernels' measured residuals ${tier}` };
}

/**
 * Why headline card `key` has no interval, in the engine's words (the result's `no_interval`: the
 * runs at the low and high cost bounds gave the same figure, or did not give it); '' when it gives none.
 */
function noIntervalReason(result, key) {
  const id = String(key).replace(/^(serve|train)\./, '');
  const reason = result && result.no_interval && result.no_interval[id];
  return typeof reason === 'string' ? reason : '';
}

/** The card's line under its figure (made once): its interval, or why it has none. */
function intervalLine(card, valueEl) {
  let line = card.querySelector(':scope > .kpi-interval');
  if (!line) {
    line = cell('div', '', 'kpi-interval');
    valueEl.after(line);
  }
  return line;
}

/** The line says why the card has no interval (hidden when the engine gives no reason). */
function showReason(line, reason) {
  line.hidden = !reason;
  line.textContent = reason ? `${reason.charAt(0).toUpperCase()}${reason.slice(1)}` : '';
  line.dataset.source = 'none';
  line.title = reason ? 'Why this figure has no 80% interval (the engine\'s reason)' : '';
  delete line.dataset.low;
  delete line.dataset.high;
}

/** Scales one headline card and writes its interval line (or why it has none). */
function decorateCard(valueEl, list, result) {
  const num = valueEl.querySelector('[data-metric], [data-headline]');
  const unitEl = valueEl.querySelector('.unit');
  const card = valueEl.closest('.kpi') || valueEl.parentElement;
  if (!num || !unitEl) {
    // A card whose figure is a verdict (training's memory: fits or not) names its metric on the card.
    const id = card.dataset.catalogue ? card.dataset.catalogue.split('/').pop() : '';
    if (id) showReason(intervalLine(card, valueEl), noIntervalReason(result, id));
    return;
  }
  if (unitEl.dataset.base === undefined) unitEl.dataset.base = unitEl.textContent;
  const raw = num.dataset.raw === '' || num.dataset.raw === undefined ? NaN : Number(num.dataset.raw);
  const key = num.dataset.metric || num.dataset.headline;
  if (!Number.isFinite(raw)) {  // no figure ("—"): nothing to bound, nothing to explain here
    unitEl.textContent = unitName(unitEl.dataset.base);
    const line = card.querySelector(':scope > .kpi-interval');
    if (line) line.hidden = true;
    return;
  }
  const q = quantity(raw, unitEl.dataset.base);
  num.textContent = q.text;
  unitEl.textContent = q.unit;
  const k = intervalOf(list, key);
  const line = intervalLine(card, valueEl);
  if (!k) showReason(line, noIntervalReason(result, key));
  else {
    line.hidden = false;
    line.textContent = `80% interval ${intervalText(k.low, k.high, q.factor)} ${q.unit}`;
    line.dataset.low = String(k.low);
    line.dataset.high = String(k.high);
    const from = intervalSource(result, k.id);
    line.dataset.source = from.source;
    line.title = from.title;
  }
}

/** Tier names as results spell them, and what each means, for the badge's tooltip. */
const TIERS = {
  'target-measured': 'Kernel efficiencies fitted on this GPU\'s own measurements',
  'cross-generation': 'No calibration of this GPU: efficiencies transferred from a measured GPU through its spec sheet',
  roofline: 'Plain physical bound (peak FLOP/s and bandwidth); no measured efficiencies',
  mixed: 'Parts of the result used different tiers',
};

/**
 * End-to-end errors the engine measured against published runs, by result kind
 * and cost tier (measured-errors.json, written from `sightline report-e2e` by
 * web/measured-errors.mjs). Loaded once; the badge is redrawn when it arrives.
 */
let measured = null;
let shown = null;  // [badge, result] last drawn
if (typeof fetch === 'function') {
  fetch(new URL('measured-errors.json', import.meta.url))
    .then((r) => (r.ok ? r.json() : null))
    .catch(() => null)
    .then((m) => {
      measured = m && typeof m === 'object' && m.by_mode ? m : null;
      if (shown) renderBadge(...shown);
    });
}

const MODE_WORDS = { serving_latency: 'latency', serving_simulation: 'serving', training: 'training' };
/** Deployment classes (result.layout_class) whose error is shown apart from the dense runs'. */
const LAYOUT_WORDS = {
  moe: 'MoE', moe_expert_parallel: 'MoE, expert parallel', moe_wide_ep: 'wide EP', disaggregated: 'disaggregated',
};

/**
 * The measured error of results like this one: of its kind and deployment
 * class when it is not a dense run (every tier), else of its kind and tier.
 * {rows, median_abs_error_pct, median_signed_error_pct} or null.
 */
function measuredError(result, tier) {
  const layout = LAYOUT_WORDS[result && result.layout_class] ? result.layout_class : null;
  const groups = layout ? measured && measured.by_layout && measured.by_layout[result.kind]
    : measured && measured.by_mode && measured.by_mode[result && result.kind];
  const entry = groups && (layout ? groups[layout] : groups[result.cost_tier] || groups[tier]);
  return entry && Number.isFinite(entry.median_abs_error_pct) && entry.rows > 0 ? entry : null;
}

/** A percentage as a badge says it: one decimal below 10, whole above. */
const pct = (x) => (Math.abs(x) >= 10 ? String(Math.round(x)) : x.toFixed(1));

/** "typically 6.5% off, 4.4% optimistic" from a measured entry. */
function errorWords(e) {
  const s = e.median_signed_error_pct;
  const dir = Math.abs(s) < 0.5 ? 'no bias' : `${pct(Math.abs(s))}% ${s > 0 ? 'optimistic' : 'pessimistic'}`;
  return `typically ${pct(e.median_abs_error_pct)}% off, ${dir}`;
}

/**
 * The badge of the result's cost tier and the end-to-end error measured for
 * its kind at that tier, linking to the accuracy page. The kernel-fit residual
 * (accuracy.expected_error_pct) stays in the tooltip: it is not an end-to-end error.
 */
function renderBadge(badge, result) {
  shown = [badge, result];
  const acc = (result && result.accuracy) || {};
  const tier = String(acc.tier || (result && result.cost_tier) || '');
  badge.hidden = !tier;
  if (!tier) return;
  const kindWords = MODE_WORDS[result && result.kind] || String((result && result.kind) || 'result');
  const layout = LAYOUT_WORDS[result && result.layout_class];
  const mode = layout ? `${kindWords}, ${layout}` : kindWords;
  const e = measuredError(result, tier);
  const none = layout ? 'no measured runs of this deployment kind' : 'no measured runs at this tier';
  badge.textContent = e ? `${tier} · ${mode}: ${errorWords(e)}` : `${tier} · ${mode}: ${none}`;
  badge.href = `accuracy.html#${encodeURIComponent(tier)}`;
  badge.dataset.tier = tier;
  if (e) {
    badge.dataset.errorPct = String(e.median_abs_error_pct);
    badge.dataset.signedErrorPct = String(e.median_signed_error_pct);
  } else {
    delete badge.dataset.errorPct;
    delete badge.dataset.signedErrorPct;
  }
  const where = layout ? `${kindWords} runs of ${layout} deployments (every tier)` : `${kindWords} runs at this tier`;
  const measuredLine = e
    ? `Median error over ${e.rows} published ${where} (sightline report-e2e): ${pct(e.median_abs_error_pct)}% absolute, ${pct(e.median_signed_error_pct)}% signed (+ = optimistic)`
    : `No published ${where} is checked`;
  const kernel = Number(acc.expected_error_pct);
  const kernelLine = Number.isFinite(kernel) ? `. Kernel-fit residual ±${quantity(kernel, '%').text}%` : '';
  badge.title = `${TIERS[tier] || 'Cost tier'}. ${measuredLine}${kernelLine}${acc.note ? `. ${acc.note}` : ''}. Open the accuracy page for the measured errors.`;
}

/**
 * "Calibrated with NAME" on a result priced through a cluster calibration
 * (the result's `calibration`, the file `sightline fit` wrote): its factors
 * scaled every kernel, so the figures are not the uncalibrated model's.
 */
export function renderCalibrated(chip, result) {
  const cal = result && result.calibration;
  chip.hidden = !cal;
  if (!cal) return;
  chip.textContent = `calibrated with ${cal.id}`;
  const f = cal.factors || {};
  chip.title = `Priced with the cluster calibration "${cal.id}"${cal.source ? ` (${cal.source})` : ''}: compute x${f.compute_efficiency_scale}, `
    + `memory x${f.memory_efficiency_scale}, collectives x${f.comm_efficiency_scale}, host +${f.host_us_per_step} µs per step.`;
  chip.dataset.calibration = String(cal.id);
}

/** Scales every headline card under `roots` and updates the accuracy badge and the calibration chip. */
export function decorate(result, roots, badge, calibratedChip) {
  if (calibratedChip) renderCalibrated(calibratedChip, result);
  const list = keyMetrics(result);
  for (const root of roots) {
    if (!root) continue;
    for (const valueEl of root.querySelectorAll('.kpi-value')) decorateCard(valueEl, list, result);
  }
  if (badge) renderBadge(badge, result);
}
