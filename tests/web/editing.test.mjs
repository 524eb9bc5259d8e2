// Editing without noise: typing runs the scenario once the user pauses (a burst
// of keystrokes gives one run, and an error shows only after the pause), and
// the mode tabs switch between latency, serving simulation and training
// presets. Needs `bash .ci/build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { checkBuilt, startServer, launchBrowser, newPage, cli, scenarioPreset, fixed3, waitDone, metric } from './harness.mjs';

let server;
let browser;
let page;

before(async () => {
  checkBuilt();
  server = await startServer();
  browser = await launchBrowser();
  page = await newPage(browser);
  await page.goto(server.url);
  await page.selectOption('#scenario', 'I1.1');
  await waitDone(page, 'I1.1');
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.close();
});

const started = () => page.evaluate(() => window.sightlinePerf.started);

test('a burst of keystrokes gives one run, after the pause, with the CLI numbers', async () => {
  const before = await started();
  await page.click('#prompt_tokens', { clickCount: 3 });
  await page.keyboard.press('Backspace');
  await page.keyboard.type('1000', { delay: 80 });  // five edits, 80 ms apart
  // Nothing has run while typing.
  assert.equal(await started(), before, 'no run while the user types');
  await page.waitForFunction((n) => window.sightlinePerf.started > n, before, { timeout: 5000 });
  await waitDone(page);
  await page.waitForTimeout(700);  // longer than the pause: no second run comes
  assert.equal(await started(), before + 1, 'exactly one run for the whole burst');
  const scenario = scenarioPreset('I1.1');
  scenario.serving.workload.prompt_tokens = 1000;
  assert.equal(await metric(page, 'ttft_ms'), fixed3(cli(scenario).metrics.ttft_ms));
  // Leaving the field (change) does not run the same scenario again.
  await page.dispatchEvent('#prompt_tokens', 'change');
  await page.waitForTimeout(100);
  assert.equal(await started(), before + 1);
});

test('an invalid value shows its error only after the pause', async () => {
  await page.click('#batch_size', { clickCount: 3 });
  await page.keyboard.type('99999', { delay: 60 });
  assert.equal(await page.isVisible('#error'), false, 'no error while typing');
  await page.waitForSelector('#error:not([hidden])', { timeout: 5000 });
  assert.equal(await page.textContent('#error-path'), '/serving/workload/batch_size');
  await page.click('#batch_size', { clickCount: 3 });
  await page.keyboard.type('1');
  await page.waitForSelector('#error', { state: 'hidden', timeout: 5000 });
  await waitDone(page);
});

test('mode tabs switch between latency, serving simulation and training presets', async () => {
  await page.click('#mode-simulate');
  await page.waitForSelector('#mode-simulate[aria-selected="true"]');
  await waitDone(page);
  const simId = await page.$eval('#scenario', (s) => s.value);
  assert.equal(await page.$eval('#scenario', (s) => s.selectedOptions[0].parentElement.dataset.mode), 'simulate', simId);
  assert.equal(await page.isVisible('#serving-view'), true);
  await page.click('#mode-training');
  await page.waitForSelector('#mode-training[aria-selected="true"]');
  await waitDone(page);
  assert.equal(await page.isVisible('#training-view'), true);
  // Back to latency: the preset last shown there.
  await page.click('#mode-latency');
  await waitDone(page, 'I1.1');
  assert.equal(await page.getAttribute('#mode-latency', 'aria-selected'), 'true');
  // Picking a preset of another mode moves the tab with it.
  await page.selectOption('#scenario', 'T1.5');
  await waitDone(page, 'T1.5');
  assert.equal(await page.getAttribute('#mode-training', 'aria-selected'), 'true');
  assert.match(await page.textContent('#scenario-id'), /T1\.5/);
  assert.deepEqual(page.errors, []);
});
