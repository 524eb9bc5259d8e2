// Layout that fits, at 390, 768, 1366 and 1920 px, in every mode (latency,
// serving simulation, training, deployment search) and every tab (Result,
// Sweep, Compare, Calibrate): the page never scrolls sideways, no visible form
// control or label sits past its panel's edge, no label is cut (ellipsis), no
// dropdown's choice is cut (each option of every visible select on the page, the
// scenario form's, the tab panels' and the results', as it would show once
// chosen), and every control can be reached (its centre lies in the window's
// width). Every <details> of the forms is opened first, so the fields behind them
// count too. One page, resized between widths. Also: every chart card (generated
// from the views' chart lists) has its heading, export buttons and chart host.
// Needs `bash .ci/build`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserSuite, newPage, waitDone } from './harness.mjs';

const WIDTHS = [390, 768, 1366, 1920];
const MODES = [['latency', 'I1.4'], ['simulate', 'I2.2'], ['training', 'T2.3'], ['search', null]];
// The tabs beside the Result of a scenario mode (the Search tab is the search mode's).
const TABS = ['result', 'sweep', 'compare', 'calibrate'];

const suite = browserSuite();

/**
 * Every visible control and label of the page's forms (the scenario's and the tab panel
 * shown) that does not fit, every cut choice of a visible select anywhere on the page;
 * and the page's width.
 */
function misfits() {
  const out = [];
  const forms = [...document.querySelectorAll('#scenario-form, [role="tabpanel"]:not([hidden]) form, [role="tabpanel"]:not([hidden]) .panel')]
    .filter((f) => f.offsetParent && !f.parentElement.closest('form, .panel'));
  for (const d of document.querySelectorAll('#scenario-form details, [role="tabpanel"] form details')) d.open = true;
  const text = (e) => (e.tagName === 'SELECT' ? (e.selectedOptions[0] || {}).textContent : e.textContent) || e.value || '';
  const name = (e) => `${e.tagName.toLowerCase()}#${e.id || (e.htmlFor ? `for-${e.htmlFor}` : '')} "${text(e).trim().slice(0, 30)}"`;
  for (const form of forms) {
    for (const e of form.querySelectorAll('input, select, textarea, button, label')) {
      if (!e.offsetParent || e.closest('[hidden]')) continue;
      const box = e.getBoundingClientRect();
      if (box.width === 0 && box.height === 0) continue;
      // The nearest box that clips or frames it: its panel, or a scrolling wrapper inside it.
      const frame = e.closest('.panel, .subpanel, fieldset') || form;
      const f = frame.getBoundingClientRect();
      const cs = getComputedStyle(frame);
      const left = f.left + parseFloat(cs.borderLeftWidth);
      const right = f.right - parseFloat(cs.borderRightWidth);
      if (box.right > right + 1 || box.left < left - 1) out.push(`${name(e)} past its panel (${Math.round(box.left)}–${Math.round(box.right)} in ${Math.round(left)}–${Math.round(right)})`);
      const mid = (box.left + box.right) / 2;
      if (mid < 0 || mid > innerWidth) out.push(`${name(e)} out of reach (centre at ${Math.round(mid)} px)`);
      if (e.tagName === 'LABEL' && e.scrollWidth > e.clientWidth + 1) out.push(`${name(e)} cut (${e.scrollWidth} px of text in ${e.clientWidth} px)`);
    }
  }
  for (const e of document.querySelectorAll('select')) {
    if (!e.offsetParent || e.closest('[hidden]')) continue;
    const cut = cutChoices(e);
    if (cut.length) out.push(`${name(e)}: ${cut.length} of ${e.options.length} choices cut, e.g. "${cut[0]}"`);
  }
  return { out, pageWidth: document.documentElement.scrollWidth, viewport: innerWidth, selects: document.querySelectorAll('select').length };

  /**
   * The options of `select` whose text would not show whole once chosen: each is put alone in a
   * hidden copy of the select at its width (same classes, so the same CSS). A closed select shows
   * its choice on one line, cut at the arrow, unless its CSS lets the text wrap: it is cut when the
   * copy keeps one line's height and its text is wider than the select (the copy at width auto is
   * wider), or when the wrapped text is taller than the copy's box.
   */
  function cutChoices(select) {
    const width = select.getBoundingClientRect().width;
    const copy = (text, w) => {
      const c = select.cloneNode(false);
      c.removeAttribute('id');
      c.tabIndex = -1;
      c.style.cssText = `position: absolute; visibility: hidden; left: 0; top: 0; max-width: none; width: ${w}`;
      c.append(new Option(text));
      select.parentElement.append(c);
      return c;
    };
    const line = copy('x', `${width}px`);
    const oneLine = line.getBoundingClientRect().height;
    line.remove();
    const cut = [];
    for (const o of select.options) {
      const atWidth = copy(o.textContent, `${width}px`);
      const wrapped = atWidth.getBoundingClientRect().height > oneLine + 1;
      const taller = atWidth.scrollHeight > atWidth.clientHeight + 1;
      atWidth.remove();
      let wider = false;
      if (!wrapped) {
        const auto = copy(o.textContent, 'auto');
        wider = auto.getBoundingClientRect().width > width + 0.5;
        auto.remove();
      }
      if (taller || wider) cut.push(o.textContent);
    }
    return cut;
  }
}

