// sweep, batch, merge and the scale-out recipes through the real CLI: grids and
// zipped axes, one result line per input line keyed by line number and id,
// bad lines reported in place, output independent of --jobs, shards whose
// concatenation is byte for byte the unsharded run, and the Slurm job-array
// recipe on a real single-node Slurm when this machine can start one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync, readFileSync, mkdtempSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

function cli(args, input) {
  const r = spawnSync(cliPath, args, { cwd: repoRoot, input, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const dir = mkdtempSync(path.join(tmpdir(), 'sightline-batch-'));

// The batch, shard, merge and Slurm tests check how results are laid out and
// that they are the engine's own bytes, whatever the runs simulate. I2.2 keeps
// its steady-state judgement, capped at 100 requests: uncapped, a run at 1-4
// req/s is rerun at about 2,600 requests to decide its verdict, and a pass over
// the six lines took 2.4 s of CPU against 0.24 s capped (2026-11-30); this file
// makes about ten such passes.
function sweepFile() {
  const r = cli(['sweep', 'I2.2', '--set', 'serving.workload.arrival.rate_qps=1,2,4',
    '--set', '/serving/workload/num_requests=40,80', '--set', 'serving.steady_state.max_requests=100']);
  assert.equal(r.code, 0, r.err);
  const file = path.join(dir, 'sweep.jsonl');
  // Two bad lines and a blank one among the scenarios.
  writeFileSync(file, r.out + '{"bad": 1}\n\nnot json\n');
  return file;
}

test('sweep expands a grid (last --set fastest) and zips axes', () => {
  const grid = cli(['sweep', 'I2.2', '--set', 'serving.workload.arrival.rate_qps=1,2,4', '--set', 'serving.workload.num_requests=40,80']);
  assert.equal(grid.code, 0, grid.err);
  const rows = grid.out.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(rows.length, 6);
  assert.deepEqual(rows.map((s) => [s.serving.workload.arrival.rate_qps, s.serving.workload.num_requests]),
    [[1, 40], [1, 80], [2, 40], [2, 80], [4, 40], [4, 80]]);
  assert.equal(rows[3].id, 'I2.2 rate_qps=2,num_requests=80');
  const zip = cli(['sweep', 'I2.2', '--zip', '--set', 'serving.workload.arrival.rate_qps=1,2', '--set', 'serving.scheduler.policy=continuous,chunked_prefill']);
  assert.equal(zip.code, 0, zip.err);
  const z = zip.out.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(z.map((s) => [s.serving.workload.arrival.rate_qps, s.serving.scheduler.policy]), [[1, 'continuous'], [2, 'chunked_prefill']]);
  const bad = cli(['sweep', 'I2.2', '--zip', '--set', 'seed=1,2', '--set', 'serving.workload.num_requests=40']);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /same number of values/);
  assert.equal(cli(['sweep', 'no-such-file-or-preset', '--set', 'seed=1']).code, 1);
});

test('batch writes one envelope per line, keeps going past bad lines, and does not depend on --jobs', () => {
  const file = sweepFile();
  const one = cli(['batch', file, '--jobs', '1']);
  assert.equal(one.code, 0, one.err);
  const two = cli(['batch', file, '--jobs', '2']);
  assert.equal(two.out, one.out, '--jobs changes nothing in the output');
  const lines = one.out.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, 8, 'the blank line has no result');
  assert.deepEqual(lines.map((l) => l.line), [1, 2, 3, 4, 5, 6, 7, 9]);
  for (const l of lines.slice(0, 6)) {
    assert.equal(l.ok, true);
    assert.equal(l.result.kind, 'serving_simulation');
    assert.match(l.id, /^I2\.2 rate_qps=/);
  }
  assert.equal(lines[6].ok, false);
  assert.equal(lines[6].error.code, 'unknown_key');
  assert.equal(lines[7].ok, false);
  assert.equal(lines[7].error.code, 'parse_error');
  assert.match(one.err, /2 with errors/);
  // The envelope is the engine's own bytes: the same as `run --format envelope`.
  const scenario = readFileSync(file, 'utf8').split('\n')[0];
  const single = cli(['run', '-', '--format', 'envelope'], scenario);
  assert.equal(one.out.split('\n')[0], `{"line":1,"id":${JSON.stringify(JSON.parse(scenario).id)},` + single.out.trimEnd().slice(1));
  assert.equal(cli(['batch', file, '--shard', '3/3']).code, 2);
  assert.equal(cli(['batch', file, '--jobs', '0']).code, 2);
});

test('shards concatenated in order are byte-identical to the unsharded run, and merge restores the order', () => {
  const file = sweepFile();
  const all = cli(['batch', file]).out;
  for (const n of [1, 2, 3, 4, 9, 12]) {
    let joined = '';
    const parts = [];
    for (let i = 0; i < n; i++) {
      const out = path.join(dir, `shard-${n}-${i}.jsonl`);
      const r = cli(['batch', file, '--shard', `${i}/${n}`, '--out', out]);
      assert.equal(r.code, 0, r.err);
      joined += readFileSync(out, 'utf8');
      parts.push(out);
    }
    assert.equal(joined, all, `${n} shards`);
    const merged = cli(['merge', ...parts.reverse()]);
    assert.equal(merged.code, 0, merged.err);
    assert.equal(merged.out, all, `merge of ${n} shards in reverse order`);
  }
  const dup = path.join(dir, 'dup.jsonl');
  writeFileSync(dup, all);
  const r = cli(['merge', dup, dup]);
  assert.equal(r.code, 1);
  assert.match(r.err, /more than one result/);
});

test('serving compare takes an array: the I3.4 curve from one file', () => {
  const r = cli(['run', 'examples/I3.4-curve.json', '--format', 'json']);
  assert.equal(r.code, 0, r.err);
  const res = JSON.parse(r.out).result;
  assert.ok(Array.isArray(res.compare));
  assert.deepEqual(res.compare.map((c) => c.label), [8, 16, 32, 64, 256].map((n) => `max_num_seqs ${n}`));
  const tput = res.compare.map((c) => c.baseline.metrics.throughput.output_tokens_per_s);
  for (let i = 1; i < tput.length; i++) assert.ok(tput[i] > tput[i - 1], 'throughput grows with max_num_seqs');
  for (const c of res.compare) assert.ok(Math.abs(c.ratio.output_tokens_per_s - res.metrics.throughput.output_tokens_per_s / c.baseline.metrics.throughput.output_tokens_per_s) < 1e-9);
  const bad = JSON.parse(readFileSync(path.join(repoRoot, 'examples/I3.4-curve.json'), 'utf8'));
  bad.serving.compare[2].patch.serving.scheduler.max_num_seqs = -1;
  const e = cli(['run', '-'], JSON.stringify(bad));
  assert.equal(e.code, 1);
  assert.match(e.err, /at '\/serving\/compare\/2\/patch\/serving\/scheduler\/max_num_seqs'/);
});

test('the Slurm job-array recipe on a real single-node Slurm (skips, saying why, when Slurm cannot start here)', (t) => {
  const have = spawnSync('sh', ['-c', 'command -v slurmctld && command -v slurmd && command -v munged && command -v sbatch']);
  if (have.status !== 0) {
    t.skip('slurm-wlm and munge are not installed (apt-get install slurm-wlm munge); docs/cli.md ("Sweeps, batches and scale-out") says how to run this by hand');
    return;
  }
  if (process.getuid && process.getuid() !== 0) {
    t.skip('starting slurmd needs root; docs/cli.md ("Sweeps, batches and scale-out") says how to run this by hand');
    return;
  }
  const sdir = mkdtempSync(path.join(tmpdir(), 'sightline-slurm-'));
  const start = spawnSync('bash', [path.join(repoRoot, 'scale-out/slurm/local-cluster.sh'), 'start', sdir], { encoding: 'utf8', timeout: 600000 });
  try {
    if (start.status !== 0) {
      t.skip(`slurm could not start in this sandbox: ${(start.stderr || '').trim().split('\n').pop()}`);
      return;
    }
    const env = { ...process.env, SLURM_CONF: path.join(sdir, 'slurm.conf') };
    const file = sweepFile();
    const out = path.join(sdir, 'out');
    // Both jobs are submitted at once (the merge waits on the array through a
    // dependency) and the queue is polled every 0.2 s: `sbatch --wait` polls
    // with growing sleeps, which doubled this test's time.
    const submit = (args) => {
      const r = spawnSync('sbatch', ['--parsable', `--chdir=${sdir}`, ...args], { env, encoding: 'utf8', timeout: 600000 });
      assert.equal(r.status, 0, r.stderr + r.stdout);
      return r.stdout.trim().split(';')[0];
    };
    const arrayId = submit(['--array=0-2', `--export=ALL,IN=${file},OUT_DIR=${out},SIGHTLINE=${cliPath}`,
      path.join(repoRoot, 'scale-out/slurm/batch-array.sbatch')]);
    const mergeId = submit([`--dependency=afterok:${arrayId}`, '--kill-on-invalid-dep=yes',
      `--export=ALL,OUT_DIR=${out},SIGHTLINE=${cliPath}`, path.join(repoRoot, 'scale-out/slurm/merge.sbatch')]);
    // An outer guard only (the jobs take seconds of CPU): generous, as a busy
    // machine stretches the wall clock (issue 34).
    const deadline = Date.now() + 1800000;
    for (;;) {
      const q = spawnSync('squeue', ['-h', '-j', `${arrayId},${mergeId}`], { env, encoding: 'utf8' });
      if (q.status === 0 && q.stdout.trim() === '') break;
      if (/Invalid job id/i.test(q.stderr)) break;  // already finished and purged
      assert.ok(Date.now() < deadline, `the jobs did not finish in 1800 s: ${q.stdout}${q.stderr}`);
      spawnSync('sleep', ['0.2']);
    }
    for (const id of [`${arrayId}_0`, `${arrayId}_1`, `${arrayId}_2`, mergeId]) {
      const job = spawnSync('scontrol', ['show', 'job', id], { env, encoding: 'utf8' }).stdout;
      assert.match(job, /JobState=COMPLETED .*\n?[^]*ExitCode=0:0/, `job ${id}: ${job}`);
    }
    for (let i = 0; i < 3; i++) assert.ok(existsSync(path.join(out, `shard-${i}.jsonl`)), `array task ${i} wrote its shard`);
    assert.equal(readFileSync(path.join(out, 'results.jsonl'), 'utf8'), cli(['batch', file]).out,
      'the array\'s merged output is byte-identical to the unsharded run');
  } finally {
    spawnSync('bash', [path.join(repoRoot, 'scale-out/slurm/local-cluster.sh'), 'stop', sdir]);
    try {
      rmSync(sdir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    } catch {
      // A daemon still exiting may hold its state directory for a moment; the temp dir is left behind.
    }
  }
});

test('batch --central-only gives every line the central values without intervals', () => {
  const file = sweepFile();
  const full = cli(['batch', file]).out.trim().split('\n').map((l) => JSON.parse(l));
  const r = cli(['batch', file, '--central-only']);
  assert.equal(r.code, 0, r.err);
  const central = r.out.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(central.length, full.length);
  for (let i = 0; i < full.length; i += 1) {
    assert.equal(central[i].ok, full[i].ok);
    if (!full[i].ok) continue;
    assert.equal(central[i].result.intervals, 'central_only');
    assert.deepEqual(central[i].result.metrics, full[i].result.metrics);
  }
});
