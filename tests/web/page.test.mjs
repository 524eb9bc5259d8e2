// The real page in headless Chromium: the engine runs in a Web Worker and the
// numbers it shows equal the native CLI's. Needs `bash .ci/build` first.
// Run: node --test --test-concurrency=1 tests/web/
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkBuilt, startServer, launchBrowser, newPage, cli, scenarioPreset, fixed3, waitDone, metric,
} from './harness.mjs';

const HEADLINE = ['ttft_ms', 'tpot_ms', 'e2e_ms', 'output_tokens_per_s'];
const MEMORY = ['weights_GiB', 'kv_cache_GiB', 'activations_GiB', 'runtime_overhead_GiB', 'free_GiB', 'capacity_GiB'];

let server;
let browser;
let page;
const requested = [];

async function assertMatchesCli(expected) {
  for (const key of HEADLINE) {
    assert.equal(await metric(page, key), fixed3(expected.metrics[key]), `${key} shown on the page`);
  }
  // Achieved utilization and the energy that follows from it.
  for (const key of ['prefill_mfu', 'decode_mbu', 'energy_J_per_output_token']) {
    assert.equal(await metric(page, key), fixed3(expected.metrics[key]), `${key} shown on the page`);
  }
  for (const key of MEMORY) {
    assert.equal(await metric(page, key), fixed3(expected.memory_per_gpu[key]), `${key} shown on the page`);
  }
  const firstOp = expected.breakdown.decode_per_step[0];
  assert.equal(await metric(page, `decode.${firstOp.name}.time_us`), fixed3(firstOp.time_us));
}

before(async () => {
  checkBuilt();
  server = await startServer();
  browser = await launchBrowser();
  page = await newPage(browser);
  page.on('request', (r) => requested.push(r.url()));
  await page.goto(server.url);
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.close();
});

test('the server prints exactly its URL line', () => {
  assert.match(server.firstLine, /^Sightline: http:\/\/127\.0\.0\.1:\d+\/$/);
});

test('(a) the default scenario I1.1 runs on load and matches the CLI', async () => {
  await waitDone(page, 'I1.1');
  assert.equal(await page.inputValue('#scenario'), 'I1.1');
  await assertMatchesCli(cli('I1.1'));
  assert.equal(await page.textContent('[data-field="engine_version"]'), cli('I1.1').engine_version);
  assert.equal(await page.textContent('[data-field="cost_tier"]'), cli('I1.1').cost_tier);
  assert.equal(await page.getAttribute('#progress', 'value'), '1');
  // A card the kind's measured band widened says so in the engine's words: its
  // tooltip ends with the result's interval_band.note (engine/jobs/kind_error_band.hpp).
  const { interval_band: band, cost_tier: tier } = cli('I1.1');
  const titles = await page.$$eval('.kpi-interval[data-source="kind_band"]', (ls) => ls.filter((l) => !l.hidden).map((l) => l.title));
  assert.ok(band.applied && band.note && titles.length > 0, JSON.stringify(band));
  for (const title of titles) assert.equal(title, `80% interval: the kernels' (${tier} tier), ${band.note}`);
  assert.deepEqual(page.errors, []);
});

