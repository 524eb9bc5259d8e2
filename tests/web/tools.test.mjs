// Sweeps on a worker pool, compare, exports (result JSON, operator CSV, chart
// PNG/SVG) and scenario-file import with located errors. Needs `bash .ci/build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import {
  checkBuilt, startServer, launchBrowser, newPage, cli, scenarioPreset, fixed3, waitDone, metric, setField, PAGE_GUARD_MS,
} from './harness.mjs';

let server;
let browser;
let page;

before(async () => {
  checkBuilt();
  server = await startServer();
  browser = await launchBrowser();
  page = await newPage(browser);
  await page.goto(server.url);
  await waitDone(page, 'I1.1');
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.close();
});

/** Clicks `selector` and returns the download's file name and bytes. */
async function downloadOf(selector) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  const file = await download.path();
  return { name: download.suggestedFilename(), bytes: fs.readFileSync(file) };
}

// engine-start.js asks for the default scenario's run before app.js has built
// the form; the page shows that run only when it is the request the page makes
// itself. Its result must be the one a run the page asks for gives, to the byte.
test('the first result, run ahead of the page, is byte for byte the result the page\'s own run gives', async () => {
  assert.equal(await page.evaluate(() => window.sightlinePerf.firstRunAhead), true, 'the first run was the one asked for ahead');
  const ahead = await downloadOf('#export-json');
  const runs = await page.evaluate(() => window.sightlinePerf.runs);
  await page.click('#run');  // Run: the same scenario again, asked for by app.js itself
  await page.waitForFunction((n) => window.sightlinePerf.runs === n + 1, runs);
  await waitDone(page, 'I1.1');
  const own = await downloadOf('#export-json');
  assert.ok(own.bytes.equals(ahead.bytes), 'the result JSON of the run ahead equals the page\'s own run, byte for byte');
  assert.deepEqual(JSON.parse(ahead.bytes.toString('utf8')).result, cli('I1.1'));
});

test('a 10-point sweep runs on several workers and plots 10 points equal to the CLI', async () => {
  await page.click('#tab-sweep');
  assert.equal(await page.getAttribute('#tab-sweep', 'aria-selected'), 'true');
  assert.equal(await page.isVisible('#panel-sweep'), true);
  await page.selectOption('#sweep-field', 'batch_size');
  await page.selectOption('#sweep-mode', 'list');
  await page.fill('#sweep-list', '1, 2, 3, 4, 5, 6, 7, 8, 9, 10');
  await page.selectOption('#sweep-metric', 'tpot_ms');
  await page.click('#sweep-run');
  await page.waitForSelector('#sweep-status[data-state="done"]');
  assert.match(await page.textContent('#sweep-status'), /^10 points in \d+ ms$/);
  assert.equal(await page.$$eval('#sweep-table tbody tr[data-state="ok"]', (rows) => rows.length), 10);
  const workers = page.workers().filter((w) => /worker\.js$/.test(w.url()));
  assert.ok(workers.length >= 3, `main worker plus a pool of at least 2 (${workers.length})`);
  assert.equal(await page.getAttribute('#chart-sweep', 'data-empty'), 'false');
  assert.match(await page.getAttribute('#chart-sweep canvas', 'aria-label'), /10 values of Batch size/);
  // The plotted metric of a point equals the CLI's.
  const scenario = scenarioPreset('I1.1');
  scenario.serving.workload.batch_size = 7;
  const expected = cli(scenario);
  const row = await page.$$eval('#sweep-table tbody tr[data-value="7"] td', (tds) => tds.map((t) => t.textContent));
  assert.equal(row[0], fixed3(expected.metrics.tpot_ms));
  // Throughput vs latency: every point is on the front here (more batch, more of both).
  assert.equal(await page.getAttribute('#chart-pareto', 'data-empty'), 'false');
  assert.ok(await page.$$eval('#sweep-table tr.on-front', (rows) => rows.length) >= 1);
  const csv = await downloadOf('#sweep-csv');
  assert.equal(csv.name, 'sightline-sweep-batch_size.csv');
  assert.equal(csv.bytes.toString('utf8').trim().split('\r\n').length, 11);
});

