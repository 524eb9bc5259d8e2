// The hardware catalogue's examples run as shipped through the real CLI
// (the NVL72 wide-EP one is run by wide_ep.test.mjs), with the properties
// each exists to show:
//   - Llama-3.1-405B on 8 MI300X over xGMI is priced by the AMD Instinct
//     kernel family at the cross-generation tier, with an interval;
//   - Qwen3-30B-A3B int4 on one RTX 4090 and on two over PCIe without P2P;
//   - disaggregated pools with their own GPU type: H100 prefill, GB200 decode;
//   - FP4 weights a preset checkpoint ships (gpt-oss MXFP4) run weight-only
//     with a warning on a GPU without FP4 tensor cores, natively on Blackwell.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

// Each example's envelope is computed once for this file: the docs check and
// the property checks below read the same run.
const envelopes = new Map();
function run(file) {
  if (!envelopes.has(file)) {
    const r = spawnSync(cliPath, ['run', file, '--format', 'envelope'], { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 << 20 });
    assert.equal(r.status, 0, r.stderr);
    envelopes.set(file, r.stdout);
  }
  const env = JSON.parse(envelopes.get(file));
  assert.equal(env.ok, true);
  return env;
}
const example = (name) => path.join(repoRoot, 'examples', name);
const warningsText = (env) => JSON.stringify(env.warnings ?? []);

function withInterval(m, what) {
  assert.ok(m && m.low < m.value && m.value < m.high, `${what} has no interval: ${JSON.stringify(m)}`);
}

test('Llama-3.1-405B on 8x MI300X over xGMI: the AMD Instinct family, cross-generation tier, intervals', () => {
  const env = run(example('llama-3.1-405b-8x-mi300x-xgmi.json'));
  const acc = env.result.accuracy;
  assert.equal(acc.tier, 'cross-generation');
  assert.match(acc.note, /cross-generation tier/);
  assert.match(acc.note, /AMD Instinct kernel-efficiency family/);
  assert.ok(acc.expected_error_pct > 2);
  withInterval(env.result.key_metrics.find((k) => /tpot/i.test(k.id)) ?? env.result.key_metrics[0], 'MI300X key metric');
});

// The README's hardware table, docs/presets.md's example table and the CLI
// blocks of docs/hardware.md quote these examples' outputs: they must say what
// the engine prints today (they had drifted twice, unnoticed).
const HARDWARE_EXAMPLES = ['deepseek-v3-decode-gb200-nvl72.json', 'llama-3.1-405b-disagg-h100-prefill-gb200-nvl72-decode.json',
  'llama-3.1-405b-8x-mi300x-xgmi.json', 'qwen3-30b-a3b-1x-rtx-4090-int4.json', 'qwen3-30b-a3b-2x-rtx-4090-int4.json'];

// The one-line headline the tables quote: a latency run's TTFT, TPOT and E2E,
// a serving simulation's P50 TTFT, P50 TPOT and output throughput.
function headline(env) {
  const km = Object.fromEntries(env.result.key_metrics.map((k) => [k.id, k.value]));
  if (km.ttft_ms !== undefined)
    return `TTFT ${km.ttft_ms.toFixed(1)} ms, TPOT ${km.tpot_ms.toFixed(2)} ms, E2E ${(km.e2e_ms / 1000).toFixed(2)} s`;
  const tokens = Math.round(km.output_tokens_per_s).toLocaleString('en-US');
  return `P50 TTFT ${km.ttft_p50_ms.toFixed(1)} ms, P50 TPOT ${km.tpot_p50_ms.toFixed(2)} ms, ${tokens} output tok/s`;
}

// An interval bound as the docs print it: three significant figures.
const sig3 = (x) => x.toFixed(Math.max(0, 2 - Math.floor(Math.log10(Math.abs(x)))));
const squeeze = (line) => line.trim().replace(/\s+/g, ' ');

