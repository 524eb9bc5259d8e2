// SGLang's server_info, argument by argument (engine/fit/bench_server_args.cpp):
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

// One change to the server's arguments, in both its copies (the top of
// server_info and internal_states, the scheduler's, which must agree), as a
// server started with that value writes them.
function changed(name, from, to) {
  assert.ok(text.includes(from), `${from} is in the file`);
  return write(name, text.replaceAll(from, to));
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
    ['/serving/scheduler/priority', 'prefill_alone', '/server_info/enable_mixed_chunk'],
    ['/serving/kv_cache/block_size', 1, '/server_info/page_size'],
    ['/serving/kv_cache/gpu_memory_utilization', 0.9, '/server_info/mem_fraction_static'],
  ]);
  // max_running_requests null: SGLang's own limit (2048 or more) never bound 8 clients.
  assert.equal(run.server.max_num_seqs, 8);
  assert.ok(run.notes.some((n) => /max_running_requests null: .* at most 8 requests in flight/.test(n)), run.notes.join('\n'));
  // Every key under server_info was taken by the table (none left to the key check), the
  // scheduler's copy key by key, what it measured when asked included.
  assert.ok(run.fields_used.includes('/server_info/attention_backend'));
  assert.ok(!run.fields_used.includes('/server_info/internal_states'));
  for (const key of ['tp_size', 'decode_attention_backend', 'pp_max_micro_batch_size', 'last_gen_throughput', 'memory_usage'])
    assert.ok(run.fields_used.includes(`/server_info/internal_states/0/${key}`), key);
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
  ['two-batch-overlap.jsonl', ['"enable_two_batch_overlap": false', '"enable_two_batch_overlap": true'], 'not_implemented', '/server_info/enable_two_batch_overlap', /enable_two_batch_overlap true: the base scenario's serving.moe.two_batch_overlap prices it, but a replay does not take it/],
  ['schedule-lof.jsonl', ['"schedule_policy": "fcfs"', '"schedule_policy": "lof"'], 'not_implemented', '/server_info/schedule_policy', /other policies are refused/],
  ['stream-interval.jsonl', ['"stream_interval": 1,', '"stream_interval": 8,'], 'not_implemented', '/server_info/stream_interval', /ITL and TPOT are per token/],
  ['max-total-tokens.jsonl', ['"max_total_tokens": null', '"max_total_tokens": 100000'], 'not_implemented', '/server_info/max_total_tokens', /cannot express/],
  ['many-clients.jsonl', ['"max_concurrency": 8', '"max_concurrency": 4096'], 'not_implemented', '/server_info/max_running_requests', /could have 4096 requests in flight/],
];
// Each rule's file, written by `edit`, is refused at its key before any replay.
function importRules(what, list, edit) {
  for (const [name, [from, to], code, at, message] of list) {
    test(`rule: SGLang ${what} ${name} -> ${code} at '${at}'`, () => {
      refusedAt(cli(['fit', edit(name, from, to), '--import-only']), code, at, message);
    });
  }
}
importRules('server_info', rules, changed);

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
  for (const [from, to] of edits) { assert.ok(t.includes(from), from); t = t.replaceAll(from, to); }
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

// --- internal_states: the scheduler's copy of the arguments (one entry per data-parallel
// rank), each key read against the server's own (engine/fit/bench_server_settings.cpp,
// read_scheduler_copy). The real file's scheduler resolved pp_max_micro_batch_size
// (null -> 4096), its prefill / decode attention backends (null -> "fa3") and
// disable_chunked_prefix_cache (false -> true): it passes (the first test above).

// One change to the scheduler's copy only (internal_states follows the arguments).
function inScheduler(name, from, to) {
  const at = text.indexOf('"internal_states": [');
  assert.ok(at > 0 && text.indexOf(from, at) > 0, `${from} is in internal_states`);
  return write(name, text.slice(0, at) + text.slice(at).replace(from, to));
}

