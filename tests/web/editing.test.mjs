// Editing without noise: typing runs the scenario once the user pauses (a burst
// of keystrokes gives one run, and an error shows only after the pause), and
// the mode tabs switch between latency, serving simulation and training
// presets. Needs `bash .ci/build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { checkBuilt, startServer, launchBrowser, newPage, cli, scenarioPreset, fixed3, waitDone, metric, PAGE_GUARD_MS } from './harness.mjs';

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
  await page.waitForFunction((n) => window.sightlinePerf.started > n, before, { timeout: PAGE_GUARD_MS });
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
  await page.waitForSelector('#error:not([hidden])', { timeout: PAGE_GUARD_MS });
  assert.equal(await page.textContent('#error-path'), '/serving/workload/batch_size');
  await page.click('#batch_size', { clickCount: 3 });
  await page.keyboard.type('1');
  await page.waitForSelector('#error', { state: 'hidden', timeout: PAGE_GUARD_MS });
  await waitDone(page);
});

test('mode tabs switch between latency, serving simulation and training presets', async () => {
  await page.click('#mode-simulate');
  await page.waitForSelector('#mode-simulate[aria-selected="true"]');
  await waitDone(page);
  const simId = await page.$eval('#scenario', (s) => s.value);
  assert.equal(await page.$eval('#scenario', (s) => s.selectedOptions[0].dataset.mode), 'simulate', simId);
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

test('dependent fields follow their owners: TP sizes the node and picks the GPU\'s link; TP beyond a node proposes nodes', async () => {
  await page.selectOption('#scenario', 'I1.1');
  await waitDone(page, 'I1.1');
  await page.fill('#tp', '4');
  await page.dispatchEvent('#tp', 'change');
  assert.equal(await page.inputValue('#gpus_per_node'), '4');
  assert.equal(await page.inputValue('#intra_node'), 'nvlink3-nvswitch', 'the A100\'s NVLink generation');
  await waitDone(page);
  assert.equal(await page.isVisible('#error'), false);
  const scenario = scenarioPreset('I1.1');
  Object.assign(scenario.hardware, { gpus_per_node: 4, intra_node: 'nvlink3-nvswitch' });
  scenario.serving.parallelism.tp = 4;
  await page.waitForFunction((v) => document.querySelector('[data-metric="tpot_ms"]').dataset.value === v, fixed3(cli(scenario).metrics.tpot_ms));
  // Another GPU brings its own link generation.
  await page.selectOption('#gpu', 'h100-sxm');
  assert.equal(await page.inputValue('#intra_node'), 'nvlink4-nvswitch');
  assert.match(await page.textContent('#follow-note'), /NVLink|nvlink/i);
  await waitDone(page);
  // TP 16 does not fit a node of 8: a multi-node layout is proposed and applied on request.
  await page.fill('#tp', '16');
  await page.dispatchEvent('#tp', 'change');
  assert.equal(await page.isVisible('#multinode-note'), true);
  assert.match(await page.textContent('#multinode-text'), /TP 8 in each node and PP 2 across 2 nodes/);
  await page.click('#multinode-apply');
  assert.deepEqual(await Promise.all(['tp', 'pp', 'gpus_per_node', 'nodes'].map((id) => page.inputValue(`#${id}`))), ['8', '2', '8', '2']);
  assert.notEqual(await page.inputValue('#inter_node'), '');
  await page.waitForFunction(() => document.getElementById('run-status').dataset.state === 'done'
    && document.getElementById('summary').textContent.includes('PP 2'));
  assert.equal(await page.isVisible('#error'), false);
  // The assumptions behind the result are listed.
  const assumed = await page.$$eval('#assumption-list li', (lis) => lis.map((li) => li.textContent));
  assert.ok(assumed.some((t) => /^Software stack: vllm-like \(default\)/.test(t)), assumed.join(' | '));
  assert.ok(assumed.some((t) => /^KV cache: [\d.]+ GiB per GPU, [\d.]+% of its 80 GiB/.test(t)), assumed.join(' | '));
  assert.ok(assumed.some((t) => /^Prompt lengths: fixed \d+ tokens/.test(t)), assumed.join(' | '));
  assert.deepEqual(page.errors, []);
});

test('the GPU count sets the parallelism: TP in latency and serving simulation, DP in training', async () => {
  const type = async (id, value) => {
    await page.fill(`#${id}`, String(value));
    await page.dispatchEvent(`#${id}`, 'input');
    await page.dispatchEvent(`#${id}`, 'change');
  };
  const values = (ids) => Promise.all(ids.map((id) => page.inputValue(`#${id}`)));
  // Latency: one replica on every GPU, TP × PP = GPUs.
  await page.selectOption('#scenario', 'I1.1');
  await waitDone(page, 'I1.1');
  await type('gpus_per_node', 4);
  assert.deepEqual(await values(['tp', 'pp']), ['4', '1']);
  await waitDone(page);
  assert.equal(await page.isVisible('#error'), false, await page.textContent('#error'));
  // Serving simulation (I2.2, one A100): on 8 GPUs with TP 8 chosen, a node of 4 takes TP down
  // to 4; typed one digit at a time (1, then 16), TP comes back to the 8 chosen once the node holds it.
  await page.selectOption('#scenario', 'I2.2');
  await waitDone(page, 'I2.2');
  await type('gpus_per_node', 8);
  await type('tp', 8);
  await type('gpus_per_node', 4);
  assert.equal(await page.inputValue('#tp'), '4');
  assert.match(await page.textContent('#follow-note'), /TP set to 4, within a node of 4 GPUs/);
  await waitDone(page);
  assert.equal(await page.isVisible('#error'), false, await page.textContent('#error'));
  await type('gpus_per_node', 1);
  assert.equal(await page.inputValue('#tp'), '1');
  await type('gpus_per_node', 16);
  assert.equal(await page.inputValue('#tp'), '8');
  // Training (T2.3): DP takes the GPUs TP × PP × CP leave.
  await page.selectOption('#scenario', 'T2.3');
  await waitDone(page, 'T2.3');
  const [gpn, nodes, ttp, tpp, tcp] = (await values(['gpus_per_node', 'nodes', 'train_tp', 'train_pp', 'train_cp'])).map((v) => Number(v) || 1);
  await type('nodes', 2 * nodes);
  assert.equal(Number(await page.inputValue('#train_dp')), (gpn * 2 * nodes) / (ttp * tpp * tcp));
  await waitDone(page);
  assert.equal(await page.isVisible('#error'), false, await page.textContent('#error'));
  assert.deepEqual(page.errors, []);
});