test('sweep inputs are checked and the faulty input is marked; failed points are listed with the reason', async () => {
  await page.fill('#sweep-list', '1, two, 3');
  await page.click('#sweep-run');
  await page.waitForSelector('#sweep-error:not([hidden])');
  assert.match(await page.textContent('#sweep-error'), /"two" is not a number/);
  assert.equal(await page.getAttribute('#sweep-list', 'aria-invalid'), 'true');
  await page.fill('#sweep-list', '256, 100000');
  await page.click('#sweep-run');
  await page.waitForSelector('#sweep-status[data-state="done"]');
  assert.equal(await page.isHidden('#sweep-error'), true);
  assert.match(await page.textContent('#sweep-status'), /1 failed/);
  assert.match(await page.textContent('#sweep-table tr[data-value="100000"]'), /out_of_range/);
});

test('a long sweep shows progress and can be cancelled', async () => {
  await page.selectOption('#sweep-field', 'output_tokens');
  await page.selectOption('#sweep-mode', 'range');
  await page.fill('#sweep-start', '2000');
  await page.fill('#sweep-stop', '3800');
  await page.fill('#sweep-steps', '40');
  await page.selectOption('#sweep-scale', 'linear');
  await page.click('#sweep-run');
  await page.waitForSelector('#sweep-status[data-state="running"]');
  assert.equal(await page.isEnabled('#sweep-cancel'), true);
  await page.click('#sweep-cancel');
  await page.waitForSelector('#sweep-status[data-state="cancelled"]');
  assert.match(await page.textContent('#sweep-status'), /Cancelled after \d+ \/ 40 points/);
  assert.ok(await page.$$eval('#sweep-table tr[data-state="pending"]', (r) => r.length) > 0);
  assert.equal(await page.isEnabled('#sweep-run'), true);
});

test('compare: A pinned, B edited; the differing input and numbers are highlighted', async () => {
  await page.click('#tab-result');
  await page.click('#pin');
  assert.equal(await page.getAttribute('#tab-compare', 'aria-selected'), 'true');
  await setField(page, 'batch_size', 8);
  await page.waitForFunction(() => document.getElementById('compare-b-label').textContent.includes('batch_size 8'));
  assert.equal(await page.textContent('#compare-a-label'), 'I1.1');
  const diffInputs = await page.$$eval('#compare-inputs tr.diff', (rows) => rows.map((r) => r.dataset.path));
  assert.deepEqual(diffInputs, ['/serving/workload/batch_size']);
  const cells = await page.$$eval('#compare-inputs tr.diff td', (tds) => tds.map((t) => t.textContent));
  assert.deepEqual(cells, ['1', '8', 'changed']);
  const diffMetrics = await page.$$eval('#compare-metrics tr.diff', (rows) => rows.map((r) => r.dataset.key));
  assert.ok(diffMetrics.includes('metrics.tpot_ms') && diffMetrics.includes('memory_per_gpu.kv_cache_GiB'));
  assert.ok(!diffMetrics.includes('memory_per_gpu.weights_GiB'), 'equal numbers are not highlighted');
  const scenario = scenarioPreset('I1.1');
  scenario.serving.workload.batch_size = 8;
  const b = cli(scenario);
  const tpot = await page.$$eval('#compare-metrics tr[data-key="metrics.tpot_ms"] td', (tds) => tds.map((t) => t.textContent));
  assert.deepEqual(tpot.slice(0, 2), [fixed3(cli('I1.1').metrics.tpot_ms), fixed3(b.metrics.tpot_ms)]);
  await page.check('#compare-only-diff');
  assert.equal(await page.$$eval('#compare-inputs tbody tr', (r) => r.length), 1);
  // Swap loads A back into the form.
  await page.click('#compare-swap');
  await page.waitForFunction(() => document.getElementById('compare-a-label').textContent.includes('batch_size 8'));
  assert.equal(await page.inputValue('#batch_size'), '1');
  await page.click('#tab-result');
  await waitDone(page, 'I1.1');
});