test('the picker lists every scenario preset and every field has a label and a tooltip', async () => {
  const options = await page.$$eval('#scenario option', (os) => os.map((o) => ({ id: o.value, text: o.textContent, group: o.parentElement.label })));
  const ids = options.map((o) => o.id);
  assert.ok(ids.includes('I1.1') && ids.includes('I1.4'), `picker options: ${ids}`);
  // Plain names first ("Medium-load API: Llama-2-7B, 1×A100, 10 req/s"), the suite id after them.
  assert.ok(options.every((o) => o.text.endsWith(` · ${o.id}`) && o.text.length > o.id.length + 8), 'each option: a plain name, then the id');
  assert.equal(options.find((o) => o.id === 'I2.2').text, 'Medium-load API: Llama-2-7B, 1×A100, 10 req/s · I2.2');
  // Grouped by mode.
  assert.match(options.find((o) => o.id === 'I1.1').group, /^Latency/);
  assert.match(options.find((o) => o.id === 'I2.2').group, /^Serving simulation/);
  assert.match(options.find((o) => o.id === 'T1.5').group, /^Training/);
  assert.match(options.find((o) => o.id === 'V.TT1').group, /^Published measurements/);
  assert.match(options.find((o) => o.id === 'E.I-gf1-7b-tp1-bf16').group, /^Published measurements/);
  // A capacity row (MLPerf Server) is a native report-e2e check, past the page's budget: not a preset here.
  assert.ok(!ids.includes('E.R3-llama2-70b-8xh200-server'), 'capacity rows are not page presets');
  const fields = ['model', 'gpu', 'gpus_per_node', 'intra_node', 'tp', 'pp', 'prompt_tokens', 'output_tokens',
    'batch_size', 'weights', 'activations', 'kv_cache'];
  for (const id of fields) {
    const label = await page.$(`label[for="${id}"]`);
    assert.ok(label, `label for ${id}`);
    assert.ok((await page.getAttribute(`#${id}`, 'title')).length > 10, `tooltip on ${id}`);
  }
  assert.ok((await page.$$('#model option')).length >= 10, 'model dropdown from listPresets("models")');
  assert.ok((await page.$$('#gpu option')).length >= 5, 'GPU dropdown from listPresets("gpus")');
});

test('(b) picking I1.4 runs it and matches the CLI', async () => {
  await page.selectOption('#scenario', 'I1.4');
  await waitDone(page, 'I1.4');
  assert.equal(await page.inputValue('#tp'), '4');
  assert.equal(await page.inputValue('#model'), 'llama-2-70b');
  await assertMatchesCli(cli('I1.4'));
});

test('the prefill tab shows the prefill operators', async () => {
  const expected = cli('I1.4').breakdown.prefill;
  await page.click('#phase-prefill');
  assert.equal(await metric(page, `prefill.${expected[0].name}.time_us`), fixed3(expected[0].time_us));
  assert.equal(await page.$$eval('#ops-table tbody tr', (rows) => rows.length), expected.length);
  await page.click('#phase-decode');
});

test('(c) batch_size 100000 is reported at its path and the field is highlighted', async () => {
  await page.fill('#batch_size', '100000');
  await page.dispatchEvent('#batch_size', 'change');
  await page.waitForSelector('#error:not([hidden])');
  assert.equal(await page.getAttribute('#error', 'role'), 'alert');
  assert.equal(await page.textContent('#error-code'), 'out_of_range');
  assert.equal(await page.textContent('#error-path'), '/serving/workload/batch_size');
  assert.match(await page.textContent('#error-message'), /65536/);
  assert.equal(await page.getAttribute('#batch_size', 'aria-invalid'), 'true');
  assert.ok(await page.$eval('#batch_size', (e) => e.classList.contains('invalid')));
  assert.equal(await page.getAttribute('#run-status', 'data-state'), 'error');
});

test('(c) tp 3 does not divide the heads: located at /serving/parallelism/tp; fixing it clears the error', async () => {
  await page.fill('#batch_size', '1');
  await page.fill('#gpus_per_node', '3');
  await page.fill('#tp', '3');
  await page.click('#run');
  await page.waitForFunction(() => document.getElementById('error-path').textContent === '/serving/parallelism/tp'
    && !document.getElementById('error').hidden);
  assert.equal(await page.textContent('#error-code'), 'constraint_violation');
  assert.match(await page.textContent('#error-message'), /divide/);
  assert.ok(await page.$eval('#tp', (e) => e.classList.contains('invalid')));
  assert.equal(await page.$$eval('.invalid', (els) => els.length), 1, 'only the tp field is highlighted');

  await page.fill('#gpus_per_node', '4');
  await page.fill('#tp', '4');
  await page.click('#run');
  await waitDone(page, 'I1.4');
  assert.ok(await page.$eval('#error', (e) => e.hidden));
  assert.equal(await page.$$eval('.invalid', (els) => els.length), 0);
  assert.equal(await page.getAttribute('#tp', 'aria-invalid'), null);
  await assertMatchesCli(cli('I1.4'));
});

