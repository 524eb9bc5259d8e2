// Wide expert parallelism through the real CLI: attention data-parallel
// replicas sharing experts spread over all their GPUs (serving.moe).
//   - The shipped NVL72 example (DeepSeek-V3, attention DP 72, EP 72) runs.
//   - Memory per GPU follows the expert placement: more redundant experts
//     hold more weights; spreading the experts over more GPUs holds fewer.
//   - The dispatch/combine modes are priced differently.
//   - Bad placements are located errors at their own keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

function cli(args) {
  const r = spawnSync(cliPath, args, { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function tmpFile(obj) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'wide-ep-')), 's.json');
  fs.writeFileSync(file, JSON.stringify(obj));
  return file;
}

const examplePath = path.join(repoRoot, 'examples/deepseek-v3-decode-gb200-nvl72.json');
const example = JSON.parse(fs.readFileSync(examplePath, 'utf8'));

// The envelope on success; a failed run prints its located error on stderr.
// The central run only: these checks compare memory and prices between
// placements, which the cost bounds' runs would only repeat (the shipped
// example runs as shipped, with its intervals, below).
function run(scenario) {
  const r = cli(['run', tmpFile(scenario), '--format', 'envelope', '--central-only']);
  if (r.code === 0) return JSON.parse(r.out);
  const m = /error \[(\w+)\] at '([^']*)'/.exec(r.err);
  assert.ok(m, `no located error: ${r.err}`);
  return { ok: false, error: { code: m[1], path: m[2] } };
}

function small(moe, pool = { name: 'nvl72', replicas: 72, tp: 1, pp: 1 }) {
  const s = structuredClone(example);
  s.serving.workload.num_requests = 80;
  s.serving.cluster.pools = [pool];
  s.serving.moe = moe;
  return s;
}

const weights = (env) => env.result.memory_per_gpu[0].weights_GiB;

test('the shipped NVL72 example runs as shipped (attention DP 72, EP 72)', () => {
  const r = cli(['run', examplePath, '--format', 'envelope']);
  assert.equal(r.code, 0, r.err);
  const env = JSON.parse(r.out);
  assert.equal(env.ok, true);
  assert.ok(env.result.metrics.throughput.output_tokens_per_s > 0);
  assert.equal(env.result.metrics.moe.expert_parallel, 72);
  assert.equal(env.result.metrics.moe.attention_data_parallel, 72);
  assert.equal(env.result.metrics.requests.completed ?? env.result.requests?.completed ?? 1500, 1500);
});

test('memory per GPU follows the expert placement', () => {
  // 256 experts + 32 copies: 4 slots per GPU; + 104 copies: 5.
  const base = { expert_parallel: 72, attention_data_parallel: 72, redundant_experts: 32 };
  const plain = run(small(base));
  const redundant = run(small({ ...base, redundant_experts: 104 }));
  assert.equal(plain.ok, true, JSON.stringify(plain.error));
  assert.equal(redundant.ok, true, JSON.stringify(redundant.error));
  assert.ok(weights(redundant) > weights(plain), `${weights(redundant)} <= ${weights(plain)}`);
  // EP 8 inside TP 8 keeps all experts over 8 GPUs: more expert weights per GPU
  // (and fewer attention weights) than whole experts over 72.
  const narrow = run(small({ expert_parallel: 8 }, { name: 'nvl72', replicas: 9, tp: 8, pp: 1 }));
  assert.equal(narrow.ok, true, JSON.stringify(narrow.error));
  assert.ok(weights(narrow) > weights(plain), 'all experts over 8 GPUs outweigh 4 per GPU');
  const wideTp2 = run(
    small({ expert_parallel: 72, attention_data_parallel: 36, redundant_experts: 32 }, { name: 'nvl72', replicas: 36, tp: 2, pp: 1 }),
  );
  assert.equal(wideTp2.ok, true, JSON.stringify(wideTp2.error));
  assert.ok(weights(wideTp2) < weights(plain), 'TP2 attention with EP 72 holds less than TP1');
});

test('low-latency and high-throughput dispatch are priced apart', () => {
  const base = { expert_parallel: 72, attention_data_parallel: 72, redundant_experts: 32 };
  const ll = run(small({ ...base, all_to_all: 'low_latency' }));
  const ht = run(small({ ...base, all_to_all: 'high_throughput' }));
  assert.equal(ll.ok, true);
  assert.equal(ht.ok, true);
  assert.notEqual(ll.result.metrics.tpot_ms.p50, ht.result.metrics.tpot_ms.p50);
});

test('bad placements are located errors', () => {
  const cases = [
    [{ expert_parallel: 64, attention_data_parallel: 72 }, '/serving/moe/expert_parallel'],
    [{ expert_parallel: 72, attention_data_parallel: 72 }, '/serving/moe/expert_parallel'],  // 72 does not divide 256
    [{ expert_parallel: 72, attention_data_parallel: 72, redundant_experts: 10 }, '/serving/moe/redundant_experts'],
    [{ expert_parallel: 1, redundant_experts: 8 }, '/serving/moe/redundant_experts'],
    [{ expert_parallel: 72, attention_data_parallel: 72, redundant_experts: 32, all_to_all: 'fast' }, '/serving/moe/all_to_all'],
  ];
  for (const [moe, where] of cases) {
    const env = run(small(moe));
    assert.equal(env.ok, false, JSON.stringify(moe));
    assert.equal(env.error.path, where, JSON.stringify(env.error));
  }
  // 72 replicas are no whole number of 32-replica groups.
  const env = run(small({ expert_parallel: 32, attention_data_parallel: 32 }));
  assert.equal(env.ok, false);
  assert.equal(env.error.path, '/serving/moe/attention_data_parallel');
});
