// Embed mode: the docs page's example iframe and a page built from "Copy embed
// code" both show the scenario's headline numbers (equal to the CLI), the
// chosen charts only, and an "Open in Sightline" link. Needs `bash .ci/build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { checkBuilt, startServer, launchBrowser, newPage, cli, scenarioPreset, fixed3, waitDone } from './harness.mjs';

const HEADLINE = ['ttft_ms', 'tpot_ms', 'e2e_ms', 'output_tokens_per_s'];

let server;
let browser;

before(async () => {
  checkBuilt();
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.close();
});

async function embeddedFrame(page) {
  const handle = await page.waitForSelector('iframe');
  const frame = await handle.contentFrame();
  await frame.waitForSelector('#run-status[data-state="done"]', { state: 'attached' });
  return frame;
}

async function headline(frame) {
  return frame.$$eval('[data-headline]', (els) => Object.fromEntries(els.map((e) => [e.dataset.headline, e.dataset.value])));
}

test('the docs page embeds I1.4 in a fresh browser: headline numbers equal the CLI, only the chosen charts, no form', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(`${server.url}docs.html`);
  const frame = await embeddedFrame(page);
  const expected = cli('I1.4');
  const shown = await headline(frame);
  for (const key of HEADLINE) assert.equal(shown[key], fixed3(expected.metrics[key]), key);
  assert.equal(await frame.isVisible('#headline'), true);
  assert.equal(await frame.isVisible('#scenario-form'), false, 'no form in embed mode');
  assert.equal(await frame.isVisible('.toolbar'), false);
  assert.equal(await frame.isVisible('[data-chart="families"]'), true);
  assert.equal(await frame.isVisible('[data-chart="roofline"]'), true);
  assert.equal(await frame.isVisible('[data-chart="memory"]'), false, 'not chosen by ?charts=');
  const open = await frame.getAttribute('#open-full', 'href');
  assert.match(open, /^\.\/#v1=[A-Za-z0-9_-]+$/);
  assert.equal(await frame.getAttribute('#open-full', 'target'), '_blank');
  assert.equal(await page.evaluate(() => localStorage.getItem('sightline.scenario')), null,
    'an embed does not overwrite the reader\'s last scenario');
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('"Copy embed code" gives an iframe snippet that works in another page', async () => {
  const page = await newPage(browser);
  await page.goto(server.url);
  await waitDone(page, 'I1.1');
  await page.fill('#batch_size', '2');
  await page.dispatchEvent('#batch_size', 'change');
  await page.waitForFunction(() => document.getElementById('summary').textContent.includes('batch 2,'));
  await page.click('#copy-embed');
  const snippet = await page.inputValue('#share-text');
  assert.match(snippet, /^<iframe src="http:\/\/127\.0\.0\.1:\d+\/\?embed=1#v1=[A-Za-z0-9_-]+" title="Sightline: I1\.1 with batch_size 2" width="100%" height="560" style="border:0" loading="lazy"><\/iframe>$/);

  // A test page that contains only the snippet.
  const host = await newPage(browser);
  await host.setContent(`<!doctype html><title>host</title><h1>Our capacity plan</h1>${snippet}`);
  const frame = await embeddedFrame(host);
  const scenario = scenarioPreset('I1.1');
  scenario.serving.workload.batch_size = 2;
  const expected = cli(scenario);
  const shown = await headline(frame);
  for (const key of HEADLINE) assert.equal(shown[key], fixed3(expected.metrics[key]), key);
  assert.equal(await frame.isVisible('[data-chart="families"]'), true, 'default charts');
  assert.equal(await frame.isVisible('[data-chart="memory"]'), true, 'default charts');
  await host.close();
  await page.close();
});
