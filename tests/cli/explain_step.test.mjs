// explain-step through the real CLI: one large-batch decode step taken apart
// by mechanism (issue 38, point 2), and its kernels line taken apart by
// kernel group.
//   - The mechanisms add up to the step; the kernel groups add up to the
//     kernels line; so do the operators listed under `kernels`.
//   - A DeepSeek-R1 attention-DP + EP step (the report-e2e row's layout) has
//     routed-expert GEMMs, decode attention and all-to-alls; a dense Llama
//     step has neither experts nor all-to-alls.
//   - Every line and every group names its source.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

function explain(args) {
  const r = spawnSync(cliPath, ['explain-step', ...args, '--format', 'json'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

function scenarioFile(obj) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'explain-')), 's.json');
  fs.writeFileSync(file, JSON.stringify(obj));
  return file;
}

const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

function checkSums(out) {
  close(sum(out.mechanisms.map((m) => m.time_us)), out.step_time_us, 'mechanisms vs step');
  const kernels = out.mechanisms[0];
  assert.match(kernels.name, /^kernels/);
  close(sum(kernels.parts.map((g) => g.time_us)), kernels.time_us, 'kernel groups vs kernels line');
  close(sum(out.kernels.map((k) => k.time_us)), kernels.time_us, 'operators vs kernels line');
  for (const m of [...out.mechanisms, ...kernels.parts]) assert.ok(m.source.length > 10, `${m.name} has no source`);
}

// docs/cost-model.md's table of large-batch steps quotes explain-step: the
// row that starts with `rowStart` must give this step's time (ms, one
// decimal) and only shares (one decimal) that its mechanisms and kernel
// groups have now (issue 40, signposts: a stale figure fails).
function docRowHolds(rowStart, out) {
  const doc = fs.readFileSync(path.join(repoRoot, 'docs', 'cost-model.md'), 'utf8').split('\n');
  const row = doc.find((l) => l.startsWith(rowStart));
  assert.ok(row, `docs/cost-model.md has the row "${rowStart}"`);
  const step = out.step_time_us;
  assert.match(row, new RegExp(`: ${(step / 1000).toFixed(1).replace('.', '\\.')} ms \\|`), `step time in: ${row}`);
  const shares = new Set([...out.mechanisms, ...out.mechanisms[0].parts].map((m) => ((100 * m.time_us) / step).toFixed(1)));
  const quoted = [...row.matchAll(/(\d+\.\d)%/g)].map((m) => m[1]);
  assert.ok(quoted.length >= 5, `shares in: ${row}`);
  for (const q of quoted) assert.ok(shares.has(q), `docs/cost-model.md quotes ${q}%, which explain-step no longer prints (${[...shares].join(', ')}):\n${row}`);
}

const dsr1 = JSON.parse(fs.readFileSync(path.join(repoRoot, 'presets/validation/E.R3-dsr1-8xh200-maxthr.json'), 'utf8'));

test('explain-step: the DeepSeek-R1 attention-DP + EP8 step adds up, by mechanism and by kernel group', () => {
  const out = explain([scenarioFile(dsr1.scenario), '--batch', '128', '--kv-len', '2048']);
  checkSums(out);
  const groups = Object.fromEntries(out.mechanisms[0].parts.map((g) => [g.name, g]));
  assert.ok(groups['routed-expert grouped GEMMs'].share > 0.3, 'routed experts dominate the step');
  assert.ok(groups['decode attention'].share > 0.1);
  assert.ok(groups['shared-expert GEMMs'].time_us > 0);
  assert.ok(out.mechanisms.some((m) => m.name === 'expert-parallel all-to-all' && m.time_us > 0));
  docRowHolds('| DeepSeek-R1 fp8, 8× H200', out);
  const up = out.kernels.find((k) => k.name === 'moe_expert_up_proj');
  assert.equal(up.family, 'gemm');
  assert.ok(up.achieved_GBps > 0);
});

