// explain-train-step through the real CLI (issue 38): one training step at
// 256 GPUs taken apart by mechanism.
//   - The mechanisms add up to the step the run reports, for every training
//     preset and the 405B example; every line names its source.
//   - The 405B example (TP4 PP8 v8 CP2 DP4, FP8) has FP8 casts and amax
//     reductions, a bubble line that states (p-1)/(v*m) with its real m, data-parallel
//     buckets with the last one named, and network lines for its groups.
//   - A serving scenario is refused with a located error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

function explain(args) {
  const r = spawnSync(cliPath, ['explain-train-step', ...args, '--format', 'json'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

function stepOf(args) {
  const r = spawnSync(cliPath, ['run', ...args, '--format', 'json', '--central-only'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout).result.metrics.step_time_ms;
}

const close = (a, b, what) => assert.ok(Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);
const example = path.join(repoRoot, 'examples', 'train-llama-3.1-405b-b200-256.json');

test('explain-train-step: the mechanisms add up to the step the run reports', () => {
  for (const args of [['--preset', 'T2.3'], ['--preset', 'T2.4'], ['--preset', 'T2.5'], ['--preset', 'T4.5'], [example]]) {
    const out = explain(args);
    close(out.mechanisms.reduce((a, m) => a + m.time_ms, 0), out.step_time_ms, `${args} sum`);
    close(out.step_time_ms, stepOf(args), `${args} step`);
    for (const m of out.mechanisms) {
      assert.ok(m.time_ms >= 0, `${m.name} is negative`);
      assert.ok(m.source.length > 10, `${m.name} has no source`);
    }
  }
});

test('explain-train-step: Llama-3.1-405B on 256 B200, by mechanism', () => {
  const out = explain([example]);
  assert.equal(out.gpus, 256);
  const by = Object.fromEntries(out.mechanisms.map((m) => [m.name, m]));
  assert.ok(by['compute: dense layers'].share > 0.6);
  assert.ok(by['FP8 casts (activations and gradients)'].time_ms > 0);
  assert.ok(by['FP8 amax all-reduces'].time_ms > 0);
  assert.match(by['pipeline bubble and waits'].detail, /p=8, v=8, m=32 micro-batches/);
  assert.match(by['pipeline bubble and waits'].detail, /\(p-1\)\/\(v\*m\) = 2\.73%/);
  assert.match(by['data-parallel gradient reduce-scatter exposed'].detail, /the last bucket \(/);
  assert.ok(by['data-parallel parameter all-gather exposed'].detail.includes('chunk by chunk'));
  const groups = out.network.map((n) => n.group);
  assert.ok(groups.includes('data-parallel gradient bucket'));
  assert.ok(groups.includes('tensor-parallel all-gather of one layer input'));
  for (const n of out.network) assert.ok(n.busbw_GBps > 0 && n.time_ms > 0, n.group);
});

test('explain-train-step refuses a serving scenario and a missing input', () => {
  const r = spawnSync(cliPath, ['explain-train-step', '--preset', 'I2.2'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr + r.stdout, /\/training.*training scenario/);
  const u = spawnSync(cliPath, ['explain-train-step'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(u.status, 2);
});

test('docs/training.md quotes what explain-train-step prints for the 405B example', async () => {
  const fs = await import('node:fs');
  const doc = fs.readFileSync(path.join(repoRoot, 'docs', 'training.md'), 'utf8');
  const m = doc.match(/\$ \.\/build\/sightline explain-train-step examples\/train-llama-3\.1-405b-b200-256\.json\n([^]*?)\n```/);
  assert.ok(m, 'docs/training.md has the explain-train-step block');
  const r = spawnSync(cliPath, ['explain-train-step', example], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const printed = r.stdout.split('\n');
  for (const line of m[1].split('\n')) assert.ok(printed.includes(line), `not printed any more: ${line}`);
});
