// Your own model and GPU: a bare Hugging Face config.json pasted into the page
// runs and equals the CLI on the same scenario; a typed hub id is explained; a
// custom GPU runs on the cross-generation tier and says so; both come back
// from a share link in a fresh browser. Needs `bash .ci/build`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { browserSuite, newPage, cli, scenarioPreset, fixed3, waitDone, metric, repoDir as repoRoot, cliPath, PAGE_GUARD_MS } from './harness.mjs';

// Llama-3.1-8B's config.json as Hugging Face publishes it (keys the engine does not use included).
const HF_CONFIG = {
  architectures: ['LlamaForCausalLM'], attention_bias: false, attention_dropout: 0.0, bos_token_id: 128000,
  eos_token_id: 128001, hidden_act: 'silu', hidden_size: 4096, initializer_range: 0.02, intermediate_size: 14336,
  max_position_embeddings: 131072, mlp_bias: false, model_type: 'llama', num_attention_heads: 32,
  num_hidden_layers: 32, num_key_value_heads: 8, pretraining_tp: 1, rms_norm_eps: 1e-05,
  rope_scaling: { factor: 8.0, low_freq_factor: 1.0, high_freq_factor: 4.0, original_max_position_embeddings: 8192, rope_type: 'llama3' },
  rope_theta: 500000.0, tie_word_embeddings: false, torch_dtype: 'bfloat16', transformers_version: '4.43.0.dev0',
  use_cache: true, vocab_size: 128256,
};

const suite = browserSuite();

const kvAt = (m, k) => Math.round(m.kv_cache.at[k].bytes_per_token).toLocaleString('en-US');
// The page's billions (custom.js fmtB): 3 significant digits or so.
const fmtB = (v) => `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} B`;

async function openI11() {
  const page = await newPage(suite.browser);
  await page.goto(suite.server.url);
  await page.selectOption('#scenario', 'I1.1');
  await waitDone(page, 'I1.1');
  return page;
}

/** Waits for a finished run whose scenario differs from the one on screen before `action`. */
async function runAfter(page, action) {
  const n = await page.evaluate(() => window.sightlinePerf.runs);
  await action();
  await page.waitForFunction((k) => window.sightlinePerf.runs > k, n, { timeout: PAGE_GUARD_MS });
  await waitDone(page);
}

