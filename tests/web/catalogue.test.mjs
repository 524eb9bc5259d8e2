// The page reads its words from the engine's exported catalogue (listRegistries),
// the same one `sightline registries` prints and the CLI tables use: headline
// cards, table rows and dropdowns say what the CLI says, and a page whose engine
// returns no catalogue shows an error instead of a hand-kept fallback.
// Needs `bash .ci/build` first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { browserSuite, newPage, waitDone, cliPath, repoDir } from './harness.mjs';

const suite = browserSuite();

function registries() {
  const r = spawnSync(cliPath, ['registries'], { cwd: repoDir, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

function table(preset) {
  const r = spawnSync(cliPath, ['run', '--preset', preset], { cwd: repoDir, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

test('serving and training cards, tables and dropdowns carry the catalogue\'s words, as the CLI table does', async () => {
  const reg = registries();
  const label = (kind, id) => reg.metrics.find((m) => m.kind === kind && m.id === id).label;
  const page = await newPage(suite.browser);
  await page.goto(`${suite.server.url}?preset=I2.4`);
  await waitDone(page, 'I2.4');
  const cards = await page.$$eval('#serving-kpis .kpi-label', (els) => els.map((e) => e.textContent));
  for (const id of ['ttft_p50_ms', 'ttft_p99_ms', 'tpot_p50_ms', 'e2e_p99_s', 'output_tokens_per_s']) {
    assert.ok(cards.includes(label('serving', id)), `card ${id}: ${cards.join(' | ')}`);
  }
  const cliTable = table('I2.4');
  const facts = await page.$$eval('#serve-facts-table tbody th', (els) => els.map((e) => e.textContent));
  assert.ok(facts.length >= 10);
  for (const f of facts) assert.ok(cliTable.includes(`  ${f} `) || cliTable.includes(`  ${f}\n`), `"${f}" is a row of the CLI table too`);
  const dists = await page.$$eval('#serve-pct-table tbody th', (els) => els.map((e) => e.textContent));
  assert.deepEqual(dists, reg.distributions.map((d) => d.label));
  const ratios = await page.$$eval('#serve-compare-table tbody th', (els) => els.map((e) => e.textContent));
  assert.ok(ratios.includes(label('serving', 'compare_ttft_p99_ratio')), ratios.join(' | '));
  for (const r of ratios) assert.ok(cliTable.includes(`  ${r} `), `"${r}" is a compare row of the CLI table too`);
  // Dropdowns list the engine's policy names, with their descriptions as tooltips.
  for (const [select, family] of [['sim_router', 'routers'], ['sim_preemption', 'preemption_modes'], ['prompt_dist', 'length_distributions']]) {
    const options = await page.$$eval(`#${select} option`, (els) => els.map((o) => [o.value, o.title]).filter(([v]) => v !== ''));
    assert.deepEqual(options, reg.policies[family].map((e) => [e.name, e.description]), select);
  }
  // Selects without a preset or policy list take the parameter schema's choices; number
  // inputs take its range, and a shown default is the schema's.
  const param = (pointer) => reg.parameters.find((q) => q.pointer === pointer);
  // (after their "From the model" choice, the empty value that leaves the key to the model's config)
  for (const [select, pointer] of [['weights', '/precision/weights'], ['kv_cache', '/precision/kv_cache']]) {
    assert.deepEqual(await page.$$eval(`#${select} option`, (els) => els.map((o) => o.value)), ['', ...param(pointer).choices], select);
  }
  for (const [input, pointer] of [['sim_block_size', '/serving/kv_cache/block_size'], ['sim_gpu_util', '/serving/kv_cache/gpu_memory_utilization'],
    ['spec_k', '/serving/speculative/k'], ['sim_num_requests', '/serving/workload/num_requests']]) {
    const q = param(pointer);
    assert.deepEqual(await page.$eval(`#${input}`, (e) => [e.min, e.max]), [String(q.min), String(q.max)], input);
  }
  assert.equal(await page.inputValue('#sim_watermark'), String(param('/serving/kv_cache/watermark').default), 'I2.4 leaves the watermark to the engine');

  await page.goto(`${suite.server.url}?preset=I1.1`);
  await waitDone(page, 'I1.1');
  const latencyCards = await page.$$eval('#latency-view .kpi-label', (els) => els.map((e) => e.textContent));
  assert.deepEqual(latencyCards, ['ttft_ms', 'tpot_ms', 'e2e_ms', 'output_tokens_per_s'].map((id) => label('latency', id)));
  const latencyTable = table('I1.1');
  for (const l of latencyCards) assert.ok(latencyTable.includes(`  ${l} `), `"${l}" in the CLI latency table`);
  const floors = await page.$$eval('#latency-view [data-catalogue] th', (els) => els.map((e) => e.textContent));
  assert.ok(floors.length >= 5);
  for (const l of floors) assert.ok(latencyTable.includes(`  ${l} `), `"${l}" (throughput and floors) in the CLI latency table`);
  const memory = await page.$$eval('#memory-table tbody th', (els) => els.map((e) => e.textContent));
  for (const m of memory) assert.ok(latencyTable.includes(`  ${m} `), `memory row "${m}" in the CLI latency table`);

  await page.goto(`${suite.server.url}?preset=T3.5`);
  await waitDone(page, 'T3.5');
  for (const [select, pointer] of [['train_schedule', '/training/schedule'], ['train_recompute', '/training/recompute/mode'],
    ['train_optimizer', '/training/optimizer/type'], ['lora_base_dtype', '/training/lora/base_dtype']]) {
    assert.deepEqual(await page.$$eval(`#${select} option`, (els) => els.map((o) => o.value)), param(pointer).choices, select);
  }
  const zero = param('/training/parallelism/zero_stage');
  assert.deepEqual(await page.$$eval('#train_zero option', (els) => els.map((o) => Number(o.value))),
    Array.from({ length: zero.max - zero.min + 1 }, (_, i) => zero.min + i));
  const trainingTable = table('T3.5');
  const throughput = await page.$$eval('#train-throughput-table tbody th', (els) => els.map((e) => e.textContent));
  assert.ok(throughput.length >= 4);
  for (const t of throughput) assert.ok(trainingTable.includes(`  ${t} `), `"${t}" in the CLI training table`);
  const steps = await page.$$eval('#train-step-table tbody tr:not(.total) th', (els) => els.map((e) => e.textContent));
  assert.ok(steps.some((t) => t.startsWith(`${reg.step_parts.find((p) => p.id === 'compute').label}: `)), steps.join(' | '));
  for (const t of steps) assert.ok(trainingTable.includes(`  ${t} `), `step part "${t}" in the CLI training table`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('the page loads its catalogue file: no request of a first load fails (no 404 for registries.json)', async () => {
  const page = await newPage(suite.browser);
  const failed = [];
  const loaded = [];
  page.on('response', (r) => {
    loaded.push(r.url());
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
  });
  page.on('requestfailed', (r) => failed.push(`failed ${r.url()}`));
  await page.goto(`${suite.server.url}?preset=I2.4`);
  await waitDone(page, 'I2.4');
  assert.deepEqual(failed, []);
  assert.ok(loaded.some((u) => new URL(u).pathname.endsWith('/registries.json')), 'the page read registries.json');
  await page.close();
});

test('a page whose engine returns no catalogue says so and runs nothing', async () => {
  const context = await suite.browser.newContext({ serviceWorkers: 'block' });
  // The build's registries.json is missing (the page then asks its worker), and
  // the worker's REGISTRIES call fails as an engine without listRegistries would.
  await context.route('**/registries.json', (route) => route.fulfill({ status: 404, body: 'not found' }));
  await context.route('**/worker.js', async (route) => {
    const response = await route.fetch();
    const failing = `JSON.stringify({ ok: false, error: { code: 'unknown_function', path: '', message: 'listRegistries is missing' } })`;
    const body = (await response.text()).replace('engine.listRegistries()', failing);
    await route.fulfill({ response, body });
  });
  const page = await context.newPage();
  await page.goto(suite.server.url);
  await page.waitForSelector('#run-status[data-state="error"]');
  assert.equal(await page.isVisible('#error'), true);
  assert.match(await page.textContent('#error-message'), /listRegistries is missing/);
  // No hand-kept fallback fills the dropdowns.
  assert.equal(await page.$$eval('#sim_router option', (els) => els.length), 0);
  await context.close();
});