// --prompt-tokens: the mixed step of an in-flight-batching scheduler (the
// DeepSeek-R1 row admits one 1,024-token prompt beside 127 decodes). It is
// never cheaper than the decodes alone, runs without CUDA graphs (no padding,
// eager launches), prices prompt attention, and adds up like a decode step.
test('explain-step: a mixed step with one prompt costs at least its decodes, eagerly', () => {
  const file = scenarioFile(dsr1.scenario);
  const decode = explain([file, '--batch', '127', '--kv-len', '2048']);
  const mixed = explain([file, '--batch', '127', '--kv-len', '2048', '--prompt-tokens', '1024']);
  checkSums(mixed);
  assert.equal(decode.prompt_tokens, 0);
  assert.equal(mixed.prompt_tokens, 1024);
  assert.equal(mixed.batch_as_run, 127, 'a mixed step is not padded to a graph size');
  assert.ok(mixed.step_time_us > decode.step_time_us, `${mixed.step_time_us} vs ${decode.step_time_us}`);
  assert.ok(mixed.gpu_time_us > decode.gpu_time_us);
  const host = (out) => out.mechanisms.find((m) => m.name.startsWith('host:')).name;
  assert.match(host(decode), /graph replay/);
  assert.match(host(mixed), /eager/);
  assert.ok(mixed.mechanisms[0].parts.some((g) => g.name === 'prefill attention' && g.time_us > 0));
  assert.ok(!decode.mechanisms[0].parts.some((g) => g.name === 'prefill attention'));
});

test('explain-step: a dense Llama step has no expert or all-to-all lines', () => {
  const out = explain(['--preset', 'I2.2', '--batch', '256', '--kv-len', '2048']);
  checkSums(out);
  const names = out.mechanisms[0].parts.map((g) => g.name);
  assert.ok(!names.includes('routed-expert grouped GEMMs'));
  assert.ok(names.includes('decode attention'));
  assert.ok(!out.mechanisms.some((m) => /all-to-all/.test(m.name)));
});

test('explain-step: Llama-3-70B fp8 on one H200 is the dense row docs/cost-model.md quotes', () => {
  const i22 = JSON.parse(fs.readFileSync(path.join(repoRoot, 'presets/scenarios/I2.2.json'), 'utf8'));
  const scenario = { ...i22, model: 'llama-3-70b', hardware: { ...i22.hardware, gpu: 'h200' },
    precision: { weights: 'fp8', activations: 'fp8', kv_cache: 'fp8' }, cost_model: { ...i22.cost_model, software_stack: 'vllm-v1-like' } };
  const out = explain([scenarioFile(scenario), '--batch', '256', '--kv-len', '2048']);
  checkSums(out);
  docRowHolds('| Llama-3-70B fp8 on one H200', out);
  // vLLM V1 runs FlashAttention-3's paged decode on Hopper: the line names the kernel it is priced as.
  const decode = out.mechanisms[0].parts.find((g) => g.name === 'decode attention');
  assert.match(decode.source, /presets\/decode_kernels\/fa3-paged-hopper\.json/);
  const trtllm = explain([scenarioFile({ ...scenario, cost_model: { ...scenario.cost_model, software_stack: 'trtllm-like' } }),
    '--batch', '256', '--kv-len', '2048']);
  const trtDecode = trtllm.mechanisms[0].parts.find((g) => g.name === 'decode attention');
  assert.doesNotMatch(trtDecode.source, /decode_kernels/);
  // 256 sequences of 2,049 keys (2,048 cached and the new token): the grid's 1.54 at 2k, a hair toward 4k's 1.45.
  const ratio = decode.time_us / trtDecode.time_us;
  assert.ok(ratio > 1.535 && ratio <= 1.54, `FA3 over the fastest kernel at 256 x 2k: ${ratio}`);
});