/** Opens the page's current share link in a fresh browser context. */
async function reopen(page) {
  const url = page.url();
  assert.match(url, /#v1=/);
  const fresh = await newPage(suite.browser);
  await fresh.goto(url);
  await waitDone(fresh);
  return fresh;
}

test('a bare Hugging Face config.json pasted runs, equals the CLI, and comes back from a share link', async () => {
  const page = await openI11();
  await page.selectOption('#model', '__hf_config__');
  assert.equal(await page.isVisible('#hf-panel'), true);
  await runAfter(page, async () => {
    await page.fill('#hf_config', JSON.stringify(HF_CONFIG, null, 2));
    await page.dispatchEvent('#hf_config', 'change');
  });
  assert.equal(await page.isVisible('#error'), false);
  assert.match(await page.textContent('#hf-note'), /torch_dtype bfloat16/);
  const scenario = scenarioPreset('I1.1');
  scenario.model = { hf_config: HF_CONFIG };
  const expected = cli(scenario);
  assert.equal(await metric(page, 'ttft_ms'), fixed3(expected.metrics.ttft_ms));
  assert.equal(await metric(page, 'weights_GiB'), fixed3(expected.memory_per_gpu.weights_GiB));

  const fresh = await reopen(page);
  assert.equal(await fresh.inputValue('#model'), '__hf_config__');
  assert.deepEqual(JSON.parse(await fresh.inputValue('#hf_config')), HF_CONFIG);
  assert.equal(await metric(fresh, 'ttft_ms'), fixed3(expected.metrics.ttft_ms));
  assert.deepEqual([...page.errors, ...fresh.errors], []);
  await Promise.all([page.close(), fresh.close()]);
});

test('each published config.json pasted as published: the understood panel says what the engine read, and it runs', async () => {
  // The repository's copies (SOURCES.md there), a superset of the shared set; the ModelOpt
  // side file (hf_quant_config.json) is not a config.json, and the page takes none.
  const dir = path.join(repoRoot, 'tests', 'data', 'hf', 'published');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json') && !f.endsWith('_hf_quant.json'));
  assert.ok(files.length >= 17, files.join(', '));
  const page = await openI11();
  // One GPU with room for most of them (288 GiB), so most paste-and-run to a result.
  const gpu = (await import('./harness.mjs')).cliPresets('gpus').find((g) => g.id === 'b300');
  await runAfter(page, () => page.selectOption('#gpu', gpu.id));
  await page.selectOption('#model', '__hf_config__');
  let ran = 0;
  for (const file of files) {
    const text = readFileSync(path.join(dir, file), 'utf8');
    const m = inspect(path.join(dir, file));
    const started = await page.evaluate(() => window.sightlinePerf.started);
    await page.fill('#hf_config', text);
    await page.dispatchEvent('#hf_config', 'change');
    // Family, layers by kind, experts, parameters, KV bytes/token and weights: the engine's own reading.
    const want = {
      Family: `Family: ${m.family} (${m.layers} layers)`,
      Layers: `Layers: ${m.layers_by_kind.map((g) => `${g.count} × ${g.mixer}${g.attention ? ` (${g.attention})` : ''} + ${g.ffn}`).join(', ')}`,
      Experts: m.experts ? `Experts: ${m.experts.routed} routed, ${m.experts.shared} shared, top-${m.experts.top_k}` : undefined,
      Parameters: `Parameters: ${fmtB(m.params.total_B)} total, ${fmtB(m.params.active_B)} active, embedding ${fmtB(m.params.embedding_B)} (not in active)`,
      'KV bytes/token': `KV bytes/token: ${['4K', '32K', '128K'].map((k) => `${k}: ${kvAt(m, k)}`).join(', ')} (${m.kv_cache.dtype}, one GPU)`,
      Weights: `Weights: ${m.weights.dtype}${m.weights.from_config ? ` — ${m.weights.from_config}` : ''}`,
      // What was set aside and why, as the CLI prints it.
      'Keys without effect': m.ignored_keys.length ? `Keys without effect: ${(m.ignored_why.length ? m.ignored_why : m.ignored_keys).join('; ')}` : undefined,
    };
    // Two configs in a row may share a family: wait for this one's panel, then compare item by item.
    await page.waitForFunction((w) => Object.entries(w).every(([k, v]) => {
      const p = document.querySelector(`#hf-understood [data-item="${k}"]`);
      return v === null ? !p : p && p.textContent === v;
    }), Object.fromEntries(Object.entries(want).map(([k, v]) => [k, v ?? null])), { timeout: PAGE_GUARD_MS }).catch(() => {});
    const items = await page.$$eval('#hf-understood [data-item]', (ps) => Object.fromEntries(ps.map((p) => [p.dataset.item, p.textContent])));
    for (const [k, v] of Object.entries(want)) assert.equal(items[k], v, `${file}: ${k}`);
    // Every warning is shown in the list, and counted on the summary line.
    const warnings = await page.$$eval('#hf-understood [data-item="Warning"]', (ps) => ps.map((p) => p.textContent));
    assert.deepEqual(warnings, m.warnings.map((w) => `Warning: ${w}`), `${file}: warnings`);
    if (m.warnings.length) assert.match(await page.textContent('#understood-summary'), new RegExp(`, ${m.warnings.length} warnings?$`), file);
    // It runs: a result where the weights leave most of the GPU free, the engine's located
    // does_not_fit where they alone exceed it (in between, either).
    await page.waitForFunction((n) => window.sightlinePerf.started > n, started, { timeout: PAGE_GUARD_MS });
    await page.waitForSelector('#run-status[data-state="done"], #error:not([hidden])', { timeout: PAGE_GUARD_MS });
    const failed = !(await page.isHidden('#error'));
    const code = failed ? await page.textContent('#error-code') : null;
    if (m.weights.GiB < 0.5 * gpu.memory_GiB) assert.equal(code, null, `${file}: ${code} ${failed ? await page.textContent('#error-message') : ''}`);
    else if (m.weights.GiB > gpu.memory_GiB) assert.equal(code, 'does_not_fit', file);
    else if (failed) assert.equal(code, 'does_not_fit', file);
    if (!failed) {
      assert.ok(Number(await metric(page, 'tpot_ms')) > 0, file);
      ran++;
    }
  }
  assert.ok(ran >= files.length / 2, `${ran} of ${files.length} ran to a result`);
  assert.deepEqual(page.errors, []);
  await page.close();
});

/** `sightline inspect-model` of a model (a preset id, a model object, or a config.json file's path). */
function inspect(model) {
  let file = model;
  if (typeof model !== 'string' || !model.endsWith('.json')) {
    file = path.join(mkdtempSync(path.join(tmpdir(), 'inspect-')), 'model.json');
    writeFileSync(file, JSON.stringify(model));
  }
  const r = spawnSync(cliPath, ['inspect-model', file, '--json'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** Waits until the understood panel names `name` (the summary line), then returns its items by label. */
async function understood(page, name) {
  await page.waitForFunction((n) => !document.getElementById('understood').hidden
    && document.getElementById('understood-summary').textContent.startsWith(`Understood: ${n},`), name, { timeout: PAGE_GUARD_MS });
  return page.$$eval('#hf-understood [data-item]', (ps) => Object.fromEntries(ps.map((p) => [p.dataset.item, p.textContent])));
}


test('what the engine understood follows the model in every mode: a preset change and a pasted config.json', async () => {
  // Latency: the preset's model.
  const page = await openI11();
  const llama = inspect(scenarioPreset('I1.1').model);
  let items = await understood(page, llama.name);
  assert.equal(await page.getAttribute('#understood', 'open'), null, "a preset's panel starts folded");
  assert.equal(items.Family, `Family: given as an architecture (${llama.layers} layers)`);
  assert.ok(items['KV bytes/token'].includes(`4K: ${kvAt(llama, '4K')}`), items['KV bytes/token']);
  assert.ok(items.Parameters.includes(`embedding ${llama.params.embedding_B.toFixed(2)} B (not in active)`), items.Parameters);

  // Training: another preset brings its own model.
  await page.selectOption('#scenario', 'T2.3');
  await waitDone(page, 'T2.3');
  const gpt3 = inspect(scenarioPreset('T2.3').model);
  items = await understood(page, gpt3.name);
  assert.equal(items.Heads, `Heads: ${gpt3.heads.query} query / ${gpt3.heads.kv} KV (${gpt3.heads.kind}), head dim ${gpt3.heads.head_dim}`);
  assert.ok(items.Parameters.startsWith(`Parameters: ${gpt3.params.total_B.toFixed(0)} B total`), items.Parameters);

  // A config.json pasted in training mode: its family, experts and weights, the list open.
  const file = path.join(repoRoot, 'tests', 'data', 'hf', 'published', 'Qwen--Qwen3-30B-A3B.json');
  const qwen = inspect(file);
  await page.selectOption('#model', '__hf_config__');
  await page.fill('#hf_config', readFileSync(file, 'utf8'));
  await page.dispatchEvent('#hf_config', 'change');
  items = await understood(page, qwen.name || qwen.family);
  assert.equal(await page.getAttribute('#understood', 'open'), '', 'a pasted config opens the list');
  assert.equal(items.Family, `Family: ${qwen.family} (${qwen.layers} layers)`);
  assert.equal(items.Experts, `Experts: ${qwen.experts.routed} routed, ${qwen.experts.shared} shared, top-${qwen.experts.top_k}`);
  assert.ok(items['KV bytes/token'].includes(`128K: ${kvAt(qwen, '128K')}`), items['KV bytes/token']);
  assert.ok(items.Weights.startsWith(`Weights: ${qwen.weights.dtype}`), items.Weights);
  assert.match(await page.textContent('#understood-summary'), new RegExp(`\\(${qwen.params.active_B.toFixed(2)} B active\\)`));
  // A typed hub id names the model (the file does not name itself): the panel and the result say it.
  await page.fill('#hf_id', 'Qwen/Qwen3-30B-A3B');
  await page.dispatchEvent('#hf_id', 'change');
  items = await understood(page, 'Qwen/Qwen3-30B-A3B');
  assert.equal(items.Model, 'Model: Qwen/Qwen3-30B-A3B');
  await page.waitForFunction(() => document.getElementById('run-status').dataset.state === 'done'
    && document.getElementById('summary').textContent.startsWith('Qwen/Qwen3-30B-A3B ('));

  // Serving simulation: back to a preset, back to its model.
  await page.selectOption('#scenario', 'I2.1');
  await waitDone(page, 'I2.1');
  await understood(page, llama.name);

  // The Search tab has its own model picker and its own panel, following it.
  if (await page.isVisible('#mode-search')) {
    await page.click('#mode-search');
    await page.selectOption('#q-model', 'llama-3-70b');
    const l70 = inspect('llama-3-70b');
    await page.waitForFunction((n) => !document.getElementById('q-understood').hidden
      && document.getElementById('q-understood-summary').textContent.startsWith(`Understood: ${n},`), l70.name, { timeout: PAGE_GUARD_MS });
    const q = await page.$$eval('#q-hf-understood [data-item]', (ps) => Object.fromEntries(ps.map((p) => [p.dataset.item, p.textContent])));
    assert.equal(q.Heads, `Heads: ${l70.heads.query} query / ${l70.heads.kv} KV (${l70.heads.kind}), head dim ${l70.heads.head_dim}`);
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a typed hub id is explained (the page cannot fetch it) and bad JSON is a located error', async () => {
  const page = await openI11();
  await page.selectOption('#model', '__hf_config__');
  await page.fill('#hf_id', 'meta-llama/Llama-3.1-8B');
  assert.match(await page.textContent('#hf-id-note'), /cannot download from the Hugging Face hub/);
  assert.equal(await page.getAttribute('#hf-id-note a', 'href'), 'https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json');
  await page.waitForSelector('#error:not([hidden])');
  assert.equal(await page.textContent('#error-path'), '/model/hf_config');
  assert.match(await page.textContent('#error-message'), /cannot fetch meta-llama\/Llama-3\.1-8B/);
  await page.fill('#hf_config', '{"architectures": ["LlamaForCausalLM"], oops');
  await page.dispatchEvent('#hf_config', 'change');
  await page.waitForFunction(() => document.getElementById('error-code').textContent === 'invalid_json');
  assert.equal(await page.getAttribute('#hf_config', 'aria-invalid'), 'true');
  // Python's Infinity literal (published in Nemotron-H's config) is read, as the engine reads it:
  // no invalid_json. On a Llama config the Mamba key that carries it is not understood, so the
  // engine refuses it by name (the importer never guesses, issue 35).
  const withInfinity = JSON.stringify({ ...HF_CONFIG, time_step_limit: [0, 1] }).replace('[0,1]', '[0.0, Infinity]');
  await page.fill('#hf_config', withInfinity);
  await page.dispatchEvent('#hf_config', 'change');
  await page.waitForFunction(() => document.getElementById('error-path').textContent === '/model/hf_config/time_step_limit');
  assert.equal(await page.textContent('#error-code'), 'not_implemented');
  // A config with an extra key the importer does not understand, whose name suggests structure, is
  // refused naming that key (issue 35; the same refusal natively in tests/cli/inspect_model.test.mjs
  // and in wasm in tests/wasm/engine_regressions.test.mjs), never read as the Llama it otherwise is.
  await page.fill('#hf_config', JSON.stringify({ ...HF_CONFIG, num_widget_experts: 64 }));
  await page.dispatchEvent('#hf_config', 'change');
  await page.waitForFunction(() => document.getElementById('error-path').textContent === '/model/hf_config/num_widget_experts');
  assert.equal(await page.textContent('#error-code'), 'not_implemented');
  assert.match(await page.textContent('#error-message'), /num_widget_experts/);
  // Past the stated limit (256 KiB: a config.json is a few KiB): refused with a message saying so,
  // pasted or uploaded, never ignored.
  const huge = JSON.stringify({ ...HF_CONFIG, padding: 'x'.repeat(300 * 1024) });
  await page.fill('#hf_config', huge);
  await page.dispatchEvent('#hf_config', 'change');
  await page.waitForFunction(() => /longer than 256 KiB/.test(document.getElementById('error-message').textContent));
  assert.equal(await page.textContent('#error-path'), '/model/hf_config');
  await page.setInputFiles('#hf-file', { name: 'huge-config.json', mimeType: 'application/json', buffer: Buffer.from(huge) });
  await page.waitForFunction(() => /huge-config\.json is larger than a config\.json can be \(256 KiB\)/.test(document.getElementById('hf-note').textContent));
  // A config the engine cannot read: its own located error.
  await page.fill('#hf_config', '{"hidden_size": 4096}');
  await page.dispatchEvent('#hf_config', 'change');
  await page.waitForFunction(() => document.getElementById('error-path').textContent.startsWith('/model/hf_config/'));
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('a custom GPU runs on the cross-generation tier, says so, and comes back from a share link', async () => {
  const page = await openI11();
  await page.selectOption('#gpu', '__custom_gpu__');
  assert.equal(await page.isVisible('#gpu-panel'), true);
  assert.match(await page.textContent('#gpu-panel .note'), /cross-generation tier/);
  // Starts from the preset it replaces (A100 80G): edit two numbers.
  assert.equal(await page.inputValue('#cg_bandwidth'), '2039');
  await runAfter(page, async () => {
    await page.fill('#cg_bf16', '500');
    await page.fill('#cg_fp16', '500');
    await page.fill('#cg_bandwidth', '4000');
    await page.dispatchEvent('#cg_bandwidth', 'change');
  });
  assert.match(await page.textContent('#accuracy-badge'), /cross-generation/);
  const { id, source, name, calibration, ...spec } = (await import('./harness.mjs')).cliPresets('gpus').find((g) => g.id === 'a100-80g-sxm');
  const scenario = scenarioPreset('I1.1');
  scenario.hardware.gpu = { ...spec, id: 'custom-gpu', name: `Custom (from ${name})`, hbm_bandwidth_GBps: 4000, peak_tflops: { ...spec.peak_tflops, bf16: 500, fp16: 500 } };
  const expected = cli(scenario);
  assert.equal(expected.cost_tier, 'cross-generation');
  assert.equal(await metric(page, 'tpot_ms'), fixed3(expected.metrics.tpot_ms));

  const fresh = await reopen(page);
  assert.equal(await fresh.inputValue('#gpu'), '__custom_gpu__');
  assert.equal(await fresh.inputValue('#cg_bandwidth'), '4000');
  assert.equal(await metric(fresh, 'tpot_ms'), fixed3(expected.metrics.tpot_ms));
  // A missing number is located at its input.
  await fresh.fill('#cg_tdp', '');
  await fresh.dispatchEvent('#cg_tdp', 'change');
  await fresh.waitForSelector('#error:not([hidden])');
  assert.equal(await fresh.textContent('#error-path'), '/hardware/gpu/tdp_W');
  assert.equal(await fresh.getAttribute('#cg_tdp', 'aria-invalid'), 'true');
  assert.deepEqual([...page.errors, ...fresh.errors], []);
  await Promise.all([page.close(), fresh.close()]);
});

test("a quantized checkpoint runs in its own precision: gpt-oss-120b on one H100, DeepSeek-V3 on 8 H200s", async () => {
  // Issue 39: the panel said "mxfp4 weights" above "weights need 217.6 GiB per
  // GPU": the scenario's bf16 overrode the config's quantization. A pasted
  // quantized config now sets Weights to "From the model"; the engine takes the config's.
  const cases = [
    { file: 'openai--gpt-oss-120b.json', gpu: 'h100-sxm', gpus: 1, link: '', weights: 'mxfp4', method: 'mxfp4' },
    { file: 'deepseek-ai--DeepSeek-V3.json', gpu: 'h200', gpus: 8, link: 'nvlink4-nvswitch', weights: 'fp8', method: 'fp8' },
  ];
  for (const c of cases) {
    const page = await openI11();
    await page.selectOption('#gpu', c.gpu);
    if (c.gpus > 1) {
      await page.selectOption('#intra_node', c.link);
      await page.fill('#gpus_per_node', String(c.gpus));
      await page.dispatchEvent('#gpus_per_node', 'change');
      await page.fill('#tp', String(c.gpus));
      await page.dispatchEvent('#tp', 'change');
    }
    const text = readFileSync(path.join(repoRoot, '..', 'shared', 'data', 'hf-configs', c.file), 'utf8');
    await page.selectOption('#model', '__hf_config__');
    await runAfter(page, async () => {
      await page.fill('#hf_config', text);
      await page.dispatchEvent('#hf_config', 'change');
    });
    assert.equal(await page.inputValue('#weights'), '', `${c.file}: Weights shows the config's own`);
    assert.equal(await page.$eval('#weights', (w) => w.options[w.selectedIndex].text), `From the config (${c.method})`);
    assert.match(await page.textContent('#hf-note'), /Weights follow it/);
    assert.equal(await page.isVisible('#error'), false, `${c.file}: ${await page.textContent('#error')}`);
    const scenario = scenarioPreset('I1.1');
    scenario.model = { hf_config: JSON.parse(text) };
    scenario.hardware = c.gpus > 1 ? { gpu: c.gpu, gpus_per_node: c.gpus, intra_node: c.link } : { gpu: c.gpu, gpus_per_node: 1 };
    scenario.serving.parallelism.tp = c.gpus;
    delete scenario.precision.weights;
    const expected = cli(scenario);
    assert.equal(expected.deployment.weights, c.weights);
    assert.ok(expected.memory_per_gpu.weights_GiB < 0.8 * (c.gpu === 'h200' ? 141 : 80), `${c.file} fits: ${expected.memory_per_gpu.weights_GiB} GiB`);
    assert.equal(await metric(page, 'weights_GiB'), fixed3(expected.memory_per_gpu.weights_GiB));
    // Choosing a dtype overrides the config again: in bf16 neither fits these GPUs any more.
    await page.selectOption('#weights', 'bf16');
    await page.dispatchEvent('#weights', 'change');
    await page.waitForSelector('#error:not([hidden])');
    assert.match(await page.textContent('#error'), /GiB/, `${c.file}: the bf16 weights are refused for memory`);
    await page.close();
  }
});