// docs/presets.md's paragraph on the NVL72 example repeats more of its run
// than the table rows: each figure, as the paragraph rounds it.
test('docs/presets.md\'s NVL72 paragraph quotes what the engine computes for it', () => {
  const name = 'deepseek-v3-decode-gb200-nvl72.json';
  const r = run(example(name)).result;
  const km = Object.fromEntries(r.key_metrics.map((k) => [k.id, k.value]));
  const busy = r.metrics.gpu.busy_time_s_by_family;
  const total = Object.values(busy).reduce((a, b) => a + b, 0);
  const text = squeeze(fs.readFileSync(path.join(repoRoot, 'docs', 'presets.md'), 'utf8'));
  const expected = [
    `prints ${headline(run(example(name)))} (${Math.round(km.output_tokens_per_s / r.deployment.gpus)} per GPU)`,
    `weights ${r.quantization.weights_GiB.toFixed(1)} GiB per GPU (${r.quantization.weights_GiB_unquantized.toFixed(1)} GiB unquantized)`,
    `a batch-1 decode step of ${r.quantization.decode_step_ms.toFixed(2)} ms`,
    `are ${busy.collective.toFixed(1)} s of the ${total.toFixed(0)} s of GPU-busy time by kernel family (${(100 * busy.collective / total).toFixed(1)}%)`,
    `(P99 inter-token latency ${r.metrics.itl_ms.p99.toFixed(0)} ms)`,
  ];
  const stale = expected.filter((e) => !text.includes(e));
  assert.deepEqual(stale, [], `docs/presets.md's paragraph on ${name} quotes stale figures; the engine gives these`);
});

test('the README, docs/presets.md and docs/hardware.md quote what the engine prints for the hardware examples', () => {
  const doc = (name) => fs.readFileSync(path.join(repoRoot, name), 'utf8').split('\n');
  const readme = doc('README.md'), presets = doc('docs/presets.md');
  const printed = new Map();  // example -> the lines its CLI table prints, whitespace squeezed
  const metrics = new Map();  // example -> key metric by its label
  for (const name of HARDWARE_EXAMPLES) {
    const env = run(example(name));
    const line = headline(env);
    const row = readme.find((l) => l.startsWith('|') && l.includes(`(\`${name}\`)`));
    assert.ok(row, `README's hardware table has a row for ${name}`);
    assert.ok(row.includes(line), `README quotes stale figures for ${name}; the engine prints: ${line}\n${row}`);
    const prow = presets.find((l) => l.startsWith(`| \`${name}\``));
    assert.ok(prow, `docs/presets.md's example table has a row for ${name}`);
    assert.ok(prow.includes(line), `docs/presets.md quotes stale figures for ${name}; the engine prints: ${line}\n${prow}`);
    const table = spawnSync(cliPath, ['run', example(name)], { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 << 20 });
    assert.equal(table.status, 0, table.stderr);
    printed.set(name, new Set(table.stdout.split('\n').map(squeeze)));
    metrics.set(name, new Map(env.result.key_metrics.map((k) => [k.label, k])));
  }
  // Each CLI block of docs/hardware.md is lines one example prints (before the
  // bracket), and a bracket holds that key metric's 80% interval.
  const hardware = fs.readFileSync(path.join(repoRoot, 'docs', 'hardware.md'), 'utf8');
  let blocks = 0;
  for (const [, body] of hardware.matchAll(/```\n([\s\S]*?)\n```/g)) {
    const lines = body.split('\n').map((raw) => {
      const [text, bracket] = raw.split(/\s+\[/);
      return { raw, text: squeeze(text), bracket };
    });
    if (!lines.some((l) => l.bracket)) continue;  // not a CLI block of these examples
    ++blocks;
    const name = HARDWARE_EXAMPLES.find((n) => lines.every((l) => printed.get(n).has(l.text)));
    assert.ok(name, `docs/hardware.md shows lines no hardware example prints:\n${body}`);
    for (const l of lines.filter((x) => x.bracket)) {
      const k = metrics.get(name).get(l.text.replace(/ [\d.]+ \S+$/, ''));
      assert.ok(k, `no key metric for the bracket of: ${l.raw}`);
      assert.equal(`[${l.bracket}`, `[${sig3(k.low)}, ${sig3(k.high)}]`, `stale interval in docs/hardware.md: ${l.raw}`);
    }
  }
  assert.ok(blocks >= 5, 'docs/hardware.md has its CLI blocks');
});

test('Qwen3-30B-A3B int4 on one RTX 4090 and on two over PCIe without peer-to-peer', () => {
  const one = run(example('qwen3-30b-a3b-1x-rtx-4090-int4.json'));
  const two = run(example('qwen3-30b-a3b-2x-rtx-4090-int4.json'));
  const weights = (env) => env.result.memory_per_gpu.weights_GiB;
  assert.ok(Math.abs(weights(two) - weights(one) / 2) < 0.01 * weights(one), 'TP2 halves the weights per GPU');
  assert.ok(weights(one) < 24, 'int4 weights fit a 24 GB card');
  const comm = (env) => env.result.breakdown.decode_per_step.filter((p) => p.family === 'collective');
  assert.equal(comm(one).length, 0);
  assert.ok(comm(two).length > 0, 'two cards pay all-reduces');
});

test('disaggregated pools: 2x8 H100 prefill and a GB200 NVL72 decode pool, KV over the stated link', () => {
  const env = run(example('llama-3.1-405b-disagg-h100-prefill-gb200-nvl72-decode.json'));
  const pools = env.result.deployment.pools;
  assert.deepEqual(pools.map((p) => [p.role, p.gpu, p.tp, p.replicas]),
    [['prefill', 'h100-sxm', 8, 2], ['decode', 'gb200', 8, 9]]);
  assert.equal(env.result.deployment.disaggregated, true);
  assert.equal(env.result.cost_tier, 'mixed', 'H100 is measured, GB200 cross-generation');
  assert.equal(env.result.metrics.requests.completed, 600);
  withInterval(env.result.key_metrics.find((k) => k.id === 'ttft_p50_ms') ?? env.result.key_metrics[0], 'disaggregated key metric');
});

test('FP4 checkpoint weights (gpt-oss MXFP4): weight-only with a warning on H100, FP4 tensor cores on B200', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fp4-'));
  const scenario = (gpu) => {
    const file = path.join(dir, `${gpu}.json`);
    fs.writeFileSync(file, JSON.stringify({
      schema_version: 1, model: 'gpt-oss-20b', hardware: { gpu, gpus_per_node: 1 },
      serving: { mode: 'latency', workload: { prompt_tokens: 256, output_tokens: 8, batch_size: 1 } },
    }));
    return run(file);
  };
  const h100 = scenario('h100-sxm');
  const b200 = scenario('b200');
  assert.match(warningsText(h100), /no FP4 tensor cores/);
  assert.doesNotMatch(warningsText(b200), /no FP4 tensor cores/);
  assert.equal(h100.result.deployment.weights, 'mxfp4', 'the checkpoint\'s MXFP4 is the default');
  assert.equal(b200.result.deployment.weights, 'mxfp4');
  assert.ok(h100.result.memory_per_gpu.weights_GiB < 16, 'MXFP4 experts, not bf16, are held');
});

