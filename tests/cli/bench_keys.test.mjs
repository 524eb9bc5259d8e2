// Issue 34, "never guess", on every benchmark reader: each key of a file is
// read, on its format's documented list of keys not read
// (engine/fit/bench_import_ignored.cpp, docs/calibrate-from-benchmarks.md
// "Keys not read"), or refused at its own place in the file. Real files
// (tests/data/bench/real, SOURCES.md there), each with one invented key added
// at the top and inside a nested object (an MLPerf summary: one invented line).
// Judged by exit codes and output only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../wasm/wasm_module.mjs';
import { cli, workspace } from './fit_helpers.mjs';

const real = path.join(repoRoot, 'tests', 'data', 'bench', 'real');
const { write } = workspace('sightline-bench-keys-');
const json = (name) => JSON.parse(readFileSync(path.join(real, name), 'utf8'));
const text = (name) => readFileSync(path.join(real, name), 'utf8');
function refusal(file) {
  const r = cli(['fit', file, '--import-only']);
  assert.equal(r.code, 1, `${file} was read: ${r.out.slice(0, 300)}`);
  const m = r.err.match(/^error \[(\w+)\] at '([^']*)': (.*)$/m);
  assert.ok(m, r.err);
  return { code: m[1], at: m[2], message: m[3] };
}

// Every real file: read, or refused for the reason it was refused before the rule covered every key.
const expected = {
  'amd50_mi325x8_llama2-70b-99.9_offline_summary.txt': ['invalid_value', '/line/19'],
  'amd60_mi355x8_gpt-oss-120b_server_test07_summary.txt': ['invalid_value', '/line/81'],
  'anud18_qwen36-35b-a3b-nvfp4_rtx5090_agent_c4_profile_export_aiperf.json': ['not_implemented', '/input_config/datasets/0/format'],
  'er0080_opt125m_all_failed_v0.25.1.json': ['invalid_value', '/completed'],
  'er0080_qwen38-27b-fp8_speculative_v0.25.1.json': ['not_implemented', '/spec_decode_acceptance_length'],
};
test('every real file is read, or refused where it was before', () => {
  for (const name of readdirSync(real)) {
    const r = cli(['fit', path.join(real, name), '--import-only']);
    if (!expected[name]) {
      assert.equal(r.code, 0, `${name}: ${r.err}`);
      continue;
    }
    const m = r.err.match(/^error \[(\w+)\] at '([^']*)'/m);
    assert.deepEqual(m && [m[1], m[2]], expected[name], `${name}: ${r.err}`);
  }
});

const guidellm = 'korat_gpt-oss-20b_tp4_xpu.json';
const aiperf = 'anud18_qwen36-35b-a3b-nvfp4_rtx5090_chatbot_c8_profile_export_aiperf.json';
const vllmSummary = 'er0080_opt125m_sweep_seqs4_c2_summary.json';
const sglang = 'tonyli_qwen25-3b_pd_gh200_a100.jsonl';
const mlperfServer = 'nv51_gb200x4_llama2-70b-99_server_summary.txt';
const mlperfOffline = 'nv41_h200x8_llama2-70b-99_offline_summary.txt';
const edit = (name, change) => { const j = json(name); change(j); return j; };
const addLine = (name, after, line) => text(name).replace(after + '\n', `${after}\n${line}\n`);
const lineOf = (content, start) => content.split('\n').findIndex((l) => l.startsWith(start)) + 1;

