// Headline numbers read honestly: every headline card (.kpi-value holding a
// data-metric or data-headline number and its .unit) is shown in a scaled unit
// with three significant digits, with the 80% interval beside it when the
// result has one, and the result carries a badge naming its cost tier and
// typical error that links to the accuracy page. Views stay unaware of this:
// app.js runs decorate() after every render.
import { quantity, intervalText, unitName } from './format.js';
import { cell } from './dom.js';

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
  return list;
}

/** The interval of metric `id` (a view's key without its 'serve.' / 'train.' prefix), or null. */
function intervalOf(list, key) {
  const id = String(key).replace(/^(serve|train)\./, '');
  const k = list.find((m) => m.id === id);
  return k && Number.isFinite(k.low) && Number.isFinite(k.high) ? k : null;
}

/** Scales one headline card and writes its interval line. */
function decorateCard(valueEl, list) {
  const num = valueEl.querySelector('[data-metric], [data-headline]');
  const unitEl = valueEl.querySelector('.unit');
  if (!num || !unitEl) return;
  if (unitEl.dataset.base === undefined) unitEl.dataset.base = unitEl.textContent;
  const raw = num.dataset.raw === '' || num.dataset.raw === undefined ? NaN : Number(num.dataset.raw);
  const card = valueEl.closest('.kpi') || valueEl.parentElement;
  let line = card.querySelector(':scope > .kpi-interval');
  if (!Number.isFinite(raw)) {
    unitEl.textContent = unitName(unitEl.dataset.base);
    if (line) line.hidden = true;
    return;
  }
  const q = quantity(raw, unitEl.dataset.base);
  num.textContent = q.text;
  unitEl.textContent = q.unit;
  const k = intervalOf(list, num.dataset.metric || num.dataset.headline);
  if (!line) {
    line = cell('div', '', 'kpi-interval');
    valueEl.after(line);
  }
  line.hidden = !k;
  if (k) {
    line.textContent = `80% interval ${intervalText(k.low, k.high, q.factor)} ${q.unit}`;
    line.dataset.low = String(k.low);
    line.dataset.high = String(k.high);
  }
}

/** Tier names as results spell them, and what each means, for the badge's tooltip. */
const TIERS = {
  'target-measured': 'Kernel efficiencies fitted on this GPU\'s own measurements',
  'cross-generation': 'No calibration of this GPU: efficiencies transferred from a measured GPU through its spec sheet',
  roofline: 'Plain physical bound (peak FLOP/s and bandwidth); no measured efficiencies',
  mixed: 'Parts of the result used different tiers',
};

/** The badge of the result's cost tier and typical error, linking to the accuracy page. */
function renderBadge(badge, result) {
  const acc = (result && result.accuracy) || {};
  const tier = String(acc.tier || (result && result.cost_tier) || '');
  badge.hidden = !tier;
  if (!tier) return;
  const err = Number(acc.expected_error_pct);
  badge.textContent = Number.isFinite(err) ? `${tier} · typical error ±${quantity(err, '%').text}%` : `${tier} tier`;
  badge.href = `accuracy.html#${encodeURIComponent(tier)}`;
  badge.dataset.tier = tier;
  badge.title = `${TIERS[tier] || 'Cost tier'}${acc.note ? `. ${acc.note}` : ''}. Open the accuracy page for the measured errors.`;
}

/** Scales every headline card under `roots` and updates the accuracy badge. */
export function decorate(result, roots, badge) {
  const list = keyMetrics(result);
  for (const root of roots) {
    if (!root) continue;
    for (const valueEl of root.querySelectorAll('.kpi-value')) decorateCard(valueEl, list);
  }
  if (badge) renderBadge(badge, result);
}
