// Embed mode: the docs page's example iframe and a page built from "Copy embed
// code" both show the scenario's headline numbers (equal to the CLI), the
// chosen charts only, and an "Open in Sightline" link. Needs `bash .ci/build`.
import http from 'node:http';
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
  assert.match(snippet, /^<iframe src="http:\/\/127\.0\.0\.1:\d+\/\?embed=1#v1=[A-Za-z0-9_-]+" title="Sightline: I1\.1 with batch_size 2" width="100%" height="560" style="border:0" loading="lazy"><\/iframe>\n<script src="http:\/\/127\.0\.0\.1:\d+\/embed\.js" async><\/script>$/);

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

/** A host page on another port (another origin), as a documentation site would be. */
function hostServer(html) {
  return new Promise((resolve) => {
    const srv = http.createServer((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(html);
    });
    srv.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${srv.address().port}/`, close: () => new Promise((r) => srv.close(r)) }));
  });
}

test('on a host page of another origin, the iframe sizes itself to its content and <sightline-embed> renders a result', async () => {
  const link = await (async () => {
    const p = await newPage(browser);
    await p.goto(server.url);
    await p.selectOption('#scenario', 'I1.1');
    await waitDone(p, 'I1.1');
    await p.click('#copy-embed');
    const snippet = await p.inputValue('#share-text');
    await p.close();
    return snippet;
  })();
  const host = await hostServer(`<!doctype html><title>Docs</title><style>main{width:600px}</style><main>
    <h1>Capacity plan</h1>${link}
    <h2>Llama-2-70B</h2><sightline-embed id="el" scenario="I1.4" charts="families"></sightline-embed>
    <script src="${server.url}embed.js" async></script></main>`);
  const context = await browser.newContext({ viewport: { width: 800, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(host.url);
  assert.notEqual(new URL(host.url).origin, new URL(server.url).origin);
  // The copied iframe: its height follows the content, so it has no inner scrollbar.
  const frameHandle = await page.waitForSelector('main > iframe');
  const frame = await frameHandle.contentFrame();
  await frame.waitForSelector('#run-status[data-state="done"]', { state: 'attached' });
  await page.waitForFunction(() => document.querySelector('main > iframe').style.height !== '');
  await page.waitForTimeout(300);
  const inner = await frame.evaluate(() => ({ scroll: document.documentElement.scrollHeight, client: document.documentElement.clientHeight, body: document.body.getBoundingClientRect().height }));
  const outer = await frameHandle.evaluate((f) => f.getBoundingClientRect().height);
  assert.ok(Math.abs(outer - inner.body) <= 2, `iframe ${outer} px for ${inner.body} px of content`);
  assert.ok(inner.scroll <= inner.client + 1, `no inner scrollbar: ${inner.scroll} > ${inner.client}`);
  assert.notEqual(Math.round(outer), 560, 'resized from the snippet\'s 560 px');
  // The custom element: a result equal to the CLI, and a meaningful title for screen readers.
  const elHandle = await page.waitForSelector('#el iframe');
  const elFrame = await elHandle.contentFrame();
  await elFrame.waitForSelector('#run-status[data-state="done"]', { state: 'attached' });
  const expected = cli('I1.4');
  const shown = await headline(elFrame);
  for (const key of HEADLINE) assert.equal(shown[key], fixed3(expected.metrics[key]), key);
  assert.equal(await elFrame.isVisible('[data-chart="families"]'), true);
  assert.equal(await elFrame.isVisible('[data-chart="roofline"]'), false);
  await page.waitForFunction(() => /Llama-2-70B/.test(document.querySelector('#el iframe').title));
  // Readable in a 600 px column: the embed's page does not scroll sideways.
  assert.equal(await elHandle.evaluate((f) => Math.round(f.getBoundingClientRect().width)), 600);
  assert.ok(await elFrame.evaluate(() => document.documentElement.scrollWidth <= innerWidth));
  assert.deepEqual(errors, []);
  await context.close();
  await host.close();
});
