// Issue 39: axe finds no violation on any view. axe-core (web/package.json's
// devDependencies) checks the page in headless Chromium after a result, in every
// mode (latency, serving simulation, training) and every tab (Result, Sweep,
// Compare, Search, Calibrate), at a desktop and a phone width. The axe source is
// evaluated through the browser's protocol (the page's CSP refuses inline scripts,
// so the context bypasses it for the test's own script only).
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

test('axe finds no violation in any mode or tab, at 1366 and 390 px', async () => {
  const context = await suite.browser.newContext({ bypassCSP: true, viewport: { width: WIDTHS[0], height: 900 } });
  context.setDefaultTimeout(PAGE_GUARD_MS);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(suite.server.url);
  await waitDone(page);
  const problems = [];
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    for (const [mode, preset] of MODES) {
      await page.click('#tab-result');
      await page.selectOption('#scenario', preset);
      await waitDone(page, preset);
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
  assert.deepEqual(errors, []);
  await context.close();
});