const invented = [
  // file name, content, where it is refused, the key named
  ['guidellm-top.json', edit(guidellm, (j) => { j.report_kind = 'x'; }), '/report_kind', 'report_kind'],
  ['guidellm-strategy.json', edit(guidellm, (j) => { j.benchmarks[0].config.strategy.startup_duration = 5; }), '/benchmarks/0/config/strategy/startup_duration', 'benchmarks/0/config/strategy/startup_duration'],
  ['guidellm-metric.json', edit(guidellm, (j) => { j.benchmarks[0].metrics.time_to_first_token_ms.successful.trimmed_mean = 40; }), '/benchmarks/0/metrics/time_to_first_token_ms/successful/trimmed_mean', 'trimmed_mean'],
  ['guidellm-new-metric.json', edit(guidellm, (j) => { j.benchmarks[0].metrics.queue_time_ms = j.benchmarks[0].metrics.request_latency; }), '/benchmarks/0/metrics/queue_time_ms', 'queue_time_ms'],
  ['aiperf-top.json', edit(aiperf, (j) => { j.goodput = { unit: 'requests/sec', avg: 1 }; }), '/goodput', 'goodput'],
  ['aiperf-phase.json', edit(aiperf, (j) => { j.input_config.phases[1].ramp_up_seconds = 10; }), '/input_config/phases/1/ramp_up_seconds', 'ramp_up_seconds'],
  ['aiperf-metric.json', edit(aiperf, (j) => { j.time_to_first_token.trimmed_avg = 100; }), '/time_to_first_token/trimmed_avg', 'trimmed_avg'],
  ['vllm-sweep-item.json', edit(vllmSummary, (j) => { j[1].ramp_up_strategy = 'linear'; }), '/1/ramp_up_strategy', 'ramp_up_strategy'],
  ['sglang-line.jsonl', text(sglang).replace('"tag": "pd_inter_node"', '"tag": "pd_inter_node", "lora_name": "a"'), '/lora_name', 'lora_name'],
];
for (const [name, content, at, key] of invented) {
  test(`an invented key is refused at it: ${name} -> '${at}'`, () => {
    const r = refusal(write(name, content));
    assert.deepEqual([r.code, r.at], ['not_implemented', at]);
    assert.ok(r.message.includes(name) && r.message.includes(key), r.message);
  });
}

test('an invented MLPerf line is refused at its line, with a key or without', () => {
  const keyed = addLine(mlperfServer, 'Mode     : PerformanceOnly', 'Speculative decoding : Yes');
  const bare = addLine(mlperfOffline, 'Additional Stats', 'Samples were issued twice');
  for (const [name, content, start] of [['mlperf-key.txt', keyed, 'Speculative decoding'], ['mlperf-bare.txt', bare, 'Samples were issued twice']]) {
    const r = refusal(write(name, content));
    assert.deepEqual([r.code, r.at], ['not_implemented', `/line/${lineOf(content, start)}`]);
    assert.ok(r.message.includes(name) && r.message.includes(start), r.message);
  }
});

test('MLPerf settings that change the queries issued are read and refused when set', () => {
  for (const [setting, value] of [['max_async_queries : 0', 'max_async_queries : 8'], ['performance_issue_same : 0', 'performance_issue_same : 1'], ['Mode     : PerformanceOnly', 'Mode     : AccuracyOnly']]) {
    const content = text(mlperfServer).replace(setting, value);
    const r = refusal(write('mlperf-setting.txt', content));
    assert.deepEqual([r.code, r.at], ['not_implemented', `/line/${lineOf(content, value.split(' ')[0])}`], r.message);
  }
});

// GuideLLM's requests by status (korat, a synchronous run, with its counts changed): errored
// requests are named; one request cut in flight in a closed loop of 1 is read with a note;
// requests cut in flight in a rate run are refused at the count; an initial burst is refused.
test('GuideLLM: cancelled requests are read where the figures still mean what they say, refused where not', () => {
  const cut = edit(guidellm, (j) => { const t = j.benchmarks[0].metrics.request_totals; t.incomplete = 1; t.total = 26; });
  const [closed] = JSON.parse(cli(['fit', write('guidellm-cut-closed.json', cut), '--import-only']).out);
  assert.equal(closed.requests.completed, 25);
  assert.ok(closed.notes.some((n) => /1 requests in flight when the benchmark stopped were cancelled/.test(n)), closed.notes.join('\n'));
  const rate = edit(guidellm, (j) => {
    const b = j.benchmarks[0];
    b.config.strategy = { type_: 'poisson', worker_count: 1, max_concurrency: 512, rate: 0.05, random_seed: 42 };
    b.scheduler_metrics.requests_made.incomplete = 3; b.scheduler_metrics.requests_made.total = 33;
    b.scheduler_state.cancelled_requests = 10;
  });
  const r = refusal(write('guidellm-cut-rate.json', rate));
  assert.deepEqual([r.code, r.at], ['not_implemented', '/benchmarks/0/scheduler_metrics/requests_made/incomplete']);
  assert.match(r.message, /3 requests were in flight when the benchmark stopped/);
  const wrongTotal = edit(guidellm, (j) => { j.benchmarks[0].metrics.request_totals.total = 24; });
  assert.deepEqual(Object.values(refusal(write('guidellm-total.json', wrongTotal))).slice(0, 2), ['invalid_value', '/benchmarks/0/metrics/request_totals/total']);
});