test('engine strings are rendered as text, never as HTML', async () => {
  // A GPU id with markup reaches the engine, which quotes it in its error message.
  await page.evaluate(() => {
    const o = document.createElement('option');
    o.value = '<img src=x id=injected onerror="window.pwned=1">';
    o.textContent = 'evil';
    document.getElementById('gpu').append(o);
  });
  await page.selectOption('#gpu', '<img src=x id=injected onerror="window.pwned=1">');
  await page.waitForSelector('#error:not([hidden])');
  assert.equal(await page.textContent('#error-path'), '/hardware/gpu');
  assert.match(await page.textContent('#error-message'), /<img src=x/);
  assert.equal(await page.$('#injected'), null);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.ok(await page.$eval('#gpu', (e) => e.classList.contains('invalid')));
  await page.click('#reset');
  await waitDone(page, 'I1.4');
});

test('editing the form supersedes the running run; the last edit wins and matches the CLI', async () => {
  await page.evaluate(() => {
    const input = document.getElementById('batch_size');
    for (const v of ['2', '3', '4']) {
      input.value = v;
      input.dispatchEvent(new Event('change', { bubbles: true }));
    }
  });
  await page.waitForFunction(() => document.getElementById('run-status').dataset.state === 'done'
    && document.getElementById('summary').textContent.includes('batch 4,'));
  assert.equal(await page.isVisible('#modified'), true, 'the picker says the preset was modified');
  const scenario = scenarioPreset('I1.4');
  scenario.serving.workload.batch_size = 4;
  const expected = cli(scenario);
  for (const key of HEADLINE) assert.equal(await metric(page, key), fixed3(expected.metrics[key]), key);
});

test('Cancel stops a run: the status says cancelled and no late result lands', async () => {
  const before = await metric(page, 'ttft_ms');
  await page.evaluate(() => {
    document.getElementById('batch_size').value = '8';
    document.getElementById('run').click();
    document.getElementById('cancel').click();
  });
  assert.equal(await page.getAttribute('#run-status', 'data-state'), 'cancelled');
  assert.ok(await page.$eval('#cancel', (b) => b.disabled));
  await page.waitForTimeout(500);
  assert.equal(await page.getAttribute('#run-status', 'data-state'), 'cancelled');
  assert.equal(await metric(page, 'ttft_ms'), before);
});

test('(d) the engine runs in a Web Worker, not on the page', async () => {
  const workers = page.workers();
  assert.equal(workers.length, 1, 'one dedicated worker');
  assert.match(workers[0].url(), /\/worker\.js$/);
  // A module worker: the engine's glue is its import (sightline.mjs, bundled into worker.js by
  // web/bundle.mjs), not a global of the page or the worker.
  assert.equal(await workers[0].evaluate(() => typeof self.createSightline), 'undefined');
  assert.equal(await workers[0].evaluate(() => typeof document), 'undefined');
  const onPage = await page.evaluate(() => ({
    factory: typeof window.createSightline,
    module: typeof window.Module,
    scripts: [...document.scripts].map((s) => s.src),
  }));
  assert.equal(onPage.factory, 'undefined');
  assert.equal(onPage.module, 'undefined');
  assert.ok(!onPage.scripts.some((s) => /sightline\.m?js/.test(s)), 'the engine is not a page script');
  assert.ok(requested.some((u) => u.endsWith('/worker.js')), 'worker.js was requested');
  assert.deepEqual(page.errors, []);
});
