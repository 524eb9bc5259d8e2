// The scenario form is built from data (issues 39 and 40): each field is defined
// once, its JSON pointer and kind in FIELDS (form.js), its place in FORM_PARTS
// (form-layout.js), its range, default, choices and words (label, unit, help) in
// the engine's parameter schema, by the pointer of the scenario key it edits
// (engine/scenario/parameter_words.cpp; the custom GPU's fields: the GPU
// document's keys, custom.js). The page keeps no words of a field with such a
// key. This compares the rendered form in Chromium with those tables, checks
// no page source repeats a parameter's words, and checks index.html holds no
// field of its own.
// Needs `bash .ci/build` first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { browserSuite, newPage, waitDone, searchPage, siteDir, repoDir } from './harness.mjs';

const suite = browserSuite();
const load = (file) => import(pathToFileURL(path.join(siteDir, 'client', file)).href);

/** Every field entry of the layout (walking fieldsets and rows), in order. */
function layoutFields(items) {
  return items.flatMap((i) => (i.type === 'field' ? [i] : i.items ? layoutFields(i.items) : []));
}

/** The page's sources (modules, markup) under web/src, as [file, text]. */
function pageSources() {
  const dir = path.join(repoDir, 'web', 'src');
  return fs.readdirSync(dir, { recursive: true }).filter((f) => /\.(js|html)$/.test(f))
    .map((f) => [f, fs.readFileSync(path.join(dir, f), 'utf8')]);
}

test('each field has its words once, in the schema by the key it edits; no page source repeats them', async () => {
  const layout = await load('form-layout.js');
  const registries = JSON.parse(fs.readFileSync(path.join(siteDir, 'registries.json'), 'utf8'));
  const schema = new Map(registries.parameters.map((p) => [p.pointer, p]));
  const generic = (pointer) => pointer.split('/').map((s) => (/^\d+$/.test(s) ? '*' : s)).join('/');
  const fields = layout.layoutFields();
  assert.ok(fields.length > 140, `${fields.length} fields in the layout`);
  for (const f of fields) {
    // Every field edits a scenario key, and the schema records it with its words.
    const pointer = layout.fieldPointer(f);
    assert.ok(pointer, `${f.id}: edits no scenario key`);
    const p = schema.get(generic(pointer));
    assert.ok(p, `${f.id}: the schema does not record ${pointer} (a reader's record_parameter or a probe, engine/scenario/parameter_catalogue.cpp)`);
    assert.ok(p.label && p.help, `${f.id}: the schema's entry for ${p.pointer} has no words (engine/scenario/parameter_words.cpp)`);
  }
  // A words table of the page's own (FORM_WORDS, once the home of 43 fields'
  // words) may hold only fields that edit no scenario key (none today): a
  // key's words are the schema's. The rendered form is compared with the
  // schema's words field by field below.
  for (const id of Object.keys(layout.FORM_WORDS || {})) {
    assert.equal(layout.fieldPointer({ id }), null, `FORM_WORDS keeps words for ${id}, which edits ${layout.fieldPointer({ id })}: they belong in the schema`);
  }
  // No module or markup of the page carries a parameter's help or a label of its own for a field of the layout.
  const helps = registries.parameters.filter((p) => p.help).map((p) => p.help);
  assert.ok(helps.length > 50);
  for (const [file, text] of pageSources()) {
    for (const help of helps) assert.ok(!text.includes(help), `web/src/${file} repeats the schema's help "${help}"`);
  }
  const layoutSource = fs.readFileSync(path.join(repoDir, 'web', 'src', 'client', 'form-layout.js'), 'utf8');
  assert.deepEqual([...layoutSource.matchAll(/field\(\s*['`][^'`]+['`]\s*,\s*['"`]/g)].map((m) => m[0]), [],
    'a layout field() names its words: they belong in the schema');
});

test('every field is defined once: FIELDS, the layout and the schema agree with the rendered form', async () => {
  const { FIELDS } = await load('form.js');
  const { FORM_PARTS, layoutFieldIds, fieldPointer } = await load('form-layout.js');
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
  const html = fs.readFileSync(path.join(repoDir, 'web', 'src', 'host', 'index.html'), 'utf8');
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
  /** The words a field must show: the schema's for the key it edits (`of` naming the array element first). */
  const wordsOf = (f) => {
    const pointer = fieldPointer(f);
    const p = schemaAt(pointer);
    assert.ok(p && p.label, `${f.id}: no words in the schema for ${pointer}`);
    return { label: f.of ? `${f.of} ${p.label[0].toLowerCase()}${p.label.slice(1)}` : p.label, unit: p.unit ?? null, help: p.help };
  };
  let fromSchema = 0;
  for (const f of layoutFields(Object.values(FORM_PARTS).flat())) {
    const s = byId.get(f.id);
    assert.ok(s, `${f.id} is not on the page`);
    assert.equal(shown.filter((x) => x.id === f.id).length, 1, `${f.id} shown twice`);
    const w = wordsOf(f);
    fromSchema += 1;
    assert.equal(s.label, w.label, `${f.id}: label`);
    assert.equal(s.unit, w.unit, `${f.id}: unit`);
    assert.equal(s.labelTitle, w.help, `${f.id}: the label's help`);
    assert.equal(s.controlTitle, w.help, `${f.id}: the control's help`);
    // A control that is off says why before its help (the run-until-decided box).
    assert.ok(s.controlTitleShown.endsWith(w.help), `${f.id}: its tooltip ends with its help`);
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
  assert.ok(fromSchema > 140, `${fromSchema} fields compared`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the Search question\'s SLO fields, which edit the base scenario\'s serving.slo, show the schema\'s words', async (t) => {
  const registries = JSON.parse(fs.readFileSync(path.join(siteDir, 'registries.json'), 'utf8'));
  const schema = new Map(registries.parameters.map((p) => [p.pointer, p]));
  const page = await searchPage(t, suite);
  if (!page) return;
  await page.click('#mode-search');
  await page.waitForFunction(() => {
    const label = document.querySelector('label[for="q-ttft"]');
    return Boolean(label && label.textContent);
  });
  const shown = await page.$$eval('label[data-parameter]', (labels) => labels.map((l) => {
    const control = document.getElementById(l.htmlFor);
    const unit = l.querySelector('.unit');
    return { pointer: l.dataset.parameter, label: l.firstChild.textContent.trim(), unit: unit ? unit.textContent : null,
      labelTitle: l.title, controlTitle: control.title };
  }));
  assert.deepEqual(shown.map((s) => s.pointer).sort(), ['/serving/slo/attainment', '/serving/slo/percentiles/tpot',
    '/serving/slo/percentiles/ttft', '/serving/slo/tpot_ms', '/serving/slo/ttft_ms']);
  for (const s of shown) {
    const p = schema.get(s.pointer);
    assert.deepEqual(s, { pointer: s.pointer, label: p.label, unit: p.unit ?? null, labelTitle: p.help, controlTitle: p.help }, s.pointer);
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});