const schedulerRules = [
  // name, [from, to], code, at, message: refused before any replay (--import-only).
  ['state-unknown.jsonl', ['"use_mla_backend": false, "last_gen_throughput"', '"use_mla_backend": false, "avg_spec_accept_length": 3.5, "last_gen_throughput"'],
    'not_implemented', '/server_info/internal_states/0/avg_spec_accept_length', /does not know: 'server_info\/internal_states\/0\/avg_spec_accept_length'/],
  ['state-tp.jsonl', ['"tp_size": 1,', '"tp_size": 2,'], 'constraint_violation', '/server_info/internal_states/0/tp_size',
    /the mixed server's scheduler ran tp_size 2, but the server's arguments say 1 \(at \/server_info\/tp_size\), which the replay compares with the base scenario: the file contradicts itself/],
  ['state-chunk.jsonl', ['"chunked_prefill_size": 8192', '"chunked_prefill_size": 4096'], 'constraint_violation', '/server_info/internal_states/0/chunked_prefill_size',
    /scheduler ran chunked_prefill_size 4096, but the server's arguments say 8192 \(at \/server_info\/chunked_prefill_size\), which the replay writes/],
  ['state-graphs.jsonl', ['"disable_cuda_graph": false', '"disable_cuda_graph": true'], 'constraint_violation', '/server_info/internal_states/0/disable_cuda_graph',
    /scheduler ran disable_cuda_graph true, but the server's arguments say false/],
  ['state-tbo.jsonl', ['"enable_two_batch_overlap": false', '"enable_two_batch_overlap": true'], 'not_implemented', '/server_info/internal_states/0/enable_two_batch_overlap',
    /the mixed server's scheduler ran with enable_two_batch_overlap true: the base scenario's serving.moe.two_batch_overlap prices it/],
  ['state-micro-batch.jsonl', ['"pp_max_micro_batch_size": 4096', '"pp_max_micro_batch_size": 64'], 'not_implemented', '/server_info/internal_states/0/pp_max_micro_batch_size',
    /scheduler ran with pp_max_micro_batch_size 64: null, or the 4096 SGLang's scheduler resolves it to/],
];
importRules('internal_states', schedulerRules, inScheduler);

test('rule: SGLang internal_states: what the scheduler measured when asked changes no figure', () => {
  const r = cli(['fit', inScheduler('state-measured.jsonl', '"last_gen_throughput": ', '"last_gen_throughput": 1'), '--import-only']);
  assert.equal(r.code, 0, r.err);
});

test('rule: SGLang internal_states: runs whose schedulers resolved other kernels are not fitted together', () => {
  // Both runs' arguments leave decode_attention_backend null; their schedulers ran fa3 and flashinfer.
  const other = inScheduler('state-flashinfer.jsonl', '"decode_attention_backend": "fa3"', '"decode_attention_backend": "flashinfer"');
  const r = cli(['fit', file, other, '--base', write('agg-held-state.json', aggBase()), '--holdout-every', '0']);
  refusedAt(r, 'constraint_violation', '/server_info/internal_states/0/decode_attention_backend',
    /state-flashinfer\.jsonl: the mixed server ran internal_states\/decode_attention_backend "flashinfer", but .*tonyli_qwen25-3b_agg_c8\.jsonl ran it "fa3"/);
});

// --- enable_dp_attention: SGLang's attention data parallelism (tp_size GPUs in dp_size
// ranks, attention on tp_size / dp_size of them, the experts over all tp_size, ep_size
// expert-parallel) is the engine's pool of tp tp_size / dp_size, dp_size replicas,
// serving.moe.attention_data_parallel dp_size and expert_parallel ep_size. No real
// bench_serving file with enable_dp_attention true was found (tests/data/bench/SOURCES.md):
// the real one-server file with its layout changed, in both copies.
const dpAttention = (tp, dp, ep) => changedTwice(`dp-attention-${tp}-${dp}-${ep}.jsonl`, [
  ['"tp_size": 1,', `"tp_size": ${tp},`], ['"dp_size": 1,', `"dp_size": ${dp},`], ['"ep_size": 1,', `"ep_size": ${ep},`],
  ['"enable_dp_attention": false', '"enable_dp_attention": true']]);
// An MoE base on `gpus` H100s: `pools` and serving.moe as given.
const moeBase = (gpus, pools, moe, model = 'qwen3-30b-a3b') => ({
  ...aggBase('sglang-overlap-like', { parallelism: undefined, cluster: { pools }, ...(moe ? { moe } : {}) }),
  model, hardware: { gpu: 'h100-sxm', gpus_per_node: gpus, ...(gpus > 1 ? { intra_node: 'nvlink4-nvswitch' } : {}) },
});
const wide8 = moeBase(8, [{ name: 'm', replicas: 8, tp: 1 }], { expert_parallel: 8, attention_data_parallel: 8 });

test('rule: SGLang enable_dp_attention: the layout is compared, and a base that runs it passes without a note', () => {
  const run = dpAttention(8, 8, 8);
  const imported = cli(['fit', run, '--import-only']);
  assert.equal(imported.code, 0, imported.err);
  const [r] = JSON.parse(imported.out);
  assert.deepEqual(r.server.deployment.map((s) => [s.tp, s.dp, s.ep, s.dp_attention]), [[8, 8, 8, true]]);
  assert.ok(!r.notes.some((n) => /attention data parallel/.test(n)), r.notes.join('\n'));
  // The base's layout passes the comparison: the fit replays the run. One closed-loop run of two figures
  // may determine no factor (its lengths drawn as the random dataset drew them); that is the fit's own
  // verdict, reached only after the deployment was accepted.
  const fit = cli(['fit', run, '--base', write('base-wide8.json', wide8), '--holdout-every', '0']);
  assert.ok(fit.code === 0 || /these runs determine none of the calibration's factors/.test(fit.err), fit.err);
  assert.doesNotMatch(fit.err, /base scenario runs|server_info\/(dp_size|ep_size|tp_size|enable_dp_attention)/);
});

const layouts = [
  // what, run file, base, at, message (both layouts named)
  ['tp 8 without attention data parallel', dpAttention(8, 8, 8), moeBase(8, [{ name: 'm', replicas: 1, tp: 8 }]), '/server_info/dp_size',
    /ran tp_size 8, dp_size 8 and ep_size 8 with enable_dp_attention \(the engine's tp 1, attention_data_parallel 8, expert_parallel 8\), but the base scenario runs tp 8, attention_data_parallel 1, expert_parallel 1 in its mixed pool/],
  ['experts tensor-parallel (ep_size 1)', dpAttention(8, 8, 1), wide8, '/server_info/ep_size',
    /ran tp_size 8, dp_size 8 and ep_size 1 with enable_dp_attention \(the engine's tp 1, attention_data_parallel 8, expert_parallel 1\), but the base scenario runs tp 1, attention_data_parallel 8, expert_parallel 8/],
  ['attention on 2 GPUs per rank', dpAttention(8, 4, 8), moeBase(4, [{ name: 'm', replicas: 4, tp: 1 }], { expert_parallel: 4, attention_data_parallel: 4 }), '/server_info/tp_size',
    /\(the engine's tp 2, attention_data_parallel 4, expert_parallel 8\), but the base scenario runs tp 1, attention_data_parallel 4, expert_parallel 4/],
  ['tp_size not a multiple of dp_size', dpAttention(8, 3, 8), wide8, '/server_info/dp_size', /each of the dp_size 3 ranks runs attention on tp_size \/ dp_size GPUs, but tp_size 8 is not a multiple of it/],
  ['a dense model', dpAttention(2, 2, 1), twoGpus({ parallelism: undefined, cluster: { pools: [{ name: 'm', replicas: 2, tp: 1 }] } }), '/server_info/dp_size',
    /\(the engine's tp 1, attention_data_parallel 2, expert_parallel 1\), but the base scenario runs tp 1, attention_data_parallel 1, expert_parallel 1/],
  ['a server without it on a base with it', file, moeBase(2, [{ name: 'm', replicas: 2, tp: 1 }], { expert_parallel: 2, attention_data_parallel: 2 }), '/server_info/enable_dp_attention',
    /ran tp_size 1, dp_size 1 and ep_size 1 without enable_dp_attention \(the engine's tp 1, attention_data_parallel 1, expert_parallel 1\), but the base scenario runs tp 1, attention_data_parallel 2, expert_parallel 2/],
];
for (const [what, runFile, base, at, message] of layouts) {
  test(`rule: SGLang enable_dp_attention against the base: ${what} -> refused at '${at}'`, () => {
    const r = cli(['fit', runFile, '--base', write(`base-layout-${what.replaceAll(/[^a-z0-9]+/g, '-')}.json`, base), '--holdout-every', '0']);
    refusedAt(r, 'constraint_violation', at, message);
  });
}
