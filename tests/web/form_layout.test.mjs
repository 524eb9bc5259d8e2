// The scenario form is built from data (issue 40): each field is defined once,
// its JSON pointer and kind in FIELDS (form.js), its place, label, unit and help
// in FORM_PARTS (form-layout.js), its range, default and choices in the
// engine's parameter schema. This compares the rendered form in Chromium with
// those three tables, and checks index.html holds no field of its own.
// Needs `bash .ci/build` first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { browserSuite, newPage, waitDone, siteDir, repoDir } from './harness.mjs';

const suite = browserSuite();
const load = (file) => import(pathToFileURL(path.join(siteDir, file)).href);

/** Every field entry of the layout (walking fieldsets and rows), in order. */
function layoutFields(items) {
  return items.flatMap((i) => (i.type === 'field' ? [i] : i.items ? layoutFields(i.items) : []));
}

test('every field is defined once: FIELDS, the layout and the schema agree with the rendered form', async () => {
  const { FIELDS } = await load('form.js');
  const { FORM_PARTS, layoutFieldIds } = await load('form-layout.js');
  const registries = JSON.parse(fs.readFileSync(path.join(siteDir, 'registries.json'), 'utf8'));
  const schema = new Map(registries.parameters.map((p) => [p.pointer, p]));
  const schemaAt = (pointer) => schema.get(pointer.split('/').map((s) => (/^\d+$/.test(s) ? '*' : s)).join('/')) || null;

  // One place in the layout for every field of FIELDS, and nothing else but the custom GPU's own fields.
  const ids = layoutFieldIds();
  assert.equal(new Set(ids).size, ids.length, 'a field sits twice in the layout');
  const fieldIds = FIELDS.map((f) => f.id);
  assert.equal(new Set(fieldIds).size, fieldIds.length, 'FIELDS defines a field twice');
  assert.deepEqual(ids.filter((id) => !fieldIds.includes(id)), FORM_PARTS['custom-gpu'].flatMap((r) => r.items.map((f) => f.id)));
  assert.deepEqual(fieldIds.filter((id) => !ids.includes(id)), [], 'a field of FIELDS has no place in the layout');

  // index.html has a placeholder per part and no control of a field.
  const html = fs.readFileSync(path.join(repoDir, 'web', 'src', 'index.html'), 'utf8');
  for (const id of ids) assert.ok(!html.includes(`id="${id}"`), `index.html defines the field ${id} itself`);
  assert.deepEqual([...html.matchAll(/data-form-part="([\w-]+)"/g)].map((m) => m[1]).sort(), Object.keys(FORM_PARTS).sort());

  const page = await newPage(suite.browser);
  await page.goto(suite.server.url);
  await waitDone(page);
  const shown = await page.$$eval('#scenario-form .field', (blocks) => blocks.map((b) => {
    const control = b.querySelector('input:not([type="checkbox"][name]), select, textarea, .checks') || b.querySelector('input');
    const label = b.querySelector(':scope > label, :scope > .label');
    const unit = label && label.querySelector('.unit');
    return {
      id: control && control.id, tag: control && control.tagName.toLowerCase(), type: control && control.type,
      step: control && control.getAttribute('step'), min: control && control.getAttribute('min'), max: control && control.getAttribute('max'),
      label: label && label.firstChild.textContent.trim(), unit: unit ? unit.textContent : null,
      labelTitle: label && label.title, controlTitle: control && (control.dataset.help ?? control.title), controlTitleShown: control && control.title,
      options: control && control.classList.contains('checks') ? [...control.querySelectorAll('input')].map((i) => i.value) : null,
    };
  }));
  const byId = new Map(shown.map((s) => [s.id, s]));
  const kinds = new Map(FIELDS.map((f) => [f.id, f]));
  for (const f of layoutFields(Object.values(FORM_PARTS).flat())) {
    const s = byId.get(f.id);
    assert.ok(s, `${f.id} is not on the page`);
    assert.equal(shown.filter((x) => x.id === f.id).length, 1, `${f.id} shown twice`);
    assert.equal(s.label, f.label, `${f.id}: label`);
    assert.equal(s.unit, f.unit, `${f.id}: unit`);
    assert.equal(s.labelTitle, f.help, `${f.id}: the label's help`);
    assert.equal(s.controlTitle, f.help, `${f.id}: the control's help`);
    // A control that is off says why before its help (the run-until-decided box).
    assert.ok(s.controlTitleShown.endsWith(f.help), `${f.id}: its tooltip ends with its help`);
    const field = kinds.get(f.id);
    const kind = field ? field.kind : f.kind;
    const expected = {
      int: ['input', 'number', '1'], number: ['input', 'number', 'any'], select: ['select'], model: ['select'],
      bool: ['input', 'checkbox'], toggle: ['input', 'checkbox'], targets: ['div'],
    }[kind];
    assert.deepEqual([s.tag, s.type, s.step].slice(0, expected.length), expected, `${f.id}: a ${kind} control`);
    if (kind === 'targets') assert.deepEqual(s.options, f.options.map(([v]) => v), `${f.id}: its choices`);
    // A number's range is the engine's where its schema gives one (else the layout's own floor).
    if (kind !== 'int' && kind !== 'number') continue;
    const p = field ? schemaAt(field.schema || field.path) : null;
    for (const bound of ['min', 'max']) {
      if (p && typeof p[bound] === 'number') assert.equal(Number(s[bound]), p[bound], `${f.id}: ${bound} from the schema`);
      else if (bound === 'min' && f.min !== undefined) assert.equal(s.min, f.min, `${f.id}: min`);
    }
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});
