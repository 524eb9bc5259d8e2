// SGLang's server_info, argument by argument (engine/api/bench_server_args.cpp):
// on the real one-server file tests/data/bench/real/tonyli_qwen25-3b_agg_c8.jsonl
// (SOURCES.md there), each rule with one value of the file changed where the
// rule is about a value the server did not run. Judged by exit codes and
// located errors only (no timing).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../wasm/wasm_module.mjs';
import { cli, workspace } from './fit_helpers.mjs';

const file = path.join(repoRoot, 'tests', 'data', 'bench', 'real', 'tonyli_qwen25-3b_agg_c8.jsonl');
const text = readFileSync(file, 'utf8');
const { write } = workspace('sightline-fit-server-info-');

// One change to the file's top-level server arguments (the first occurrence:
// internal_states, the scheduler's copy, comes after them).
function changed(name, from, to) {
  assert.ok(text.includes(from), `${from} is in the file`);
  return write(name, text.replace(from, to));
}

// A base on the server's deployment: one server, tp 1, bf16, SGLang's stack.
function aggBase(stack = 'sglang-overlap-like', serving = {}) {
  return {
    schema_version: 1, id: 'fit-agg-base', seed: 7, model: 'llama-2-7b',
    hardware: { gpu: 'h100-sxm', gpus_per_node: 1 }, cost_model: { software_stack: stack },
    serving: { mode: 'simulate', parallelism: { tp: 1, pp: 1 },
      workload: { arrival: { process: 'poisson', rate_qps: 1 }, num_requests: 10, prompt_tokens: { dist: 'fixed', value: 128 }, output_tokens: { dist: 'fixed', value: 16 } }, ...serving },
  };
}

function refusedAt(r, code, at, message) {
  assert.equal(r.code, 1, r.out);
  const m = r.err.match(/^error \[(\w+)\] at '([^']*)': (.*)$/m);
  assert.ok(m, r.err);
  assert.deepEqual([m[1], m[2]], [code, at], r.err);
  assert.match(m[3], message);
}

test('SGLang one server: every argument accounted for, the scheduler and KV settings replayed at their keys', () => {
  const r = cli(['fit', file, '--import-only']);
  assert.equal(r.code, 0, r.err);
  const [run] = JSON.parse(r.out);
  assert.deepEqual(run.server.deployment.map((s) => [s.at, s.role, s.tp, s.dp]), [['/server_info', 'mixed', 1, 1]]);
  assert.deepEqual(run.server.replayed.map((s) => [s.scenario, s.value, s.source]), [
    ['/serving/kv_cache/prefix_caching', true, '/server_info/disable_radix_cache'],
    ['/serving/scheduler/max_num_batched_tokens', 8192, '/server_info/chunked_prefill_size'],
    ['/serving/scheduler/priority', 'prefill_first', '/server_info/enable_mixed_chunk'],
    ['/serving/kv_cache/block_size', 1, '/server_info/page_size'],
    ['/serving/kv_cache/gpu_memory_utilization', 0.9, '/server_info/mem_fraction_static'],
  ]);
  // max_running_requests null: SGLang's own limit (2048 or more) never bound 8 clients.
  assert.equal(run.server.max_num_seqs, 8);
  assert.ok(run.notes.some((n) => /max_running_requests null: .* at most 8 requests in flight/.test(n)), run.notes.join('\n'));
  // Every key under server_info was taken by the table (none left to the key check).
  assert.ok(run.fields_used.includes('/server_info/attention_backend'));
  assert.ok(run.fields_used.includes('/server_info/internal_states'));
});

test('SGLang one server: the server\'s own settings pass the comparison with a base on its deployment and stack', () => {
  const out = path.join(path.dirname(write('agg-base.json', aggBase())), 'agg-fit.json');
  const r = cli(['fit', file, '--base', path.join(path.dirname(out), 'agg-base.json'), '--holdout-every', '0', '--out', out]);
  assert.equal(r.code, 0, r.err);
  const fit = JSON.parse(readFileSync(out, 'utf8')).fit;
  assert.deepEqual(fit.runs[0].replayed_arrival, { process: 'closed_loop', concurrency: 8 });
});

