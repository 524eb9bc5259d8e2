// Small DOM helpers shared by the page's modules. Engine and user strings only
// ever go through textContent, never innerHTML.
import { fixed3 } from './format.js';

export const $ = (id) => document.getElementById(id);

/** A new element with optional text content and class. */
export function cell(tag, text, className) {
  const c = document.createElement(tag);
  if (className) c.className = className;
  if (text !== undefined) c.textContent = text;
  return c;
}

/** A <span data-metric=key> holding value with three decimals. */
export function metricSpan(key, value) {
  const s = document.createElement('span');
  s.dataset.metric = key;
  s.textContent = fixed3(value);
  return s;
}

/** Writes value (three decimals) into every element tagged data-metric=key. */
export function setMetric(key, value) {
  for (const node of document.querySelectorAll(`[data-metric="${CSS.escape(key)}"]`)) node.textContent = fixed3(value);
}
