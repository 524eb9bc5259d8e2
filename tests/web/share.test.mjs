// Share links and localStorage: a copied link opened in a fresh browser context
// shows identical numbers (equal to the CLI's); the last scenario comes back on
// reload; damaged, hostile or unknown links give a clear message and never
// inject HTML. Needs `bash .ci/build` first.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  checkBuilt, startServer, launchBrowser, newPage, cli, scenarioPreset, fixed3, waitDone, siteDir, setField, PAGE_GUARD_MS,
} from './harness.mjs';

let server;
let browser;
let share;  // build/web/share.js, the page's own link codec

before(async () => {
  checkBuilt();
  share = await import(pathToFileURL(path.join(siteDir, 'client', 'share.js')).href);
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.close();
});

/** Every number the page shows (data-metric), by key. */
async function allMetrics(page) {
  return page.$$eval('[data-metric]', (els) => Object.fromEntries(els.map((e) => [e.dataset.metric, e.dataset.value])));
}

async function freshPage() {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  page.setDefaultTimeout(PAGE_GUARD_MS);
  return page;
}

let sharedLink;
let sharedMetrics;
let editedContext;

test('Copy link gives a v1 link; opened in a fresh browser it reproduces every number, equal to the CLI', async () => {
  const page = await freshPage();
  editedContext = page.context();
  await page.goto(server.url);
  await waitDone(page, 'I1.1');
  await page.selectOption('#scenario', 'I1.4');
  await waitDone(page, 'I1.4');
  await setField(page, 'batch_size', 4);
  await setField(page, 'prompt_tokens', 1000);
  await page.waitForFunction(() => document.getElementById('run-status').dataset.state === 'done'
    && document.getElementById('summary').textContent.includes('batch 4, 1000 →'));
  await page.click('#copy-link');
  await page.waitForSelector('#share-box:not([hidden])');
  sharedLink = await page.inputValue('#share-text');
  assert.match(sharedLink, new RegExp(`^${server.url.replace(/[.]/g, '\\.')}#v1=[A-Za-z0-9_-]+$`));
  assert.match(await page.textContent('#share-status'), /copied|copy it/i);
  assert.equal(await page.evaluate(() => location.hash), sharedLink.slice(sharedLink.indexOf('#')), 'the hash follows the form');
  sharedMetrics = await allMetrics(page);

  // The link holds the preset and only the overrides.
  const decoded = share.decodeLink(sharedLink.slice(sharedLink.indexOf('#')));
  assert.deepEqual(decoded, { preset: 'I1.4', overrides: { serving: { workload: { batch_size: 4, prompt_tokens: 1000 } } } });

  const fresh = await freshPage();
  await fresh.goto(sharedLink);
  await waitDone(fresh, 'I1.4');
  assert.equal(await fresh.inputValue('#scenario'), 'I1.4');
  assert.equal(await fresh.inputValue('#batch_size'), '4');
  assert.equal(await fresh.inputValue('#prompt_tokens'), '1000');
  assert.equal(await fresh.isVisible('#modified'), true);
  assert.deepEqual(await allMetrics(fresh), sharedMetrics, 'identical numbers in a fresh browser');

  const scenario = scenarioPreset('I1.4');
  scenario.serving.workload.batch_size = 4;
  scenario.serving.workload.prompt_tokens = 1000;
  const expected = cli(scenario);
  for (const key of ['ttft_ms', 'tpot_ms', 'e2e_ms', 'output_tokens_per_s']) {
    assert.equal(sharedMetrics[key], fixed3(expected.metrics[key]), key);
  }
  assert.deepEqual(fresh.errors, []);
  await fresh.context().close();
});

