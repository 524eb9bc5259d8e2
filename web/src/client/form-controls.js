// The form's controls as values: a field's input read or set in the shape its
// kind gives it (a checkbox's boolean, a group of checkboxes' list, a select's
// option), and the options of a select. Nothing here knows the field table.
import { $ } from './dom.js';

// The empty choice of an optional select: the key is left out of the scenario.
export const NO_LINK = '';

export function option(value, text, title) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = text;
  if (title) o.title = title;
  return o;
}

export function fillSelect(select, options) {
  select.replaceChildren(...options);
}

/** Makes sure `value` is one of the select's options (a scenario may name a preset not listed). */
export function ensureOption(select, value, text) {
  if (![...select.options].some((o) => o.value === value)) select.append(option(value, text || value));
}

export function targetBoxes(id) {
  return [...$(id).querySelectorAll('input[type="checkbox"]')];
}

/** The current value of an input, in the same shape as shownValue. */
export function inputValue(f) {
  const input = $(f.id);
  if (f.kind === 'bool' || f.kind === 'toggle') return input.checked;
  if (f.kind === 'targets') return targetBoxes(f.id).filter((b) => b.checked).map((b) => b.value);
  return input.value;
}

export function setInput(f, value) {
  const input = $(f.id);
  if (f.kind === 'bool' || f.kind === 'toggle') input.checked = Boolean(value);
  else if (f.kind === 'targets') {
    const set = new Set(value);
    for (const box of targetBoxes(f.id)) box.checked = set.has(box.value);
  } else if (f.kind === 'select') {
    ensureOption(input, value);
    input.value = value;
  } else input.value = value;
}
