// Issue 39: axe finds no violation on any view. axe-core (web/package.json's
// devDependencies) checks the page in headless Chromium after a result, at a
// desktop and a phone width: in every mode (latency, serving simulation,
// training) and every tab (Result, Sweep, Compare, Search, Calibrate), with
// every <details> of the form open (the fields behind them, disabled ones
// included, count too); the Sweep, Compare, Calibrate and Search panels with
// their results in (a sweep run, a pinned A, a benchmark file read, a search's
// answer); and the help and accuracy pages. The axe source is evaluated through
// the browser's protocol (the page's CSP refuses inline scripts, so the context
// bypasses it for the test's own script only).
// Needs `bash .ci/build` and `cd web && npm ci`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { browserSuite, waitDone, repoDir, PAGE_GUARD_MS } from './harness.mjs';

const requireFromWeb = createRequire(path.join(repoDir, 'web', 'package.json'));
const AXE = fs.readFileSync(requireFromWeb.resolve('axe-core/axe.min.js'), 'utf8');
const MODES = [['latency', 'I1.4'], ['simulate', 'I2.2'], ['training', 'T2.3']];
const TABS = ['result', 'sweep', 'compare', 'search', 'calibrate'];
const WIDTHS = [1366, 390];
// The benchmark file the Calibrate panel reads (calibrate.test.mjs's: a vLLM sweep summary).
const BENCH_FILE = path.join(repoDir, 'tests', 'data', 'bench', 'real', 'er0080_opt125m_sweep_seqs4_c2_summary.json');

const suite = browserSuite();

/** axe's violations on the page as it is now: "rule: target (summary)" lines. */
async function violations(page) {
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(' ')} (${n.failureSummary.split('\n').slice(1).join(' ').trim()})`));
  });
  return found;
}

/** A page of its own context at the first width, CSP bypassed for axe, its errors collected. */
async function axePage(width = WIDTHS[0]) {
  const context = await suite.browser.newContext({ bypassCSP: true, viewport: { width, height: 900 } });
  context.setDefaultTimeout(PAGE_GUARD_MS);
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  return page;
}

/** Checks the page at every width, every <details> on it open; `label` names the view in each problem. */
async function checkWidths(page, label, problems) {
  await page.$$eval('details', (ds) => { for (const d of ds) d.open = true; });
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    for (const v of await violations(page)) problems.push(`${width} px, ${label}: ${v}`);
  }
}

test('axe finds no violation in any mode or tab, every part of the form open, at 1366 and 390 px', async () => {
  const page = await axePage();
  await page.goto(suite.server.url);
  await waitDone(page);
  const problems = [];
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    for (const [mode, preset] of MODES) {
      await page.click('#tab-result');
      await page.selectOption('#scenario', preset);
      await waitDone(page, preset);
      await page.$$eval('#scenario-form details', (ds) => { for (const d of ds) d.open = true; });
      for (const tab of TABS) {
        if (await page.isHidden(`#tab-${tab}`)) continue;
        await page.click(`#tab-${tab}`);
        // A tab loaded on demand is aria-busy until its markup is in.
        await page.waitForSelector(`#panel-${tab}:not([hidden]):not([aria-busy])`);
        for (const v of await violations(page)) problems.push(`${width} px, ${mode}, ${tab}: ${v}`);
      }
    }
  }
  assert.deepEqual([...new Set(problems)], []);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('axe finds no violation in the Sweep, Compare and Calibrate panels with their results in', async () => {
  const page = await axePage();
  await page.goto(suite.server.url);
  await waitDone(page);
  await page.selectOption('#scenario', 'I1.4');
  await waitDone(page, 'I1.4');
  const problems = [];
  // A sweep of two points: its table and chart.
  await page.click('#tab-sweep');
  await page.waitForSelector('#panel-sweep[data-loaded="true"]');
  await page.selectOption('#sweep-field', 'batch_size');
  await page.selectOption('#sweep-mode', 'list');
  await page.fill('#sweep-list', '1, 2');
  await page.click('#sweep-run');
  await page.waitForSelector('#sweep-status[data-state="done"]');
  await checkWidths(page, 'sweep with its result', problems);
  // Compare: A pinned, B edited.
  await page.click('#tab-result');
  await page.click('#pin');  // opens the Compare tab
  await page.fill('#batch_size', '8');
  await page.dispatchEvent('#batch_size', 'change');
  await page.waitForFunction(() => document.getElementById('compare-b-label').textContent.includes('batch_size 8'));
  await checkWidths(page, 'compare with A and B', problems);
  // Calibrate: a real benchmark file read, its runs in a table, the base scenario to confirm.
  await page.click('#tab-calibrate');
  await page.waitForSelector('#panel-calibrate:not([hidden]):not([aria-busy])');
  await page.setInputFiles('#cal-files', BENCH_FILE);
  await page.waitForSelector('#cal-read section[data-state="read"]');
  await checkWidths(page, 'calibrate with a file read', problems);
  assert.deepEqual([...new Set(problems)], []);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('axe finds no violation in the Search mode with an answer in', async (t) => {
  const page = await axePage();
  await page.goto(suite.server.url);
  await waitDone(page);
  if (await page.isHidden('#mode-search')) {
    t.skip('this wasm module has no deployment search');
    return page.context().close();
  }
  // search.test.mjs's small budget question: one A100, Llama-2-7B, short requests (a few seconds).
  await page.click('#mode-search');
  await page.waitForSelector('#panel-search:not([hidden]) #search-status', { state: 'attached' });
  const problems = [];
  await checkWidths(page, 'search question', problems);
  await page.selectOption('#q-workload', 'I2.2');
  await page.selectOption('#q-question', 'budget');
  await page.selectOption('#q-model', 'llama-2-7b');
  for (const [id, text] of [['q-max-gpus', '1'], ['q-prompt', '128'], ['q-output', '16'], ['q-ttft', '2000'], ['q-tpot', '100'],
    ['q-attainment', '0.99'], ['q-tp', '1'], ['q-seqs', '64']]) await page.fill(`#${id}`, text);
  await page.selectOption('#q-ttft-pct', 'joint');
  await page.selectOption('#q-tpot-pct', 'joint');
  await page.selectOption('#q-chunked', 'off');
  for (const box of await page.$$('#q-gpu-list input[type="checkbox"]')) await box.setChecked(false);
  await page.check('#q-use-a100-80g-sxm');
  await page.fill('#q-price-a100-80g-sxm', '1.8');
  await page.click('#search-run');
  await page.waitForSelector('#search-status[data-state="done"], #search-status[data-state="error"]');
  assert.equal(await page.getAttribute('#search-status', 'data-state'), 'done', await page.textContent('#search-error'));
  await checkWidths(page, 'search answer', problems);
  assert.deepEqual([...new Set(problems)], []);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('axe finds no violation on the help and accuracy pages, at 1366 and 390 px', async () => {
  const page = await axePage();
  const problems = [];
  for (const name of ['help.html', 'accuracy.html']) {
    await page.goto(`${suite.server.url}${name}`);
    await page.waitForLoadState('load');
    await checkWidths(page, name, problems);
  }
  assert.deepEqual([...new Set(problems)], []);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
