// Training scenarios on the real page: the training form replaces the serving
// one, the training view shows the CLI's numbers (headline, step breakdown,
// memory, pipeline), the pipeline timeline is drawn, bad values are located and
// highlighted, share links and embeds reproduce the numbers, and sweeps and
// compare work over training fields. Needs `bash .ci/build` first.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import {
  checkBuilt, startServer, launchBrowser, newPage, cli, cliPath, scenarioPreset, fixed3, waitDone, metric, siteDir,
  setField, viewMetrics, cliPresets, PAGE_GUARD_MS,
} from './harness.mjs';

let server;
let browser;
let page;
let share;

before(async () => {
  checkBuilt();
  share = await import(pathToFileURL(path.join(siteDir, 'client', 'share.js')).href);
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

async function freshPage() {
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
  const p = await context.newPage();
  p.errors = [];
  p.on('pageerror', (e) => p.errors.push(e.message));
  p.setDefaultTimeout(PAGE_GUARD_MS);
  return p;
}

test('T3.1 shows the training form and the CLI\'s numbers', async () => {
  await page.selectOption('#scenario', 'T3.1');
  await waitDone(page, 'T3.1');
  const expected = cli('T3.1');
  assert.equal(expected.kind, 'training');

  // The training form replaces the serving one, filled from the preset.
  assert.equal(await page.isVisible('#train_dp'), true);
  assert.equal(await page.isVisible('#tp'), false, 'serving fields hidden');
  assert.equal(await page.isVisible('#batch_size'), false);
  assert.equal(await page.inputValue('#train_seq_len'), '2048');
  assert.equal(await page.inputValue('#train_mbs'), '1');
  assert.equal(await page.inputValue('#train_dp'), '1');
  assert.equal(await page.inputValue('#train_schedule'), '1f1b');
  assert.equal(await page.isVisible('#modified'), false, 'an untouched form reads back the preset exactly');
  for (const id of ['train_dp', 'train_tp', 'train_pp', 'train_cp', 'train_ep', 'train_vstages', 'train_zero', 'train_sp',
    'train_seq_len', 'train_mbs', 'train_gbs', 'train_ga', 'train_schedule', 'train_recompute', 'train_fp8',
    'train_optimizer', 'train_offload', 'lora_enabled', 'lora_rank', 'lora_base_dtype', 'tokens_to_train', 'gpu_hour_usd']) {
    assert.ok(await page.$(`label[for="${id}"]`), `label for ${id}`);
    assert.ok((await page.getAttribute(`#${id}`, 'title')).length > 10, `tooltip on ${id}`);
  }
  assert.equal(await page.getAttribute('#lora_targets', 'role'), 'group');

  // Headline, breakdown, memory and the scenario's key numbers equal the CLI's.
  assert.equal(await page.isVisible('#training-view'), true);
  assert.equal(await page.isVisible('#latency-view'), false);
  for (const key of ['step_time_ms', 'tokens_per_s_per_gpu', 'mfu_pct']) {
    assert.equal(await metric(page, `train.${key}`), fixed3(expected.metrics[key]), key);
  }
  const mem = expected.memory_per_gpu;
  assert.equal(mem.fits, false);
  assert.equal(await page.textContent('#train-fits'), 'Does not fit');
  assert.equal(await metric(page, 'train.kpi.overflow_GiB'), fixed3(mem.overflow_GiB));
  assert.equal(await metric(page, 'train.kpi.max_micro_batch'), fixed3(mem.max_micro_batch));
  for (const key of ['params_GiB', 'grads_GiB', 'optimizer_states_GiB', 'activations_GiB', 'temporary_GiB', 'runtime_overhead_GiB', 'total_GiB', 'capacity_GiB']) {
    assert.equal(await metric(page, `train.memory.${key}`), fixed3(mem[key]), key);
  }
  const b = expected.step_breakdown_ms;
  assert.equal(await metric(page, 'train.step.compute.gemm'), fixed3(b.compute.gemm));
  assert.equal(await metric(page, 'train.step.optimizer'), fixed3(b.optimizer));
  for (const k of expected.key_metrics) {
    if (typeof k.value === 'number') assert.equal(await metric(page, `train.key.${k.id}`), fixed3(k.value), k.id);
  }
  assert.equal(await page.getAttribute('#chart-step', 'data-empty'), 'false');
  assert.equal(await page.getAttribute('#chart-train-memory', 'data-empty'), 'false');
  // The compare variants of the scenario.
  assert.equal(await page.isVisible('#train-compare-card'), true);
  assert.equal(await page.$$eval('#train-compare-table tbody tr', (rows) => rows.length), 1 + expected.compare.length);
  assert.equal(await metric(page, 'train.compare.1.step_time_ms'), fixed3(expected.compare[1].step_time_ms));
  assert.match(await page.textContent('#summary'), /Llama-2-7B .* seq 2048/);
  assert.deepEqual(page.errors, []);
});

test('T2.3 draws the pipeline timeline with the CLI\'s bubble numbers', async () => {
  await page.selectOption('#scenario', 'T2.3');
  await waitDone(page, 'T2.3');
  const expected = cli('T2.3');
  const p = expected.pipeline;
  assert.equal(await page.inputValue('#train_pp'), '8');
  assert.equal(await page.inputValue('#train_vstages'), '2');
  assert.equal(await page.inputValue('#train_schedule'), 'interleaved_1f1b');
  assert.equal(await page.inputValue('#train_zero'), '1');
  assert.equal(await page.inputValue('#train_recompute'), 'full');
  assert.equal(await page.inputValue('#nodes'), '8');

  assert.equal(await page.getAttribute('#chart-timeline', 'data-empty'), 'false');
  const canvas = await page.$('#chart-timeline canvas');
  assert.ok(canvas, 'a timeline canvas');
  const box = await canvas.boundingBox();
  assert.ok(box.width > 300 && box.height > 150, `the canvas is drawn (${box.width}×${box.height})`);
  // The engine records every pass of schedules up to 4,096 passes (T2.3 has 1,024), so the
  // timeline draws each forward and backward pass at its simulated start and end.
  assert.match(await canvas.getAttribute('aria-label'), /^Pipeline timeline of 8 ranks, every forward and backward pass/);
  assert.match(await page.textContent('#timeline-note'), /forward or backward pass/);
  assert.equal(p.per_rank[0].passes.length, 2 * p.micro_batches * p.virtual_stages);
  for (const key of ['bubble_pct', 'bubble_formula_pct', 'mean_idle_pct', 'makespan_ms']) {
    assert.equal(await metric(page, `train.pipeline.${key}`), fixed3(p[key]), key);
  }
  assert.equal(await page.$$eval('#train-pipeline-table tbody tr', (rows) => rows.length), 8);
  for (const r of [p.per_rank[0], p.per_rank[7]]) {
    for (const key of ['busy_ms', 'idle_ms', 'step_end_ms']) {
      assert.equal(await metric(page, `train.pipeline.rank${r.rank}.${key}`), fixed3(r[key]), `rank ${r.rank} ${key}`);
    }
  }
  assert.equal(await metric(page, 'train.step.pipeline_bubble'), fixed3(expected.step_breakdown_ms.pipeline_bubble));
  assert.equal(await metric(page, 'train.key.pp_bubble_pct'), fixed3(p.bubble_pct));
  // The chart exports as SVG with its rank labels.
  const svg = await page.evaluate(async () => {
    const { getChartView } = await import('./client/charts/registry.js');
    return getChartView('timeline').toSvg();
  });
  assert.match(svg, /^<svg/);
  assert.match(svg, />Rank 7</);
  assert.deepEqual(page.errors, []);
});

test('tp 3 is located at /training/parallelism/tp and the field is highlighted; LoRA targets too', async () => {
  await page.selectOption('#scenario', 'T3.1');
  await waitDone(page, 'T3.1');
  await setField(page, 'train_tp', 3);
  await page.waitForSelector('#error:not([hidden])');
  assert.equal(await page.textContent('#error-code'), 'constraint_violation');
  assert.equal(await page.textContent('#error-path'), '/training/parallelism/tp');
  assert.match(await page.textContent('#error-message'), /divide.*\(field: TP\)$/);
  assert.equal(await page.getAttribute('#train_tp', 'aria-invalid'), 'true');
  assert.ok(await page.$eval('#train_tp', (e) => e.classList.contains('invalid')));
  assert.equal(await page.$$eval('.invalid', (els) => els.length), 1, 'only the tp field is highlighted');

  await setField(page, 'train_tp', 1);
  await waitDone(page, 'T3.1');
  assert.equal(await page.$$eval('.invalid', (els) => els.length), 0);
  assert.equal(await page.isVisible('#modified'), false, 'back to the preset');

  // A LoRA section with no target: the error points into the checkbox group.
  await page.check('#lora_enabled');
  assert.equal(await page.isEnabled('#lora_rank'), true);
  await page.uncheck('#lora_targets input[value="q"]');
  await page.uncheck('#lora_targets input[value="v"]');
  await page.waitForFunction(() => document.getElementById('error-path').textContent.startsWith('/training/lora/targets')
    && !document.getElementById('error').hidden);
  assert.ok(await page.$eval('#lora_targets', (e) => e.classList.contains('invalid')));
  assert.match(await page.textContent('#error-message'), /\(field: Adapter targets\)$/);
  await page.check('#lora_targets input[value="q"]');
  await waitDone(page, 'T3.1');
  const scenario = scenarioPreset('T3.1');
  scenario.training.lora = { rank: 16, targets: ['q'], base_dtype: 'bf16' };
  assert.equal(await metric(page, 'train.step_time_ms'), fixed3(cli(scenario).metrics.step_time_ms));
  await page.click('#reset');
  await waitDone(page, 'T3.1');
  assert.equal(await page.isChecked('#lora_enabled'), false);
  assert.equal(await page.isEnabled('#lora_rank'), false);
});

test('a share link of an edited training scenario reproduces the same numbers in a fresh browser', async () => {
  const p = await freshPage();
  await p.goto(server.url);
  await waitDone(p, 'I1.1');
  await p.selectOption('#scenario', 'T2.3');
  await waitDone(p, 'T2.3');
  await setField(p, 'train_gbs', 128);
  await p.waitForFunction(() => document.getElementById('run-status').dataset.state === 'done'
    && document.getElementById('summary').textContent.includes('(global 128)'));
  await p.selectOption('#train_schedule', '1f1b');
  await setField(p, 'train_vstages', 1);
  await p.waitForFunction(() => document.getElementById('run-status').dataset.state === 'done'
    && document.getElementById('train-pipeline-summary').textContent.startsWith('1F1B · 8 stages ·'));
  await p.click('#copy-link');
  await p.waitForSelector('#share-box:not([hidden])');
  const link = await p.inputValue('#share-text');
  const decoded = share.decodeLink(link.slice(link.indexOf('#')));
  assert.deepEqual(decoded, {
    preset: 'T2.3',
    overrides: { training: { batch: { global_batch_size: 128 }, parallelism: { virtual_stages: 1 }, schedule: '1f1b' } },
  });
  const shown = await viewMetrics(p, 'training-view', 'train.');
  assert.ok(Object.keys(shown).length > 60, `many numbers (${Object.keys(shown).length})`);

  const fresh = await freshPage();
  await fresh.goto(link);
  await waitDone(fresh, 'T2.3');
  assert.equal(await fresh.inputValue('#train_gbs'), '128');
  assert.equal(await fresh.inputValue('#train_schedule'), '1f1b');
  assert.equal(await fresh.isVisible('#modified'), true);
  assert.deepEqual(await viewMetrics(fresh, 'training-view', 'train.'), shown, 'identical numbers in a fresh browser');

  const scenario = scenarioPreset('T2.3');
  scenario.training.batch.global_batch_size = 128;
  scenario.training.schedule = '1f1b';
  scenario.training.parallelism.virtual_stages = 1;
  const expected = cli(scenario);
  assert.equal(shown['train.step_time_ms'], fixed3(expected.metrics.step_time_ms));
  assert.equal(shown['train.pipeline.bubble_pct'], fixed3(expected.pipeline.bubble_pct));
  assert.deepEqual(fresh.errors, []);
  assert.deepEqual(p.errors, []);

  // The same link as an embed: the training headline and its default charts.
  const embed = await freshPage();
  await embed.goto(`${server.url}?embed=1${link.slice(link.indexOf('#'))}`);
  await embed.waitForSelector('#run-status[data-state="done"]', { state: 'attached' });
  assert.equal(await embed.getAttribute('[data-headline="step_time_ms"]', 'data-value'), fixed3(expected.metrics.step_time_ms));
  assert.match(await embed.textContent('[data-headline="memory_fits"]'), /^Does not fit, /);
  assert.equal(await embed.isVisible('[data-chart="step"]'), true);
  assert.equal(await embed.isVisible('[data-chart="train-memory"]'), true);
  assert.equal(await embed.isVisible('[data-chart="timeline"]'), false);
  assert.equal(await embed.isVisible('#scenario-form'), false);
  await Promise.all([p.context().close(), fresh.context().close(), embed.context().close()]);
});

test('a sweep over data parallelism resizes the cluster; a micro-batch sweep plots memory', async () => {
  await page.selectOption('#scenario', 'T3.1');
  await waitDone(page, 'T3.1');
  await page.click('#tab-sweep');
  await page.waitForSelector('#panel-sweep[data-loaded="true"]');  // the Sweep tab loads on demand
  const fields = await page.$$eval('#sweep-field option', (os) => os.map((o) => o.value));
  assert.ok(fields.includes('train_dp') && fields.includes('train_mbs') && fields.includes('tokens_to_train'), `${fields}`);
  assert.ok(!fields.includes('batch_size'), 'serving fields are not offered for a training scenario');
  await page.selectOption('#sweep-field', 'train_dp');
  await page.selectOption('#sweep-mode', 'list');
  await page.fill('#sweep-list', '1, 2, 4, 16');
  await page.click('#sweep-run');
  await page.waitForSelector('#sweep-status[data-state="done"]');
  assert.equal(await page.$$eval('#sweep-table tbody tr[data-state="ok"]', (rows) => rows.length), 4, await page.textContent('#sweep-table tbody'));
  await page.selectOption('#sweep-metric', 'tokens_per_s_per_gpu');
  const base = scenarioPreset('T3.1');
  const at = (dp, hardware) => {
    const s = structuredClone(base);
    s.training.parallelism = { dp };
    s.hardware = { ...s.hardware, ...hardware };
    return cli(s);
  };
  const row = async (v) => page.$$eval(`#sweep-table tbody tr[data-value="${v}"] td`, (tds) => tds.map((t) => t.textContent));
  assert.equal((await row(4))[0], fixed3(at(4, { gpus_per_node: 4, intra_node: 'nvlink3-nvswitch' }).metrics.tokens_per_s_per_gpu));
  // Two nodes: the network is the GPU preset's own (its default_inter_node), as the engine's searches pick it.
  const gpuPreset = cliPresets('gpus').find((g) => g.id === base.hardware.gpu);
  assert.ok(gpuPreset.default_inter_node, base.hardware.gpu);
  assert.equal((await row(16))[0], fixed3(at(16, { gpus_per_node: 8, nodes: 2, intra_node: 'nvlink3-nvswitch', inter_node: gpuPreset.default_inter_node }).metrics.tokens_per_s_per_gpu));

  // Micro-batch sweep: memory per GPU is a metric to plot.
  await page.selectOption('#sweep-field', 'train_mbs');
  await page.fill('#sweep-list', '1, 2, 4');
  await page.click('#sweep-run');
  await page.waitForSelector('#sweep-status[data-state="done"]');
  await page.selectOption('#sweep-metric', 'memory_per_gpu_GiB');
  const s = structuredClone(base);
  s.training.batch.micro_batch_size = 4;
  assert.equal((await row(4))[0], fixed3(cli(s).memory_per_gpu.total_GiB));
  assert.match(await page.getAttribute('#chart-sweep canvas', 'aria-label'), /Memory per GPU \(GiB\) for 3 values of Micro-batch/);
  await page.click('#tab-result');
  assert.deepEqual(page.errors, []);
});

test('compare pins a training scenario and highlights what a schedule change does', async () => {
  await page.selectOption('#scenario', 'T2.3');
  await waitDone(page, 'T2.3');
  await page.click('#pin');
  await page.click('#tab-result');
  await page.selectOption('#train_schedule', 'gpipe');
  await setField(page, 'train_vstages', 1);
  await page.waitForFunction(() => document.getElementById('compare-b-label').textContent.includes('gpipe'));
  await page.click('#tab-compare');
  const changed = await page.$$eval('#compare-inputs tr.diff', (rows) => rows.map((r) => r.dataset.path));
  assert.deepEqual(changed.sort(), ['/training/parallelism/virtual_stages', '/training/schedule']);
  const a = cli('T2.3');
  const bScenario = scenarioPreset('T2.3');
  bScenario.training.schedule = 'gpipe';
  bScenario.training.parallelism.virtual_stages = 1;
  const b = cli(bScenario);
  const cells = await page.$$eval('#compare-metrics tr[data-key="metrics.step_time_ms"] td', (tds) => tds.map((t) => t.textContent));
  assert.equal(cells[0], fixed3(a.metrics.step_time_ms));
  assert.equal(cells[1], fixed3(b.metrics.step_time_ms));
  assert.ok(await page.$('#compare-metrics tr.diff[data-key="pipeline.bubble_pct"]'));
  await page.click('#compare-clear');
  await page.click('#tab-result');
  assert.deepEqual(page.errors, []);
});

test('every scenario preset reads back from the form unchanged; serving scenarios get the serving form back', async () => {
  const r = spawnSync(cliPath, ['presets', 'scenarios', '--format', 'json'], { encoding: 'utf8' });
  const presets = JSON.parse(r.stdout);
  assert.ok(presets.filter((s) => s.training).length >= 20, 'the T presets are training scenarios');
  const changed = await page.evaluate(async (list) => {
    const form = await import('./client/form.js');
    const out = [];
    for (const s of list) {
      form.fill(s);
      if (JSON.stringify(form.read(s)) !== JSON.stringify(s)) out.push(s.id);
    }
    return out;
  }, presets);
  assert.deepEqual(changed, [], 'an untouched form gives back exactly the preset (share links hold only edits)');

  await page.selectOption('#scenario', 'I1.4');
  await waitDone(page, 'I1.4');
  assert.equal(await page.isVisible('#tp'), true);
  assert.equal(await page.isVisible('#kv_cache'), true);
  assert.equal(await page.isVisible('#train_dp'), false);
  assert.equal(await page.isVisible('#latency-view'), true);
  assert.equal(await page.isVisible('#training-view'), false);
  assert.equal(await metric(page, 'tpot_ms'), fixed3(cli('I1.4').metrics.tpot_ms));
  assert.equal(await page.isVisible('#modified'), false);
  assert.deepEqual(page.errors, []);
});