test('the last scenario is restored from localStorage when Sightline opens without a link', async () => {
  const again = await editedContext.newPage();
  await again.goto(server.url);
  await waitDone(again, 'I1.4');
  assert.equal(await again.inputValue('#batch_size'), '4');
  assert.equal(await again.inputValue('#prompt_tokens'), '1000');
  assert.deepEqual(await allMetrics(again), sharedMetrics);
  assert.match(await again.evaluate(() => location.hash), /^#v1=/);

  // A reload after an edit keeps the edit.
  await setField(again, 'output_tokens', 32);
  await again.waitForFunction(() => document.getElementById('summary').textContent.includes('→ 32 tokens'));
  await again.reload();
  await waitDone(again, 'I1.4');
  assert.equal(await again.inputValue('#output_tokens'), '32');
  await editedContext.close();

  // A fresh browser without a link opens on the default scenario.
  const fresh = await freshPage();
  await fresh.goto(server.url);
  await waitDone(fresh, 'I1.1');
  assert.equal(await fresh.inputValue('#batch_size'), '1');
  await fresh.context().close();
});

test('damaged and hostile links give a clear message, inject nothing, and open the default scenario', async () => {
  const good = sharedLink.slice(sharedLink.indexOf('#'));
  const cases = [
    [`${good.slice(0, 30)}`, /damaged/],
    ['#v1=<img src=x id=injected onerror="window.pwned=1">', /damaged/],
    ['#v7=abc', /format v7.*newer/],
    ['#hello', /not a Sightline scenario/],
    [`#${share.encodeLink({ preset: 'no-such-preset<b>', overrides: {} })}`, /"no-such-preset<b>".*does not have/],
  ];
  const page = await freshPage();
  for (const [hash, message] of cases) {
    await page.goto('about:blank');
    await page.goto(`${server.url}${hash}`);
    await waitDone(page, 'I1.1');
    assert.equal(await page.isVisible('#link-notice'), true, hash);
    const text = await page.textContent('#link-notice-message');
    assert.match(text, message, hash);
    assert.match(text, /^[A-Z].*\.$/, 'a sentence');
    assert.equal(await page.$('#injected'), null);
    assert.equal(await page.$('#link-notice-message *'), null, 'no markup inside the message');
  }
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('strings inside a valid link reach the page only as text', async () => {
  const evil = '<img src=x id=injected onerror="window.pwned=1">';
  const link = share.encodeLink({ preset: 'I1.1', overrides: { hardware: { gpu: evil }, title: evil } });
  const page = await freshPage();
  await page.goto(`${server.url}#${link}`);
  await page.waitForSelector('#error:not([hidden])');
  assert.equal(await page.textContent('#error-path'), '/hardware/gpu');
  assert.match(await page.textContent('#error-message'), /<img src=x/);
  assert.equal(await page.$('#injected'), null);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  // The forbidden keys of prototype pollution are refused.
  const polluted = `#v1=${Buffer.from((await import('node:zlib')).deflateRawSync('{"p":"I1.1","o":{"__proto__":{"polluted":1}}}')).toString('base64url')}`;
  await page.goto('about:blank');
  await page.goto(`${server.url}${polluted}`);
  await waitDone(page, 'I1.1');
  assert.match(await page.textContent('#link-notice-message'), /forbidden key "__proto__"/);
  assert.equal(await page.evaluate(() => ({}).polluted), undefined);
  await page.context().close();
});

test('pasting another link into the address bar loads it', async () => {
  const page = await newPage(browser);
  await page.goto(sharedLink);
  await waitDone(page, 'I1.4');
  const other = share.encodeLink({ preset: 'I1.3', overrides: {} });
  await page.evaluate((h) => { location.hash = h; }, other);
  await waitDone(page, 'I1.3');
  assert.equal(await page.inputValue('#scenario'), 'I1.3');
  assert.equal(await page.isVisible('#modified'), false);
  await page.close();
});

test('a result priced through a cluster calibration says "calibrated with NAME"; without one it says nothing', async () => {
  // Issue 39: a calibration changed the numbers but nothing said the result was calibrated.
  const calibration = {
    id: 'my-cluster', source: 'sightline fit on two vLLM runs (test)',
    factors: { compute_efficiency_scale: 0.9, memory_efficiency_scale: 0.8, comm_efficiency_scale: 1, host_us_per_step: 100 },
  };
  const link = share.encodeLink({ preset: 'I1.1', overrides: { cost_model: { calibration } } });
  const page = await freshPage();
  await page.goto(`${server.url}#${link}`);
  await waitDone(page, 'I1.1');
  await page.waitForSelector('#calibrated-badge:not([hidden])');
  assert.equal(await page.textContent('#calibrated-badge'), 'calibrated with my-cluster');
  assert.match(await page.getAttribute('#calibrated-badge', 'title'), /memory x0\.8/);
  const scenario = scenarioPreset('I1.1');
  scenario.cost_model = { ...(scenario.cost_model || {}), calibration };
  const expected = cli(scenario);
  assert.equal(expected.calibration.id, 'my-cluster');
  assert.equal(await page.getAttribute('[data-metric="ttft_ms"]', 'data-value'), fixed3(expected.metrics.ttft_ms));
  // Back to the plain preset: the chip goes.
  await page.selectOption('#scenario', 'I1.4');
  await waitDone(page, 'I1.4');
  assert.equal(await page.isHidden('#calibrated-badge'), true);
  await page.context().close();
});

test('a link the engine refuses is shown but not kept; one kept from an earlier visit and refused now is forgotten, with a notice', async () => {
  // tp 3 does not divide I1.4's heads: the link decodes, the engine refuses the run.
  const refused = structuredClone(scenarioPreset('I1.4'));
  refused.serving.parallelism.tp = 3;
  const hash = `#${share.encodeLink(share.canonicalOf('I1.4', scenarioPreset('I1.4'), refused))}`;
  const page = await freshPage();
  await page.goto(`${server.url}${hash}`);
  await page.waitForSelector('#run-status[data-state="error"]');
  assert.equal(await page.evaluate(() => localStorage.getItem('sightline.scenario')), null, 'nothing kept');
  // The next visit without a link opens the default scenario, not the refused one.
  await page.goto('about:blank');
  await page.goto(server.url);
  await waitDone(page, 'I1.1');
  assert.equal(await page.isVisible('#error'), false);
  // A kept scenario the engine refuses now (kept by an earlier version): said, and forgotten.
  await page.evaluate((h) => localStorage.setItem('sightline.scenario', h.slice(1)), hash);
  await page.goto('about:blank');
  await page.goto(server.url);
  await page.waitForSelector('#run-status[data-state="error"]');
  assert.equal(await page.isVisible('#link-notice'), true);
  assert.equal(await page.textContent('#link-notice-title'), 'The scenario from your last visit could not be run');
  assert.match(await page.textContent('#link-notice-next'), /no longer kept/);
  assert.equal(await page.evaluate(() => localStorage.getItem('sightline.scenario')), null, 'forgotten');
  await page.goto('about:blank');
  await page.goto(server.url);
  await waitDone(page, 'I1.1');
  assert.equal(await page.isVisible('#link-notice'), false);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