/** The views of one mode: [name, open()] for its tabs (the search mode: its own panel). */
function viewsOf(page, mode, preset) {
  if (mode === 'search') {
    return [['search', async () => {
      await page.click('#mode-search');
      await page.waitForSelector('#panel-search[data-loaded="true"]:not([hidden])');  // its form loads on demand
    }]];
  }
  return TABS.map((tab) => [`${mode}, ${tab}`, async () => {
    if (tab === 'result') {
      await page.click(`#mode-${mode}`);
      await page.selectOption('#scenario', preset);
      await waitDone(page, preset);
    }
    await page.click(`#tab-${tab}`);
    await page.waitForSelector(`#panel-${tab}:not([hidden]):not([aria-busy])`);  // a tab loaded on demand
  }]);
}

test('4 widths × every mode and tab: nothing scrolls sideways, no control or label past its panel, no cut label or dropdown choice', async () => {
  const page = await newPage(suite.browser);
  await page.goto(suite.server.url);
  await waitDone(page);
  const problems = [];
  let checked = 0;
  for (const [mode, preset] of MODES) {
    if (mode === 'search' && await page.isHidden('#mode-search')) continue;  // an engine build without the deployment search
    for (const [view, open] of viewsOf(page, mode, preset)) {
      await open();
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        const m = await page.evaluate(misfits);
        checked += 1;
        if (m.pageWidth > m.viewport) problems.push(`${view} at ${width} px: the page is ${m.pageWidth} px wide`);
        for (const p of m.out) problems.push(`${view} at ${width} px: ${p}`);
      }
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(checked >= 3 * TABS.length * WIDTHS.length, `${checked} views × widths checked`);
  // The chart cards are generated from the views' chart lists (a view's with its first result, so
  // after every mode ran): each has its heading, export buttons and host.
  const cards = await page.$$eval('section[data-chart]', (els) => els.map((e) => ({
    id: e.dataset.chart,
    ok: Boolean(e.querySelector(':scope > .card-head h3')) && e.querySelectorAll(`[data-export-chart="${e.dataset.chart}"]`).length === 2
      && Boolean(e.querySelector(`#chart-${e.dataset.chart}.chart-host`)) && e.getAttribute('aria-labelledby') === e.querySelector('h3').id,
  })));
  assert.ok(cards.length >= 17, `${cards.length} chart cards`);
  assert.deepEqual(cards.filter((c) => !c.ok), []);
  assert.deepEqual(page.errors, []);
  await page.close();
});
