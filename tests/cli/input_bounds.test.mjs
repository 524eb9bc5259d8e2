// Issue 26's CLI reproducers, each on the real `sightline` binary: every
// command's flags are typed and bounded (whole numbers are whole, ranges and
// choices are checked), a bad value is a usage error that names the command
// and the flag (exit 2), never a signal, a wrapped value or a silent default.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';
import { spawnCpuBounded } from '../tools/cpu_bounded.mjs';

// Under 60 s of CPU (the kernel stops a run past it: SIGXCPU, which the
// signal checks below report); the wall clock is only an outer guard.
function cli(args, input) {
  const r = spawnCpuBounded(cliPath, args, { cpuSeconds: 60, cwd: repoRoot, input, encoding: 'utf8', maxBuffer: 1 << 26 });
  return { code: r.status, signal: r.signal, out: r.stdout, err: r.stderr };
}

// A usage error: exit 2, no signal, the flag named with the value it got.
function usageError(r, flag, value) {
  assert.equal(r.signal, null, `killed by ${r.signal}: ${r.err}`);
  assert.equal(r.code, 2, r.err);
  const first = r.err.split('\n')[0];
  assert.ok(first.includes(flag), first);
  if (value !== undefined) assert.ok(first.includes(`'${value}'`), first);
}

// A located engine error: exit 1, "error [code] at 'path': message".
function locatedError(r, code, pathPrefix) {
  assert.equal(r.signal, null, `killed by ${r.signal}: ${r.err}`);
  assert.equal(r.code, 1, r.err);
  const m = r.err.match(/^error \[([a-z_]+)\] at '([^']*)': (.+)$/m);
  assert.ok(m, r.err);
  assert.equal(m[1], code, r.err);
  assert.ok(m[2].startsWith(pathPrefix), r.err);
}

const ops = ['ops', '--model', 'llama-2-7b', '--gpu', 'a100-80g-sxm', '--phase', 'decode', '--tokens', '8'];
const comm = ['comm', '--collective', 'all_reduce', '--interconnect', 'nvlink4-nvswitch'];

test('ops --tp 0 is a usage error, not SIGFPE', () => usageError(cli([...ops, '--tp', '0']), '--tp', '0'));
test('ops --tp -2 is a usage error, not NaN', () => usageError(cli([...ops, '--tp', '-2']), '--tp', '-2'));
test('ops --batch 1e12 (as digits) is a usage error, not an abort', () =>
  usageError(cli([...ops, '--batch', '1000000000000']), '--batch', '1000000000000'));
test('ops --tokens 1e3 is not read as 1', () =>
  usageError(cli(['ops', '--model', 'llama-2-7b', '--gpu', 'a100-80g-sxm', '--phase', 'decode', '--tokens', '1e3']), '--tokens', '1e3'));
test('ops --tier magic is refused with the list of tiers', () => {
  const r = cli([...ops, '--tier', 'magic']);
  usageError(r, '--tier', 'magic');
  assert.match(r.err, /roofline/);
});
test('ops: a valid call still prices the step', () => {
  const r = cli([...ops, '--tp', '2', '--batch', '4']);
  assert.equal(r.code, 0, r.err);
  const out = JSON.parse(r.out);
  assert.equal(out.tp, 2);
  assert.equal(out.batch, 4);
  assert.ok(Number.isFinite(out.step_time_us) && out.step_time_us > 0);
});

test('comm --bytes nan is a usage error, not null times with exit 0', () =>
  usageError(cli([...comm, '--gpus', '8', '--bytes', 'nan']), '--bytes', 'nan'));
test('comm --gpus 4294967298 is a usage error, not 2 GPUs', () =>
  usageError(cli([...comm, '--gpus', '4294967298', '--bytes', '1e6']), '--gpus', '4294967298'));
test('comm: a valid call still prices the collective', () => {
  const r = cli([...comm, '--gpus', '8', '--bytes', '1e6']);
  assert.equal(r.code, 0, r.err);
  const out = JSON.parse(r.out);
  assert.equal(out.gpus, 8);
  assert.ok(out.time_us > 0 && Number.isFinite(out.time_us));
});