test('explain-step: an MI300X step names its AMD kernel-level sources and says where it falls back', () => {
  const out = explain(['examples/llama-3.1-405b-8x-mi300x-xgmi.json', '--batch', '256', '--kv-len', '2048']);
  checkSums(out);
  assert.equal(out.gpu, 'mi300x');
  const groups = Object.fromEntries(out.mechanisms[0].parts.map((g) => [g.name, g]));
  const gemms = groups['other GEMMs (projections, lm_head, dense MLP)'];
  assert.match(gemms.source, /hipBLASLt/);
  assert.doesNotMatch(gemms.source, /DeepGEMM/);
  const decode = groups['decode attention'];
  // The MI325X's cited unified-attention level, the same gfx942 die's fraction of HBM peak.
  assert.match(decode.source, /level from mi325x.*ROCm\/aiter pull request #5415/);
  assert.doesNotMatch(decode.source, /generic/);
  assert.doesNotMatch(decode.source, /FlashMLA/);
  assert.match(groups['other collectives (tensor-parallel all-reduce)'].source, /xgmi3-mesh8.*rccl/i);
  const host = out.mechanisms.find((m) => m.name.startsWith('host'));
  assert.match(host.source, /ROCm/);
  docRowHolds('| Llama-3.1-405B fp8, TP8 on 8× MI300X', out);
});

test('explain-step: an MI355X step prices decode attention from its cited AITER paged-decode figure', () => {
  const base = JSON.parse(fs.readFileSync(path.join(repoRoot, 'examples/llama-3.1-405b-8x-mi300x-xgmi.json'), 'utf8'));
  const scenario = { ...base, id: 'llama-3.1-405b-8x-mi355x', hardware: { ...base.hardware, gpu: 'mi355x', intra_node: 'xgmi4-mesh8' } };
  const out = explain([scenarioFile(scenario), '--batch', '64', '--kv-len', '8192']);
  checkSums(out);
  const decode = out.mechanisms[0].parts.find((g) => g.name === 'decode attention');
  assert.match(decode.source, /paged decode-attention bandwidth.*facebookexperimental\/triton pull request #2778/);
  assert.match(decode.source, /level from mi355x/);  // its own figure, not CDNA 3's
  assert.doesNotMatch(decode.source, /generic/);
});

test('explain-step: an NVIDIA step cites no kernel family', () => {
  const out = explain(['--preset', 'I2.2', '--batch', '256', '--kv-len', '2048']);
  for (const m of [...out.mechanisms, ...out.mechanisms[0].parts]) assert.doesNotMatch(m.source, /kernel_families/);
});

// Two-batch overlap (docs/serving.md): the step as two micro-batches is a
// line of its own, the lines still add up to the step, and its source gives
// the all-to-all hidden. On the DeepSeek-R1 row's layout at 128 sequences a
// rank the decode is memory-bound: the halves re-read the weights, and the
// step is slower than as one batch though its all-to-all is all but hidden.
test('explain-step: two-batch overlap is a line of its own and the lines add up', () => {
  const scenario = structuredClone(dsr1.scenario);
  const plain = explain([scenarioFile(scenario), '--batch', '128', '--kv-len', '2048']);
  scenario.serving.moe.two_batch_overlap = true;
  const out = explain([scenarioFile(scenario), '--batch', '128', '--kv-len', '2048']);
  checkSums(out);
  const line = out.mechanisms.find((m) => m.name.startsWith('two-batch overlap'));
  assert.ok(line, 'a two-batch overlap line');
  assert.match(line.name, /micro-batches of 64 and 64 sequences/);
  assert.match(line.source, /hidden behind the other micro-batch's stages/);
  assert.ok(line.time_us > 0);
  close(out.step_time_us, plain.step_time_us + line.time_us, 'overlapped step vs one batch + the line');
  // Every other line is the batch as one, as without the overlap.
  for (const m of plain.mechanisms) close(out.mechanisms.find((o) => o.name === m.name).time_us, m.time_us, m.name);
});