// Issue 25's "one source for a GPU's links": no code picks an interconnect by
// name. The ids appear only in the presets (a GPU's default_intra_node and
// default_inter_node), in scenarios and examples, and in two engine files that
// name measured links, not a user's: the accuracy report (the links the
// published rows were measured on) and the calibration of an unmeasured link
// (which measured link of its kind its efficiencies are transferred from).
test('no rule outside the presets picks a link: interconnect ids are absent from the page code and the engine', () => {
  const ids = fs.readdirSync(path.join(repoRoot, 'presets', 'interconnects')).map((f) => f.replace(/\.json$/, ''));
  const quoted = new RegExp(`["'\`](${ids.join('|')})["'\`]`);
  const measuredLinks = new Set(['engine/cli/cmd_report_accuracy.cpp', 'engine/comm/collectives.cpp']);
  const files = (dir, ext) => fs.readdirSync(path.join(repoRoot, dir), { recursive: true })
    .filter((f) => ext.test(f)).map((f) => path.join(dir, f));
  const found = [...files('web/src', /\.m?js$/), ...files('web', /^[^/]*\.html$/), ...files('engine', /\.(cpp|hpp|h)$/)]
    .filter((f) => !measuredLinks.has(f))
    .filter((f) => quoted.test(fs.readFileSync(path.join(repoRoot, f), 'utf8')));
  assert.deepEqual(found, []);
  assert.ok(ids.length >= 15, 'the interconnect presets were read');
});