const rules = [
  // name, content, code, at, message: refused before any replay (--import-only).
  ['unknown-arg.jsonl', ['"forward_hooks": null, "status"', '"forward_hooks": null, "enable_new_thing": true, "status"'], 'not_implemented', '/server_info/enable_new_thing', /does not know: 'server_info\/enable_new_thing'/],
  ['two-batch-overlap.jsonl', ['"enable_two_batch_overlap": false', '"enable_two_batch_overlap": true'], 'not_implemented', '/server_info/enable_two_batch_overlap', /enable_two_batch_overlap true: a setting the replay's engine cannot express/],
  ['schedule-lof.jsonl', ['"schedule_policy": "fcfs"', '"schedule_policy": "lof"'], 'not_implemented', '/server_info/schedule_policy', /other policies are refused/],
  ['stream-interval.jsonl', ['"stream_interval": 1,', '"stream_interval": 8,'], 'not_implemented', '/server_info/stream_interval', /ITL and TPOT are per token/],
  ['max-total-tokens.jsonl', ['"max_total_tokens": null', '"max_total_tokens": 100000'], 'not_implemented', '/server_info/max_total_tokens', /cannot express/],
  ['many-clients.jsonl', ['"max_concurrency": 8', '"max_concurrency": 4096'], 'not_implemented', '/server_info/max_running_requests', /could have 4096 requests in flight/],
];
for (const [name, [from, to], code, at, message] of rules) {
  test(`rule: SGLang server_info ${name} -> ${code} at '${at}'`, () => {
    refusedAt(cli(['fit', changed(name, from, to), '--import-only']), code, at, message);
  });
}

test('rule: SGLang server_info: a stated max_running_requests is replayed as written', () => {
  const r = cli(['fit', changed('mrr.jsonl', '"max_running_requests": null', '"max_running_requests": 48'), '--import-only']);
  assert.equal(r.code, 0, r.err);
  assert.equal(JSON.parse(r.out)[0].server.max_num_seqs, 48);
});

// Contradictions with the base scenario: refused at the file's key, the base's value named.
const contradictions = [
  ['overlap vs vllm-like', file, aggBase('vllm-like'), '/server_info/disable_overlap_schedule', /ran with the overlap scheduler, but the base scenario's software stack 'vllm-like' .* runs without it/],
  ['no CUDA graphs', changed('no-graphs.jsonl', '"disable_cuda_graph": false', '"disable_cuda_graph": true'), aggBase(), '/server_info/disable_cuda_graph', /ran without CUDA graphs, but the base scenario's software stack 'sglang-overlap-like' .* runs with them/],
  ['other captured sizes', changed('graph-sizes.jsonl', '"cuda_graph_bs": [1, 2, 4, 8,', '"cuda_graph_bs": [1, 2, 4, 6,'), aggBase(), '/server_info/cuda_graph_bs', /a decode batch of 5 as its graph of 6, but the base scenario's software stack 'sglang-overlap-like' runs it as its graph of 8/],
  ['fp16 compute', changed('fp16.jsonl', '"dtype": "auto"', '"dtype": "float16"'), aggBase(), '/server_info/dtype', /ran in fp16, but the base scenario computes in bf16/],
  ['static scheduler', file, aggBase('sglang-overlap-like', { scheduler: { policy: 'static' } }), '/server_info', /batches continuously, but the base scenario's scheduler is static/],
  // A replayed value the base cannot take is located at the file's key, not at a scenario path.
  ['context past the model', changed('long-context.jsonl', '"context_length": null', '"context_length": 100000'), aggBase(), '/server_info/context_length', /replaying this run on .* failed at the value read from \/server_info\/context_length/],
];
for (const [what, runFile, base, at, message] of contradictions) {
  test(`rule: SGLang server_info against the base: ${what} -> refused at '${at}'`, () => {
    const r = cli(['fit', runFile, '--base', write(`base-${what.replaceAll(' ', '-')}.json`, base), '--holdout-every', '0']);
    assert.equal(r.code, 1, r.out);
    const m = r.err.match(/^error \[(\w+)\] at '([^']*)': (.*)$/m);
    assert.ok(m, r.err);
    assert.equal(m[2], at, r.err);
    assert.ok(m[3].includes(path.basename(runFile)), `the message names the file: ${r.err}`);
    assert.match(m[3], message);
  });
}

// Settings that act only with several GPUs or replicas: the one-server file changed to tp 2 or dp 2.
function changedTwice(name, edits) {
  let t = text;
  for (const [from, to] of edits) { assert.ok(t.includes(from), from); t = t.replace(from, to); }
  return write(name, t);
}
const twoGpus = (serving) => ({ ...aggBase('sglang-overlap-like', serving), hardware: { gpu: 'h100-sxm', gpus_per_node: 2, intra_node: 'nvlink4-nvswitch' } });
const tp2 = { parallelism: { tp: 2, pp: 1 } };
const dp2 = { parallelism: undefined, cluster: { pools: [{ name: 'm', replicas: 2, tp: 1 }] } };
const several = [
  ['tp 2, custom all-reduce off', changedTwice('tp2-nccl.jsonl', [['"tp_size": 1,', '"tp_size": 2,'], ['"disable_custom_all_reduce": false', '"disable_custom_all_reduce": true']]), twoGpus(tp2),
    '/server_info/disable_custom_all_reduce', /ran without its custom all-reduce, but the base scenario's software stack 'sglang-overlap-like' .* runs with one/],
  ['dp 2, shortest_queue', changedTwice('dp2-shortest.jsonl', [['"dp_size": 1,', '"dp_size": 2,'], ['"load_balance_method": "round_robin"', '"load_balance_method": "shortest_queue"']]), twoGpus(dp2),
    '/server_info/load_balance_method', /ran its 2 replicas with load_balance_method 'shortest_queue', but the base scenario routes with 'round_robin'/],
  ['dp 2, minimum_tokens', changedTwice('dp2-tokens.jsonl', [['"dp_size": 1,', '"dp_size": 2,'], ['"load_balance_method": "round_robin"', '"load_balance_method": "minimum_tokens"']]), twoGpus({ ...dp2, cluster: { ...dp2.cluster, router: 'least_kv_load' } }),
    '/server_info/load_balance_method', /'minimum_tokens', but the base scenario routes with 'least_kv_load'/],
];
for (const [what, runFile, base, at, message] of several) {
  test(`rule: SGLang server_info against the base: ${what} -> refused at '${at}'`, () => {
    const r = cli(['fit', runFile, '--base', write(`base-${path.basename(runFile, '.jsonl')}.json`, base), '--holdout-every', '0']);
    refusedAt(r, 'constraint_violation', at, message);
  });
}

test('rule: SGLang server_info: tp 2 with its custom all-reduce, and dp 2 round robin, pass against a base that runs them', () => {
  const tp = cli(['fit', changedTwice('tp2.jsonl', [['"tp_size": 1,', '"tp_size": 2,']]), '--base', write('base-tp2.json', twoGpus(tp2)), '--holdout-every', '0']);
  assert.equal(tp.code, 0, tp.err);
  const dp = cli(['fit', changedTwice('dp2.jsonl', [['"dp_size": 1,', '"dp_size": 2,']]), '--base', write('base-dp2.json', twoGpus(dp2)), '--holdout-every', '0']);
  assert.equal(dp.code, 0, dp.err);
});

test('rule: SGLang server_info: enable_mixed_chunk true is replayed as decode_first', () => {
  const r = cli(['fit', changed('mixed-chunk.jsonl', '"enable_mixed_chunk": false', '"enable_mixed_chunk": true'), '--import-only']);
  assert.equal(r.code, 0, r.err);
  const priority = JSON.parse(r.out)[0].server.replayed.find((x) => x.scenario === '/serving/scheduler/priority');
  assert.deepEqual(priority, { scenario: '/serving/scheduler/priority', value: 'decode_first', source: '/server_info/enable_mixed_chunk' });
});

test('rule: SGLang server_info: two servers that ran a replayed setting differently are refused at the second', () => {
  // The real PD file (tonyli, SOURCES.md), its decode server's page size changed.
  const pdFile = path.join(path.dirname(file), 'tonyli_qwen25-3b_pd_gh200_a100.jsonl');
  const pdText = readFileSync(pdFile, 'utf8');
  const decodeAt = pdText.indexOf('"decode": [');
  const edited = pdText.slice(0, decodeAt) + pdText.slice(decodeAt).replace('"page_size": 1,', '"page_size": 16,');
  refusedAt(cli(['fit', write('pd-pages.jsonl', edited), '--import-only']), 'not_implemented', '/server_info/decode/0/page_size',
    /the servers differ: 16 here, 1 at \/server_info\/prefill\/0\/page_size; the replay has one serving\.kv_cache\.block_size/);
});

test('rule: SGLang server_info: runs whose servers ran other kernels are not fitted together', () => {
  const other = changed('flashinfer.jsonl', '"attention_backend": "fa3"', '"attention_backend": "flashinfer"');
  const r = cli(['fit', file, other, '--base', write('agg-held.json', aggBase()), '--holdout-every', '0']);
  refusedAt(r, 'constraint_violation', '/server_info/attention_backend',
    /flashinfer\.jsonl: the mixed server ran attention_backend "flashinfer", but .*tonyli_qwen25-3b_agg_c8\.jsonl ran it "fa3"/);
});
