// The training configuration search through the real CLI: `search` dispatches
// a {"kind": "training_search"} question, the output does not depend on
// --jobs, the answer fits in memory and carries its interval, and a bad
// question gets a located error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

function cli(args, input) {
  const r = spawnSync(cliPath, args, { cwd: repoRoot, input, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

const example = 'examples/search-training-llama3-8b.json';

test('training search: JSON answer, the same on 1 and 2 threads', () => {
  const one = cli(['search', example, '--format', 'json', '--jobs', '1']);
  assert.equal(one.code, 0, one.err);
  const two = cli(['search', example, '--format', 'json', '--jobs', '2']);
  assert.equal(two.out, one.out, '--jobs changes nothing in the output');
  const r = JSON.parse(one.out);
  assert.equal(r.kind, 'training_search');
  assert.equal(r.objective, 'time_to_train');
  assert.equal(r.space.configurations, r.space.pruned_by_checks + r.space.estimated);
  assert.equal(r.space.ranked, r.ranked.length);
  assert.ok(r.ranked.length > 0);
  for (const c of r.ranked) {
    assert.equal(c.fits, true);
    assert.ok(c.memory_per_gpu_GiB <= c.capacity_GiB);
    assert.equal(c.gpus, c.dp * c.tp * c.pp * c.cp);
    assert.equal(c.dp * c.micro_batch_size * c.gradient_accumulation, r.global_batch_size);
  }
  assert.equal(r.best.configuration, r.ranked[0].configuration);
  const ttt = r.key_metrics.find((m) => m.id === 'time_to_train_days');
  assert.ok(ttt.low < ttt.value && ttt.value < ttt.high, 'the answer carries its 80% interval');
  assert.ok(r.pruned_by_reason.length > 0);
  assert.equal(r.pruned_by_reason.reduce((n, p) => n + p.count, 0), r.space.pruned_by_checks + r.space.do_not_fit);
});

test('training search: the table names the best configuration and the pruning reasons', () => {
  const t = cli(['search', example, '--top', '5']);
  assert.equal(t.code, 0, t.err);
  assert.match(t.out, /^training search: llama-3-8b/);
  assert.match(t.out, /virtual_stages > 1 needs pp ≥ 2/);
  assert.match(t.out, /\nbest: h100-sxm×64 /);
  assert.match(t.out, /time to train [0-9.]+ \[[0-9.]+, [0-9.]+\] days/);
});

test('training search: a bad question gets a located error', () => {
  const r = cli(['search', '-'], JSON.stringify({ kind: 'training_search', base: 'T3.4', recompute: ['none', 'partial'] }));
  assert.equal(r.code, 1);
  assert.match(r.err, /error \[invalid_value\] at '\/recompute\/1'/);
  const k = cli(['search', '-'], JSON.stringify({ kind: 'serving', base: 'T3.4' }));
  assert.equal(k.code, 1);
  assert.match(k.err, /at '\/kind'/);
});