test('export: result JSON equals the CLI, operator CSV has a row per operator, charts as PNG and SVG', async () => {
  const json = await downloadOf('#export-json');
  assert.equal(json.name, 'sightline-i1.1-result.json');
  const envelope = JSON.parse(json.bytes.toString('utf8'));
  assert.equal(envelope.ok, true);
  assert.deepEqual(envelope.result, cli('I1.1'));

  const scenarioFile = await downloadOf('#export-scenario');
  const exported = JSON.parse(scenarioFile.bytes.toString('utf8'));
  assert.equal(exported.id, 'I1.1');
  assert.deepEqual(cli(exported).metrics, cli('I1.1').metrics);

  const csv = await downloadOf('#export-csv');
  assert.equal(csv.name, 'sightline-i1.1-operators.csv');
  const lines = csv.bytes.toString('utf8').trim().split('\r\n');
  const expected = cli('I1.1').breakdown;
  assert.equal(lines.length, 1 + expected.prefill.length + expected.decode_per_step.length);
  assert.match(lines[0], /^phase,.*name.*time_us/);
  assert.match(lines[1], /^Prefill,/);

  const png = await downloadOf('[data-export-chart="roofline"][data-format="png"]');
  assert.equal(png.name, 'sightline-i1.1-roofline.png');
  assert.deepEqual([...png.bytes.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  const svg = await downloadOf('[data-export-chart="families"][data-format="svg"]');
  const text = svg.bytes.toString('utf8');
  assert.match(text, /<svg[\s\S]*<\/svg>\s*$/);
  assert.match(text, /gemm/, 'the SVG holds the legend text');
  assert.ok(!/<script/i.test(text));
  const mem = await downloadOf('[data-export-chart="memory"][data-format="svg"]');
  assert.match(mem.bytes.toString('utf8'), /Weights/);
});

test('import: a bad scenario file shows the engine\'s located error; broken JSON gives line and column', async () => {
  const bad = scenarioPreset('I1.1');
  bad.serving.workload.batch_size = 100000;
  await page.setInputFiles('#import-file', { name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(bad, null, 2)) });
  await page.waitForSelector('#error:not([hidden])');
  assert.match(await page.textContent('#error-title'), /“bad\.json” could not be imported/);
  assert.equal(await page.textContent('#error-code'), 'out_of_range');
  assert.equal(await page.textContent('#error-path'), '/serving/workload/batch_size');
  assert.equal(await page.getAttribute('#run-status', 'data-state'), 'error');
  assert.equal(await page.inputValue('#batch_size'), '1', 'the form keeps the previous scenario');
  assert.doesNotMatch(await page.textContent('#error-message'), /not a scenario/, 'a scenario with a bad value is a scenario');

  await page.setInputFiles('#import-file', { name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{\n  "schema_version": 1,\n  "model": ,\n}') });
  await page.waitForFunction(() => document.getElementById('error-title').textContent.includes('broken.json'));
  assert.equal(await page.textContent('#error-code'), 'parse_error');
  assert.match(await page.textContent('#error-message'), /line 3, column 12/);

  await page.setInputFiles('#import-file', { name: 'evil.json', mimeType: 'application/json', buffer: Buffer.from('{"<img src=x id=injected>": 1}') });
  await page.waitForFunction(() => document.getElementById('error-title').textContent.includes('evil.json'));
  assert.equal(await page.$('#injected'), null);

  // A benchmark tool's result imported as a scenario: the engine's refusal, and where such a file goes.
  const bench = new URL('../data/bench/real/er0080_opt125m_bench_serve_v0.25.1.json', import.meta.url);
  await page.setInputFiles('#import-file', { name: 'vllm-result.json', mimeType: 'application/json', buffer: fs.readFileSync(bench) });
  await page.waitForFunction(() => document.getElementById('error-title').textContent.includes('vllm-result.json'));
  assert.match(await page.textContent('#error-message'), /unknown key 'backend'.* This file is not a scenario .* goes in the Calibrate tab/);

  const good = scenarioPreset('I1.2');
  good.id = 'my-import';
  good.serving.workload.batch_size = 3;
  await page.setInputFiles('#import-file', { name: 'good.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(good)) });
  await waitDone(page, 'my-import');
  assert.equal(await page.isHidden('#error'), true);
  assert.equal(await page.inputValue('#scenario'), '__custom__');
  assert.equal(await page.inputValue('#batch_size'), '3');
  assert.equal(await metric(page, 'tpot_ms'), fixed3(cli(good).metrics.tpot_ms));
  assert.match(await page.evaluate(() => location.hash), /^#v1=/);
  assert.deepEqual(page.errors, []);
});

test('the view tabs work from the keyboard', async () => {
  await page.focus('#tab-result');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.getAttribute('#tab-sweep', 'aria-selected'), 'true');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-sweep');
  await page.keyboard.press('End');
  // The last visible tab of the row, read from the page (Calibrate since it was
  // added; Search is hidden where the engine has no deployment search).
  const last = await page.evaluate(() => [...document.getElementById('tab-result').parentElement.querySelectorAll('[role="tab"]')]
    .filter((t) => !t.hidden).at(-1).id.replace('tab-', ''));
  assert.equal(last, 'calibrate');
  assert.equal(await page.isVisible(`#panel-${last}`), true);
  assert.equal(await page.evaluate(() => document.activeElement.id), `tab-${last}`);
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.getAttribute('#tab-result', 'aria-selected'), 'true');
  assert.equal(await page.isHidden('#panel-sweep'), true);
});

test('a result kind without a view of its own is shown by the generic view', async () => {
  const r = await page.evaluate(async () => {
    const { viewFor } = await import('./client/kinds.js');
    const result = { kind: 'some_future_kind', metrics: { ttft_p99_ms: 412.5, tokens_per_s_per_gpu: 1234.5, label: 'x' },
      key_metrics: [{ id: 'tokens_per_s_per_gpu', label: 'Throughput per GPU', unit: 'tokens/s/GPU', value: 1234.5 }] };
    const v = viewFor(result);
    v.render(result, []);
    return {
      section: v.section,
      headline: v.headline(result).map((h) => `${h.label}|${h.unit}`),
      rows: [...document.querySelectorAll('#generic-metrics tbody tr')].map((tr) => tr.textContent),
      kind: document.getElementById('generic-kind').textContent,
      compare: v.compare(result),
    };
  });
  assert.equal(r.section, 'generic-view');
  assert.equal(r.kind, 'some_future_kind');
  // The headline cards are the engine's key metrics, in its words; the page picks none of its own.
  assert.deepEqual(r.headline, ['Throughput per GPU|tok/s/GPU']);  // the page's spelling of the engine's unit
  assert.deepEqual(r.rows, ['TTFT p99412.500ms', 'Tokens1234.500/s/GPU']);
  assert.deepEqual(r.compare, [['metrics', 'ttft_p99_ms', 412.5], ['metrics', 'tokens_per_s_per_gpu', 1234.5]]);
});

test('a sweep of another arrival process\'s parameter is refused at the field, not run as ten equal points', async () => {
  await page.selectOption('#scenario', 'I2.1');
  await waitDone(page, 'I2.1');
  await page.click('#tab-sweep');
  await page.selectOption('#sweep-field', 'sim_cv');
  await page.selectOption('#sweep-mode', 'list');
  await page.fill('#sweep-list', '0.5, 1, 2');
  // What an earlier sweep left in the table (the cancelled one above) stays: no sweep starts.
  const rowsBefore = await page.$$eval('#sweep-table tbody tr', (rows) => rows.map((r) => r.dataset.value).join());
  await page.click('#sweep-run');
  await page.waitForFunction(() => /not a parameter of poisson arrivals/.test(document.getElementById('sweep-error')?.textContent || ''),
    null, { timeout: PAGE_GUARD_MS });
  assert.equal(await page.getAttribute('#sweep-field', 'aria-invalid'), 'true');
  assert.notEqual(await page.getAttribute('#sweep-status', 'data-state'), 'running');
  assert.equal(await page.$$eval('#sweep-table tbody tr', (rows) => rows.map((r) => r.dataset.value).join()), rowsBefore);
  assert.equal(await page.$$eval('#sweep-table tbody tr[data-value="0.5"]', (rows) => rows.length), 0, 'no point of the refused sweep');
});
