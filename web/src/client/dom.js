// Small DOM helpers shared by the page's modules. Engine and user strings only
// ever go through textContent, never innerHTML.
import { fixed3, display } from './format.js';

export const $ = (id) => document.getElementById(id);

/** A new element with optional text content and class. */
export function cell(tag, text, className) {
  const c = document.createElement(tag);
  if (className) c.className = className;
  if (text !== undefined) c.textContent = text;
  return c;
}

/**
 * Shows `value` in a data-metric element: three significant digits as text,
 * the exact number with three decimals in data-value (tests, compare) and the
 * full number in data-raw (unit scaling of headline cards).
 */
export function showNumber(node, value) {
  node.textContent = display(value);
  node.dataset.value = fixed3(value);
  node.dataset.raw = typeof value === 'number' && Number.isFinite(value) ? String(value) : '';
  if (node.dataset.raw) node.title = `${node.dataset.value}`;
  else node.removeAttribute('title');
}

/** A <span data-metric=key> holding value (see showNumber). */
export function metricSpan(key, value) {
  const s = document.createElement('span');
  s.dataset.metric = key;
  showNumber(s, value);
  return s;
}

/**
 * A headline card (.kpi panel): its label, the number as a data-metric span
 * tagged `key` and its unit; h is {label, unit, title, value} (catalogue.js headlineCards).
 */
export function kpiCard(h, key) {
  return kpiCardAround(h, metricSpan(key, h.value));
}

/** A headline card around a number element the caller made (label, number, unit). */
export function kpiCardAround(h, num) {
  const card = document.createElement('div');
  card.className = 'kpi panel';
  card.title = h.title || h.label;
  const label = document.createElement('div');
  label.className = 'kpi-label';
  label.textContent = h.label;
  const value = document.createElement('div');
  value.className = 'kpi-value';
  const unit = document.createElement('span');
  unit.className = 'unit';
  unit.textContent = h.unit || '';
  value.append(num, unit);
  card.append(label, value);
  return card;
}

/** Writes value into every element tagged data-metric=key (see showNumber). */
export function setMetric(key, value) {
  for (const node of document.querySelectorAll(`[data-metric="${CSS.escape(key)}"]`)) showNumber(node, value);
}

/** A pool run's status line (`${prefix}-status`, data-state) and its Run / Cancel buttons. */
export function setRunStatus(prefix, state, text) {
  const s = $(`${prefix}-status`);
  s.dataset.state = state;
  s.textContent = text;
  $(`${prefix}-cancel`).disabled = state !== 'running';
  $(`${prefix}-run`).disabled = state === 'running';
}

/** Shows `message` in the error box `${prefix}-error` (hides it when empty) and marks the input at fault in `${prefix}-form`. */
export function showFormError(prefix, message, inputId) {
  for (const el of document.querySelectorAll(`#${prefix}-form .invalid`)) {
    el.classList.remove('invalid');
    el.removeAttribute('aria-invalid');
  }
  const box = $(`${prefix}-error`);
  box.hidden = !message;
  box.textContent = message || '';
  const input = message && inputId && $(inputId);
  if (input) {
    input.classList.add('invalid');
    input.setAttribute('aria-invalid', 'true');
  }
}