test('batch --jobs 1e3 is a usage error, not one job', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sl-bounds-'));
  const f = path.join(dir, 'in.jsonl');
  writeFileSync(f, '{}\n');
  usageError(cli(['batch', f, '--jobs', '1e3']), '--jobs', '1e3');
  usageError(cli(['batch', f, '--shard', '0/4294967296000000000']), '--shard');
});

test('an unknown option of any command is a usage error naming it', () => {
  for (const args of [['run', '--preset', 'I1.1', '--fromat', 'json'], ['sweep', 'I1.1', '--sett', 'a=1'],
    ['search', 'x.json', '--job', '2'], ['presets', '--formt', 'json'], ['version', '--x'], ['registries', 'y'],
    ['validate', 'a.json', 'b.json'], ['report-e2e', '--format', 'yaml']]) {
    const r = cli(args);
    assert.equal(r.signal, null);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    assert.match(r.err.split('\n')[0], new RegExp(`^sightline: ${args[0]}: `), args.join(' '));
  }
});

test('sweep --set at array index 2^60 is a located error, not an abort', () => {
  const r = cli(['sweep', 'I2.3', '--set', '/serving/key_metrics/1152921504606846976=1']);
  locatedError(r, 'invalid_value', '/serving/key_metrics/1152921504606846976');
});

test('sweep: appending at an array index equal to its size still works', () => {
  const r = cli(['sweep', 'I2.3', '--set', '/serving/key_metrics/6=ttft_p90_ms,tpot_p50_ms']);
  assert.equal(r.code, 0, r.err);
  const lines = r.out.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, 2);
  assert.equal(lines[1].serving.key_metrics[6], 'tpot_p50_ms');
});

test('a 1e9-point sweep grid is refused up front (no allocation, no abort)', () => {
  const ten = '1,2,3,4,5,6,7,8,9,10';
  const args = ['sweep', 'I2.3'];
  for (const k of 'abcdefghi') args.push('--set', `${k}=${ten}`);
  usageError(cli(args), 'more than 10000000 points');
});

test('a 2^64-point sweep is refused, not wrapped to 0 points with exit 0', () => {
  const args = ['sweep', 'I2.3'];
  for (let i = 0; i < 64; i++) args.push('--set', `a${i}=1,2`);
  const r = cli(args);
  usageError(r, 'more than 10000000 points');
  assert.equal(r.out, '');
});

test('sweep streams its points: 20,000 points come out in grid order', () => {
  const vals = Array.from({ length: 100 }, (_, i) => i + 1).join(',');
  const vals2 = Array.from({ length: 200 }, (_, i) => i + 1).join(',');
  const r = cli(['sweep', 'I2.3', '--set', `/seed=${vals}`, '--set', `/serving/workload/num_requests=${vals2}`]);
  assert.equal(r.code, 0, r.err);
  const lines = r.out.trimEnd().split('\n');
  assert.equal(lines.length, 20000);
  const last = JSON.parse(lines[19999]);
  assert.equal(last.seed, 100);
  assert.equal(last.serving.workload.num_requests, 200);
});

test('a pasted HF config with top-k above the expert count is refused by run (was a segfault)', () => {
  const hf = JSON.parse(readFileSync(path.join(repoRoot, 'tests/data/hf/mixtral-8x7b.json'), 'utf8'));
  hf.num_experts_per_tok = 9;
  const s = JSON.parse(readFileSync(path.join(repoRoot, 'presets/scenarios/I2.1.json'), 'utf8'));
  s.model = { hf_config: hf };
  s.hardware = { gpu: 'h100-sxm', gpus_per_node: 2, intra_node: 'nvlink4-nvswitch' };
  s.serving.parallelism = { tp: 2, pp: 1 };
  s.serving.workload.num_requests = 20;
  locatedError(cli(['run', '-', '--format', 'json'], JSON.stringify(s)), 'constraint_violation',
    '/model/hf_config/num_experts_per_tok');
});
