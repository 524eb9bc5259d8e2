// Real benchmark result files (tests/data/bench/real, SOURCES.md there) are
// read with the load each tool applied, and every rule of issue 34 point 4
// has a file, a command and the located error it must give. Judged by exit
// codes and output only (no timing).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '../wasm/wasm_module.mjs';
import { cli, workspace } from './fit_helpers.mjs';

const real = path.join(repoRoot, 'tests', 'data', 'bench', 'real');
const fixtures = path.join(repoRoot, 'tests', 'data', 'bench');
const { work, write } = workspace('sightline-fit-files-');
function importRuns(file) {
  const r = cli(['fit', file, '--import-only']);
  assert.equal(r.code, 0, `${file}: ${r.err}`);
  return JSON.parse(r.out);
}
const near = (a, b, what) => assert.ok(Math.abs(a / b - 1) < 1e-6, `${what}: ${a} vs ${b}`);

// --- Each real file: the load, the request count, the lengths and the figures it records.

test('vLLM 0.25.1 bench serve: a closed loop of 2 (request_rate inf, max_concurrency 2)', () => {
  const [r] = importRuns(path.join(real, 'er0080_opt125m_bench_serve_v0.25.1.json'));
  assert.equal(r.format, 'vllm');
  assert.equal(r.model, 'facebook/opt-125m');
  assert.deepEqual([r.load.kind, r.load.concurrency, r.load.source], ['closed_loop', 2, '/max_concurrency']);
  assert.equal(r.requests.completed, 8);
  assert.deepEqual([r.lengths.prompt_tokens_mean, r.lengths.output_tokens_mean], [32, 16]);
  near(r.measured.ttft_mean_ms.value, 215.53594200008774, 'ttft');
  near(r.measured.tpot_mean_ms.value, 11.265828258331112, 'tpot');
  near(r.measured.requests_per_s.value, 5.180810671273421, 'rps');
  assert.equal(r.measured.e2e_mean_ms, undefined);  // this file has no mean_e2el_ms
});

test('vLLM bench sweep: the run file and the summary array, each run labelled vllm', () => {
  const [run] = importRuns(path.join(real, 'er0080_opt125m_sweep_seqs4_c2_run0.json'));
  assert.deepEqual([run.format, run.load.kind, run.load.concurrency, run.requests.completed], ['vllm', 'closed_loop', 2, 8]);
  assert.deepEqual([run.lengths.prompt_tokens_mean, run.lengths.output_tokens_mean], [256 / 8, 128 / 8]);
  near(run.measured.ttft_mean_ms.value, 217.27289337468392, 'ttft');
  near(run.measured.tpot_mean_ms.value, 8.204553624697533, 'tpot');
  near(run.measured.e2e_mean_ms.value, 340.3411977451469, 'e2e');
  const summary = importRuns(path.join(real, 'er0080_opt125m_sweep_seqs4_c2_summary.json'));
  assert.equal(summary.length, 2);
  assert.deepEqual(summary.map((s) => s.where), ['/0', '/1']);
  // Each run records the server's --max-num-seqs, which its replay runs with (test_bench_replay_settings.cpp).
  assert.deepEqual(summary.map((s) => s.server), [{ max_num_seqs: 4 }, { max_num_seqs: 4 }]);
  for (const s of summary) {
    assert.deepEqual([s.format, s.model], ['vllm', 'facebook/opt-125m']);
    assert.deepEqual([s.load.kind, s.load.concurrency, s.load.source, s.requests.completed], ['closed_loop', 2, `${s.where}/max_concurrency`, 8]);
    assert.deepEqual([s.lengths.prompt_tokens_mean, s.lengths.output_tokens_mean], [32, 16]);
  }
  near(summary[0].measured.ttft_mean_ms.value, run.measured.ttft_mean_ms.value, 'same run');
  near(summary[1].measured.ttft_mean_ms.value, 39.30731637592544, 'second run ttft');
  // The spread beside each mean (std_*_ms): the measured mean's own precision, which the fit weighs by.
  near(summary[0].measured.ttft_mean_ms.relative_standard_error, 309.1373405846827 / 217.27289337468392 / Math.sqrt(8), 'ttft se');
  near(summary[1].measured.tpot_mean_ms.relative_standard_error, 0.6070218873414794 / 8.012444900062594 / Math.sqrt(8), 'tpot se');
  assert.ok(summary[0].fields_used.includes('/0/std_ttft_ms'), JSON.stringify(summary[0].fields_used));
  near(summary[1].measured.tpot_mean_ms.value, 8.012444900062594, 'second run tpot');
});

test('vLLM run where every request failed: refused at completed', () => {
  const r = cli(['fit', path.join(real, 'er0080_opt125m_all_failed_v0.25.1.json'), '--import-only']);
  assert.equal(r.code, 1);
  assert.match(r.err, /error \[invalid_value\] at '\/completed': .*all_failed.*completed no request/);
});

test('SGLang late-2024 (medians only): six Poisson runs, read in full and compared as medians', () => {
  const runs = importRuns(path.join(real, 'datacrunch_llama31-405b_8xh200_online.jsonl'));
  assert.equal(runs.length, 6);
  assert.deepEqual(runs.map((r) => r.load.rate_qps), [1, 2, 4, 8, 4, 8]);
  assert.deepEqual(runs.map((r) => r.requests.completed), [300, 600, 1200, 2400, 1200, 2400]);
  for (const r of runs) {
    assert.deepEqual([r.format, r.load.kind, r.load.arrival], ['sglang', 'rate', 'poisson']);
    assert.equal(r.measured.ttft_mean_ms, undefined);
    assert.ok(r.measured.ttft_median_ms.value > 0 && r.measured.itl_median_ms.value > 0);
    assert.ok(r.notes.some((n) => /medians only/.test(n)));
  }
  near(runs[0].lengths.prompt_tokens_mean, 152612 / 300, 'prompt');
  near(runs[0].lengths.output_tokens_mean, 160347 / 300, 'output');
  near(runs[0].measured.ttft_median_ms.value, 218.80842198152095, 'median ttft');
  near(runs[0].measured.e2e_mean_ms.value, 24370.785914754182, 'e2e');
  // The random dataset's runs (random_range_ratio 0): lengths drawn uniformly in [1, 1024] (outputs from
  // int(1024 x 0) = 0, served from 1), their recorded means within the draws' error; ShareGPT runs keep the means.
  for (const r of runs.slice(0, 4)) {
    assert.deepEqual(r.lengths.prompt_tokens_dist, { dist: 'uniform', min: 1, max: 1024, source: `${r.where}/random_input_len` });
    assert.deepEqual(r.lengths.output_tokens_dist, { dist: 'uniform', min: 1, max: 1024, source: `${r.where}/random_output_len` });
    assert.ok(r.fields_used.includes(`${r.where}/random_range_ratio`), JSON.stringify(r.fields_used));
  }
  for (const r of runs.slice(4)) assert.equal(r.lengths.prompt_tokens_dist, undefined);
});

test('SGLang random dataset: a recorded mean the generator cannot give is replayed as the mean, with a note', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sightline-random-'));
  const line = JSON.parse(readFileSync(path.join(real, 'datacrunch_llama31-405b_8xh200_online.jsonl'), 'utf8').split('\n')[0]);
  line.total_output_tokens = 300 * 200;  // outputs cut short (EOS not ignored): a mean of 200, not about 512
  const file = path.join(dir, 'eos.jsonl');
  writeFileSync(file, JSON.stringify(line) + '\n');
  const [r] = importRuns(file);
  assert.deepEqual(r.lengths.prompt_tokens_dist, { dist: 'uniform', min: 1, max: 1024, source: '/random_input_len' });
  assert.equal(r.lengths.output_tokens_dist, null);
  assert.ok(r.notes.some((n) => /recorded mean output \(200\.0 tokens\) is not the generator's/.test(n)), JSON.stringify(r.notes));
});

test('SGLang late-2024, Llama-3.3-70B on 4xH200: seven Poisson runs of one cluster (a second sweep)', () => {
  const runs = importRuns(path.join(real, 'datacrunch_llama33-70b_4xh200_online.jsonl'));
  assert.deepEqual(runs.map((r) => r.load.rate_qps), [1, 2, 4, 8, 16, 4, 8]);
  assert.deepEqual(runs.map((r) => r.requests.completed), [300, 600, 1200, 2400, 3200, 1200, 2400]);
  for (const r of runs) assert.deepEqual([r.format, r.load.kind, r.load.arrival], ['sglang', 'rate', 'poisson']);
  near(runs[4].lengths.prompt_tokens_mean, 1629242 / 3200, 'prompt');
  near(runs[4].lengths.output_tokens_mean, 1642637 / 3200, 'output');
  near(runs[4].measured.ttft_median_ms.value, 614.2499720444903, 'median ttft');
  near(runs[4].measured.itl_median_ms.value, 179.12118090316653, 'median itl');
});

test('SGLang 2025 (request_rate Infinity, max_concurrency 8): a closed loop of 8', () => {
  const [r] = importRuns(path.join(real, 'tonyli_qwen25-3b_pd_gh200_a100.jsonl'));
  assert.deepEqual([r.format, r.load.kind, r.load.concurrency, r.requests.completed], ['sglang', 'closed_loop', 8, 50]);
  assert.equal(r.load.source, '/max_concurrency');
  near(r.lengths.prompt_tokens_mean, 3019 / 50, 'prompt');
  assert.ok(r.lengths.output_tokens_mean > 0);
  near(r.measured.ttft_mean_ms.value, 281.84517465531826, 'ttft');
  near(r.measured.tpot_mean_ms.value, 13.691778573993847, 'tpot');
});

test('SGLang 2025, one server (its arguments at the top of server_info): a closed loop of 8', () => {
  const [r] = importRuns(path.join(real, 'tonyli_qwen25-3b_agg_c8.jsonl'));
  assert.deepEqual([r.format, r.load.kind, r.load.concurrency, r.requests.completed], ['sglang', 'closed_loop', 8, 50]);
  near(r.lengths.prompt_tokens_mean, 3019 / 50, 'prompt');
  near(r.lengths.output_tokens_mean, 1401 / 50, 'output');
  near(r.measured.ttft_mean_ms.value, 115.28786353766918, 'ttft');
  near(r.measured.tpot_mean_ms.value, 6.627540826841212, 'tpot');
  // What the replay does with each server argument: tests/cli/fit_server_info.test.mjs.
});

test('GuideLLM 0.5: the strategy from benchmarks[i].config.strategy, the measured requests without warm-up', () => {
  const [r] = importRuns(path.join(real, 'korat_gpt-oss-20b_tp4_xpu.json'));
  assert.equal(r.format, 'guidellm');
  assert.equal(r.model, 'openai/gpt-oss-20b');
  assert.deepEqual([r.load.kind, r.load.concurrency, r.load.source], ['closed_loop', 1, '/benchmarks/0/config/strategy/type_']);
  assert.equal(r.requests.completed, 25);  // metrics.request_totals.successful, not the 30 made with warm-up
  near(r.lengths.prompt_tokens_mean, 92.72, 'prompt');
  assert.equal(r.lengths.output_tokens_mean, 1024);
  near(r.measured.ttft_mean_ms.value, 48.843650817871094, 'ttft');
  near(r.measured.tpot_mean_ms.value, 29.90631087667665, 'tpot (inter_token_latency_ms)');
  near(r.measured.e2e_mean_ms.value, 30644.14818763733, 'e2e (request_latency s)');
});

// Its replay, stopped at the window's end: tests/cli/fit_cut_runs.test.mjs.
test('GuideLLM 0.5: a Poisson 5 req/s run cut at 60 s (reduced form) is read with its window, refused before 2026-12-01', () => {
  const [run] = importRuns(path.join(real, 'nirjhar17_qwen3-0.6b_poisson5_reduced.json'));
  assert.deepEqual([run.format, run.model, run.load.kind, run.load.arrival], ['guidellm', 'Qwen/Qwen3-0.6B', 'rate', 'poisson']);
  assert.equal(run.requests.completed, 337);
  // The window's 340 requests (337 successful + 3 in flight at the stop) in its 60 s.
  assert.deepEqual(run.requests.stopped, { after_s: 60, sent: 340, in_flight: 3, source: '/benchmarks/0/duration' });
  assert.equal(run.load.rate_qps, 340 / 60);
  assert.ok(run.notes.some((n) => /^3 requests were in flight when the benchmark stopped after 60 s and are in no figure: the replay sends the window's 340 requests at 5\.667\/s \(the strategy's rate: 5\/s\)/.test(n)), run.notes.join('\n'));
  // 281 cancelled = the 3 in flight + 278 never sent (requests_made's 53 incomplete have no entry in any window metric).
  assert.ok(run.notes.some((n) => /^278 requests were created and cancelled before they were sent/.test(n)), run.notes.join('\n'));
  assert.equal(run.measured.ttft_mean_ms.value, 146.09641774118126);
  assert.equal(run.measured.tpot_mean_ms.value, 29.25066138074795);
});

test('AIPerf 0.10: the load from input_config.phases[], the warm-up phase left out', () => {
  const [r] = importRuns(path.join(real, 'anud18_qwen36-35b-a3b-nvfp4_rtx5090_chatbot_c8_profile_export_aiperf.json'));
  assert.deepEqual([r.format, r.model, r.load.kind, r.load.concurrency], ['aiperf', 'qwen3.6-nvfp4', 'closed_loop', 8]);
  assert.equal(r.load.source, '/input_config/phases/1/type');
  assert.equal(r.requests.completed, 96);
  near(r.lengths.prompt_tokens_mean, 467.4791666666667, 'prompt');
  near(r.lengths.output_tokens_mean, 228.23958333333334, 'output');
  near(r.measured.ttft_mean_ms.value, 118.05834635416667, 'ttft');
  near(r.measured.tpot_mean_ms.value, 9.05019651281432, 'tpot');
  assert.ok(r.notes.some((n) => /warmup/.test(n)));
});

test('AIPerf 0.10: a Poisson rate phase ({"type": "poisson", "rate"}) is read as that rate', () => {
  const [r] = importRuns(path.join(real, 'anud18_qwen36-35b-a3b-nvfp4_rtx5090_chatbot_r1.0_profile_export_aiperf.json'));
  assert.deepEqual([r.format, r.model, r.load.kind, r.load.arrival, r.load.rate_qps], ['aiperf', 'qwen3.6-nvfp4', 'rate', 'poisson', 1]);
  assert.equal(r.load.source, '/input_config/phases/1/type');
  assert.equal(r.load.max_concurrency ?? null, null, 'no concurrency in the phase: no cap');
  assert.equal(r.requests.completed, 96);
  near(r.lengths.prompt_tokens_mean, 574.5625, 'prompt');
  near(r.lengths.output_tokens_mean, 215.57291666666666, 'output');
  near(r.measured.ttft_mean_ms.value, 103.61575194791666, 'ttft');
  near(r.measured.tpot_mean_ms.value, 5.416936436115383, 'tpot (inter_token_latency)');
  assert.ok(r.notes.some((n) => /warmup/.test(n)));
});

test('MLPerf Server: the scheduled rate, completed = scheduled samples/s x min_duration; prompt asked', () => {
  const [r] = importRuns(path.join(real, 'nv41_gh200x1_llama2-70b-99.9_server_summary.txt'));
  assert.deepEqual([r.format, r.load.kind, r.load.arrival, r.load.rate_qps], ['mlperf', 'rate', 'poisson', 13.43]);
  assert.equal(r.requests.completed, Math.round(13.43 * 2400));
  assert.equal(r.requests.source, '/line/22');
  near(r.lengths.output_tokens_mean, 3883.67 / 13.33, 'output');
  assert.equal(r.lengths.prompt_tokens_mean, null);
  assert.ok(r.asks.some((a) => /--prompt-tokens/.test(a)));
  near(r.measured.ttft_mean_ms.value, 279.691518, 'ttft');
  near(r.measured.tpot_mean_ms.value, 161.348225, 'tpot');
});

test('MLPerf Offline: one closed batch of the samples LoadGen issued, compared on throughput', () => {
  // v4.1 pads samples_per_query (274,560) to a multiple of performance_sample_count without a
  // warning line: 107.477 samples/s x 2,743.948 s max latency = 294,911: 12 x 24,576 = 294,912.
  const [r] = importRuns(path.join(real, 'nv41_h200x8_llama2-70b-99_offline_summary.txt'));
  assert.deepEqual([r.format, r.load.kind, r.requests.completed], ['mlperf', 'batch', 12 * 24576]);
  assert.equal(r.requests.source, '/line/7');
  assert.equal(r.lengths.prompt_tokens_mean, null);
  assert.ok(r.asks.some((a) => /--prompt-tokens/.test(a)));
  near(r.lengths.output_tokens_mean, 31302.7 / 107.477, 'output');
  near(r.measured.output_tokens_per_s.value, 31302.7, 'tokens/s');
});

// --- Files the readers had never seen (docs/calibrate-from-benchmarks.md, "Checked on files it had
// never seen"): each defect they showed, on the real file that showed it.
function refusal(name) {
  const r = cli(['fit', path.join(real, name), '--import-only']);
  assert.equal(r.code, 1, `${name} was read: ${r.out.slice(0, 200)}`);
  return r.err;
}

test('MLPerf v6.0 Interactive: "Mean Time per Output Token" (the v6.0 spelling) is the TPOT', () => {
  const [r] = importRuns(path.join(real, 'amd60_mi355x8_llama2-70b-99.9_interactive_summary.txt'));
  // sample_concatenate_permutation: 263.64/s x 600 s = 158,184 queries, padded to 7 x 24,576.
  assert.deepEqual([r.load.kind, r.load.rate_qps, r.requests.completed], ['rate', 263.64, 7 * 24576]);
  near(r.measured.ttft_mean_ms.value, 241.97528, 'ttft');
  near(r.measured.tpot_mean_ms.value, 34.999429, 'tpot');
  assert.equal(r.measured.tpot_mean_ms.source, '/line/46');
  near(r.lengths.output_tokens_mean, 73608.25 / 260.10, 'output');
});

test('MLPerf Offline with sample_concatenate_permutation: the batch is samples_per_query padded to a multiple of performance_sample_count', () => {
  // 101.456 samples/s x 4,117.952 s max latency = 417,791 issued: 396,000 padded to 17 x 24,576.
  const [r] = importRuns(path.join(real, 'asus60_rtxpro6000x8_llama2-70b-99_offline_summary.txt'));
  assert.deepEqual([r.load.kind, r.requests.completed, r.requests.source], ['batch', 17 * 24576, '/line/7']);
  assert.ok(r.notes.some((n) => /padded to a multiple of performance_sample_count: 417792/.test(n)), r.notes.join('|'));
});

test('MLPerf Offline whose "Mean latency" lies below its own "Min latency": refused at the mean', () => {
  assert.match(refusal('amd50_mi325x8_llama2-70b-99.9_offline_summary.txt'),
    /error \[invalid_value\] at '\/line\/19': .*amd50.*:19: 'Mean latency \(ns\)' = 5559042821964 lies outside its own Min\/Max lines/);
});

test('MLPerf run whose summary reports an ERROR (a v6.0 TEST07 compliance run): refused at that line', () => {
  assert.match(refusal('amd60_mi355x8_gpt-oss-120b_server_test07_summary.txt'),
    /error \[invalid_value\] at '\/line\/81': .*:81: LoadGen reports '1 ERROR encountered\. See detailed log\.'/);
});

test('vLLM 0.25.1 run with speculative decoding (spec_decode_*): refused at the key, not read as plain decoding', () => {
  assert.match(refusal('er0080_qwen38-27b-fp8_speculative_v0.25.1.json'),
    /error \[not_implemented\] at '\/spec_decode_acceptance_length': .*speculative decoding/);
});

// --- The second round of unseen files (docs/calibrate-from-benchmarks.md, "Checked on files it had
// never seen (2026-11-30, second round)"): the request counts LoadGen issued, and AIPerf multi-turn.

test('MLPerf Server with sample_concatenate_permutation: the queries padded to a multiple of performance_sample_count', () => {
  // [file, scheduled rate, padded count, mean TTFT ms, mean TPOT ms, completed samples/s, tokens/s]
  const cases = [
    // Its mlperf_log_detail.txt (same directory) records generated_query_count 122880.
    ['nv51_gb200x4_llama2-70b-99_server_summary.txt', 182.04, 5 * 24576, 217.699203, 115.852553, 178.48, 49359.61],
    ['nv51_gb200x4_llama2-70b-99.9_interactive_summary.txt', 109.89, 6 * 24576, 57.914256, 30.583382, 109.31, 29745.55],
    ['nv51_gb200x72_llama3.1-405b_interactive_summary.txt', 15.21, 2 * 8313, 1365.09945, 66.169012, 15.18, 9921.02],
    ['amd61_mi355x8_gpt-oss-120b_server_summary.txt', 84.26, 24 * 6396, 1151.715995, 68.629658, 82.96, 113240.66],
    ['amd61_mi355x8_llama2-70b-99.9_interactive_summary.txt', 260.49, 7 * 24576, 222.231478, 32.731002, 258.22, 73191.51],
  ];
  for (const [name, rate, count, ttft, tpot, completed, tokens] of cases) {
    const [r] = importRuns(path.join(real, name));
    assert.deepEqual([r.load.kind, r.load.arrival, r.load.rate_qps, r.requests.completed], ['rate', 'poisson', rate, count], name);
    near(r.measured.ttft_mean_ms.value, ttft, `${name} ttft`);
    near(r.measured.tpot_mean_ms.value, tpot, `${name} tpot`);
    near(r.lengths.output_tokens_mean, tokens / completed, `${name} output`);
    assert.ok(r.notes.some((n) => /padded to a multiple of performance_sample_count/.test(n)), name);
  }
});

test('MLPerf Offline: the batch is what Samples per second x Max latency says LoadGen issued', () => {
  // [file, batch, why]
  const cases = [
    ['nv51_gb200x72_deepseek-r1_offline_summary.txt', 210624, 'the setting, a multiple of 4,388 already (77.995/s x 2,700.479 s)'],
    ['amd61_9x8mi355x_gpt-oss-120b_offline_summary.txt', 77 * 6396, '487,080 padded (762.084/s x 646.243 s = 492,492)'],
    ['asus51_amd_llama2-70b-99_offline_pergpu1_summary.txt', 3000, 'the setting, not padded (15.9912/s x 187.604 s = 3,000)'],
  ];
  for (const [name, batch, why] of cases) {
    const [r] = importRuns(path.join(real, name));
    assert.deepEqual([r.load.kind, r.requests.completed], ['batch', batch], `${name}: ${why}`);
  }
  const [pergpu] = importRuns(path.join(real, 'asus51_amd_llama2-70b-99_offline_pergpu1_summary.txt'));
  near(pergpu.lengths.output_tokens_mean, 4163.89 / 15.9912, 'output');
  assert.ok(pergpu.notes.some((n) => /LoadGen reports '1 warning encountered\. See detailed log\.' \(line 56\)/.test(n)), pergpu.notes.join('|'));
});

test('AIPerf 0.10 multi-turn dataset (input_config.datasets[].format multi_turn): refused at the key, not read as independent requests', () => {
  assert.match(refusal('anud18_qwen36-35b-a3b-nvfp4_rtx5090_agent_c4_profile_export_aiperf.json'),
    /error \[not_implemented\] at '\/input_config\/datasets\/0\/format': .*dataset format 'multi_turn': multi-turn sessions/);
});

// Issue 37's acceptance: every real file (tests/data/bench/real, and every file of
// ../shared/data/bench-files, of which real/ holds byte copies) has its own test above.
test('audit: every real benchmark file, and every one in ../shared/data/bench-files, is read or refused by a test here', () => {
  const self = readFileSync(new URL(import.meta.url), 'utf8');
  const tested = (name) => self.includes(`'${name}'`);
  const names = readdirSync(real).filter((n) => !n.startsWith('.'));
  assert.ok(names.length >= 11);
  for (const n of names) assert.ok(tested(n), `no test reads tests/data/bench/real/${n}`);
  const shared = path.join(repoRoot, '..', 'shared', 'data', 'bench-files');
  let sharedFiles = [];
  try {
    sharedFiles = readdirSync(shared, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile() && e.name !== 'SOURCES.md')
      .map((e) => path.join(e.parentPath ?? e.path, e.name));
  } catch { /* no ../shared beside this checkout: real/ holds the copies */ }
  for (const f of sharedFiles) {
    const n = path.basename(f);
    assert.ok(names.includes(n), `${f} has no copy in tests/data/bench/real`);
    assert.ok(readFileSync(f).equals(readFileSync(path.join(real, n))), `${n}: the copy in real/ differs from ${f}`);
  }
});

// --- Issue 34 point 4 and 6: a file, a command, the located error (code and path in the user's file).

const vllm = JSON.parse(readFileSync(path.join(real, 'er0080_opt125m_sweep_seqs4_c2_run0.json'), 'utf8'));
const mlperfText = readFileSync(path.join(real, 'nv41_gh200x1_llama2-70b-99.9_server_summary.txt'), 'utf8');
const ttftLine = mlperfText.split('\n').findIndex((l) => l.startsWith('Mean First Token latency')) + 1;

const rules = [
  // name, content, extra args, code, path, message pattern
  ['mlperf-suffix.txt', mlperfText.replace('Mean First Token latency (ns)               : 279691518', 'Mean First Token latency (ns)               : 42abc'), [], 'invalid_value', `/line/${ttftLine}`, new RegExp(`mlperf-suffix\\.txt:${ttftLine}:\\d+: .*42abc`)],
  ['mlperf-inf.txt', mlperfText.replace('Mean First Token latency (ns)               : 279691518', 'Mean First Token latency (ns)               : inf'), [], 'invalid_value', `/line/${ttftLine}`, /plain decimal/],
  ['mlperf-nan.txt', mlperfText.replace('Mean First Token latency (ns)               : 279691518', 'Mean First Token latency (ns)               : nan'), [], 'invalid_value', `/line/${ttftLine}`, /plain decimal/],
  ['mlperf-hex.txt', mlperfText.replace('Mean First Token latency (ns)               : 279691518', 'Mean First Token latency (ns)               : 0x10AB'), [], 'invalid_value', `/line/${ttftLine}`, /plain decimal/],
  ['mention.json', { ...vllm, label: 'MLPerf Results Summary' }, [], null, null, null],  // a substring does not make a format
  ['mention.txt', 'notes\nMLPerf Results Summary\nScenario : Server\n', [], 'invalid_value', '', /not JSON and not an MLPerf LoadGen summary/],
  ['forced.json', vllm, ['--bench-format', 'guidellm'], 'invalid_value', '', /structure of a vllm result/],
  ['dup.json', JSON.stringify(vllm).replace('"completed": 8', '"completed": 8, "completed": 9').replace('"completed":8', '"completed":8,"completed":9'), [], 'duplicate_key', '/completed', /dup\.json/],
  ['zero-prompt.json', { ...vllm, total_input_tokens: 0 }, [], 'invalid_value', '/total_input_tokens', /at least one token/],
  ['ttft-above-e2e.json', { ...vllm, mean_ttft_ms: 400 }, [], 'invalid_value', '/mean_ttft_ms', /exceeds the mean end-to-end/],
  ['one-token.json', { ...vllm, total_output_tokens: 8 }, [], 'invalid_value', '/mean_tpot_ms', /at least 2 output tokens/],
  ['seconds-ttft.json', { ...vllm, mean_ttft_ms: 0.05 }, [], 'invalid_value', '/mean_ttft_ms', /in seconds under a '_ms' key/],
  ['seconds-e2e.json', { ...vllm, mean_e2el_ms: 0.34 * 1000 * 1000 }, [], 'invalid_value', '/mean_e2el_ms', /disagrees with TTFT/],
  ['zero-completed.jsonl', [JSON.stringify({ ...vllm }), JSON.stringify({ ...vllm, completed: 0 })].join('\n') + '\n', [], 'invalid_value', '/1/completed', /zero-completed\.jsonl/],
  ['nan.json', JSON.stringify(vllm).replace('"mean_tpot_ms": 8.204553624697533', '"mean_tpot_ms": NaN').replace(/"mean_tpot_ms":8\.204553624697533/, '"mean_tpot_ms":NaN'), [], 'type_error', '/mean_tpot_ms', /must be a number, got string 'NaN'/],
  ['deep.json', '['.repeat(100000) + ']'.repeat(100000), [], 'parse_error', null, /deep\.json/],
  // A genai-perf session stimulus (multi-turn; see the perf_analyzer.stimulus test below) is refused.
  ['genai-perf-session.json', (() => { const g = JSON.parse(readFileSync(path.join(fixtures, 'genai_perf_profile_export_genai_perf.json'), 'utf8')); const { concurrency, request_rate, ...rest } = g.input_config; g.input_config = { ...rest, perf_analyzer: { stimulus: { session_concurrency: 4 } } }; return g; })(), [], 'not_implemented', '/input_config/perf_analyzer/stimulus/session_concurrency', /multi-turn sessions/],
  ['sglang-accept-length.jsonl', readFileSync(path.join(real, 'tonyli_qwen25-3b_pd_gh200_a100.jsonl'), 'utf8').replace('"accept_length": null', '"accept_length": 3.2'), [], 'not_implemented', '/accept_length', /speculative decoding/],
  ['vllm-multi-turn.json', { ...vllm, mode: 'multi_turn', num_conversations: 2 }, [], 'not_implemented', '/mode', /multi-turn/],
  // A key the reader neither reads nor lists as not changing the figures is refused at the key
  // (vLLM's ramp-up changes the rate during the run), as are images in SGLang prompts.
  ['vllm-unknown-key.json', { ...vllm, ramp_up_strategy: 'linear' }, [], 'not_implemented', '/ramp_up_strategy', /does not know: 'ramp_up_strategy'/],
  ['sglang-unknown-key.jsonl', readFileSync(path.join(real, 'tonyli_qwen25-3b_pd_gh200_a100.jsonl'), 'utf8').replace('"tag": "pd_inter_node"', '"tag": "pd_inter_node", "lora_name": "a"'), [], 'not_implemented', '/lora_name', /does not know: 'lora_name'/],
  ['sglang-vision.jsonl', readFileSync(path.join(real, 'tonyli_qwen25-3b_pd_gh200_a100.jsonl'), 'utf8').replace('"total_input_vision_tokens": 0', '"total_input_vision_tokens": 12'), [], 'not_implemented', '/total_input_vision_tokens', /images/],
  // LoadGen's count: an Offline batch that Samples per second x Max latency does not confirm, and a
  // padded Server count too near a multiple of performance_sample_count to tell which (real files,
  // one setting changed).
  ['mlperf-offline-count.txt', readFileSync(path.join(real, 'asus60_rtxpro6000x8_llama2-70b-99_offline_summary.txt'), 'utf8').replace('samples_per_query : 396000', 'samples_per_query : 300000'), [], 'invalid_value', '/line/7', /= 417791 samples issued is neither samples_per_query \(300000\) nor its padding/],
  ['mlperf-server-ambiguous.txt', readFileSync(path.join(real, 'nv51_gb200x4_llama2-70b-99_server_summary.txt'), 'utf8').replace('min_duration (ms): 600000', 'min_duration (ms): 674577'), [], 'invalid_value', '/line/22', /\(122800\) lies too near 122880 to tell which multiple/],
  ['aiperf-no-load.json', (() => { const a = JSON.parse(readFileSync(path.join(real, 'anud18_qwen36-35b-a3b-nvfp4_rtx5090_chatbot_c8_profile_export_aiperf.json'), 'utf8')); delete a.input_config.phases; return a; })(), [], 'missing_key', '/input_config/concurrency', /does not record the load/],
];

for (const [name, content, extra, code, where, message] of rules) {
  test(`rule: ${name} ${code ? `-> ${code} at '${where}'` : 'is read'}`, () => {
    const r = cli(['fit', write(name, content), '--import-only', ...extra]);
    if (!code) {
      assert.equal(r.code, 0, r.err);
      assert.equal(JSON.parse(r.out)[0].format, 'vllm');
      return;
    }
    assert.equal(r.code, 1, `${name}: ${r.out}`);
    const m = r.err.match(/^error \[(\w+)\] at '([^']*)': (.*)$/m);
    assert.ok(m, r.err);
    assert.equal(m[1], code, r.err);
    if (where !== null) assert.equal(m[2], where, r.err);
    assert.ok(m[3].includes(name), `the message names the file: ${r.err}`);
    assert.match(m[3], message);
  });
}

// genai-perf's config-file layout keeps the load in input_config.perf_analyzer.stimulus (one of
// concurrency, request_rate, session_concurrency, session_request_rate: triton-inference-server/
// perf_analyzer genai-perf/genai_perf/config/input/config_perf_analyzer.py) and the model in
// input_config.model_names, as in wellflat/k8s-dev@e17e8f5b:bench/etl/profile_export_genai_perf.json
// (41.5 KB, mostly GPU telemetry: not copied here). The example export with its load and model moved there:
// The rest of that file's input_config, as it writes it (its endpoint, tokenizer and sweep range left out).
const wellflatInputConfig = {
  subcommand: 'profile', verbose: true, template_filename: 'genai_perf_config.yaml',
  perf_analyzer: { path: 'perf_analyzer', verbose: false, stability_percentage: 999, measurement: { mode: 'request_count', num: 100 }, warmup_request_count: 10 },
  input: {
    batch_size: 1, extra: '', goodput: '', header: '', file: '', num_dataset_entries: 200, random_seed: 42,
    audio: { batch_size: 1, length: { mean: 0, stddev: 0 }, format: 'wav', depths: [16], sample_rates: [16], num_channels: 1 },
    image: { width: { mean: 0, stddev: 0 }, height: { mean: 0, stddev: 0 }, batch_size: 1, format: 'png' },
    output_tokens: { mean: 300, deterministic: false, stddev: 30 }, synthetic_tokens: { mean: 150, stddev: 30 },
    prefix_prompt: { num: 0, length: 100 }, sessions: { num: 0, turns: { mean: 1, stddev: 0 }, turn_delay: { mean: 0, ratio: 1.0, stddev: 0 } },
    prompt_source: 'synthetic', synthetic_files: [], payload_file: '',
  },
  output: { artifact_directory: 'benchmark_results', checkpoint_directory: 'checkpoint', profile_export_file: 'profile_export.json', generate_plots: false, enable_checkpointing: false },
  process: { input_path: 'aggregated' },
};
test('genai-perf config-file layout: the load from perf_analyzer.stimulus, the model from model_names', () => {
  const g = JSON.parse(readFileSync(path.join(fixtures, 'genai_perf_profile_export_genai_perf.json'), 'utf8'));
  const { concurrency, request_rate, model, ...rest } = g.input_config;
  for (const stimulus of [{ request_rate }, { concurrency: 4 }]) {
    g.input_config = { ...rest, model_names: model, ...wellflatInputConfig, perf_analyzer: { ...wellflatInputConfig.perf_analyzer, stimulus } };
    const [r] = importRuns(write('genai-perf-stimulus.json', g));
    assert.equal(r.format, 'genai-perf');
    assert.equal(r.model, model[0]);
    if (stimulus.concurrency) assert.deepEqual([r.load.kind, r.load.concurrency, r.load.source], ['closed_loop', 4, '/input_config/perf_analyzer/stimulus/concurrency']);
    else assert.deepEqual([r.load.kind, r.load.rate_qps, r.load.source], ['rate', request_rate, '/input_config/perf_analyzer/stimulus/request_rate']);
  }
});

test('genai-perf config-file layout: a shared prompt prefix or sessions are refused at the setting', () => {
  const g = JSON.parse(readFileSync(path.join(fixtures, 'genai_perf_profile_export_genai_perf.json'), 'utf8'));
  for (const [key, at] of [['prefix_prompt', '/input_config/input/prefix_prompt/num'], ['sessions', '/input_config/input/sessions/num']]) {
    g.input_config = { ...g.input_config, ...wellflatInputConfig, input: { ...wellflatInputConfig.input, [key]: { ...wellflatInputConfig.input[key], num: 4 } } };
    const r = cli(['fit', write('genai-perf-input.json', g), '--import-only']);
    assert.equal(r.code, 1, r.out);
    assert.match(r.err, new RegExp(`error \\[not_implemented\\] at '${at}'`));
  }
});

test('rule: a benchmark file past the size cap is refused before it is read', () => {
  const big = write('big.json', ' '.repeat(65 << 20));
  const r = cli(['fit', big, '--import-only']);
  assert.equal(r.code, 1);
  assert.match(r.err, /error \[limit_exceeded\] at '': .*big\.json: the file is 65 MiB/);
});

function base(extra = {}) {
  return {
    schema_version: 1, id: 'fit-files-base', seed: 7, model: 'llama-2-7b',
    hardware: { gpu: 'a100-80g-sxm', gpus_per_node: 1 },
    serving: { mode: 'simulate', parallelism: { tp: 1, pp: 1 }, scheduler: { policy: 'continuous' },
      workload: { arrival: { process: 'poisson', rate_qps: 1 }, num_requests: 10, prompt_tokens: { dist: 'fixed', value: 128 }, output_tokens: { dist: 'fixed', value: 16 } }, ...extra },
  };
}

test('rule: a replay problem is located at the benchmark file key that gave the value, not at a scenario path', () => {
  const long = write('long-prompts.json', { ...vllm, total_input_tokens: 8 * 9000 });
  const r = cli(['fit', long, '--base', write('base.json', base())]);
  assert.equal(r.code, 1);
  assert.match(r.err, /^error \[\w+\] at '\/total_input_tokens': .*long-prompts\.json: replaying this run on .*base\.json/m);
});

test('rule: MLPerf without --prompt-tokens asks for the prompt length, located in that file', () => {
  const f = write('mlperf-server.txt', mlperfText);
  const r = cli(['fit', f, '--base', write('base70.json', base())]);
  assert.equal(r.code, 1);
  assert.match(r.err, /error \[missing_key\] at '': .*mlperf-server\.txt: the file does not record prompt lengths: give --prompt-tokens/);
});

// --- The fit's honesty and bounds (issue 37 point 2, issue 34 point 7).

test('fit: a closed loop is replayed as one (arrival closed_loop at its concurrency), with every request it completed', () => {
  const out = path.join(work, 'closed-loop.json');
  const r = cli(['fit', path.join(real, 'er0080_opt125m_sweep_seqs4_c2_summary.json'), '--base', write('base-closed.json', base()), '--holdout-every', '0', '--out', out]);
  assert.equal(r.code, 0, r.err);
  const fit = JSON.parse(readFileSync(out, 'utf8')).fit;
  assert.equal(fit.runs.length, 2);
  for (const run of fit.runs) {
    assert.deepEqual(run.replayed_arrival, { process: 'closed_loop', concurrency: 2 });
    assert.equal(run.replayed_requests, 8);
  }
  assert.deepEqual(fit.fitted_on.concurrency, [2, 2]);
  // The cold first run's mean TTFT (std 309 ms over 8 requests) weighs little: the fit follows the second
  // run's TTFT and both TPOTs, where the two runs, the same configuration, agree.
  const rows = fit.in_sample.runs;
  assert.ok(Math.abs(rows[1].figures.find((x) => x.metric === 'ttft_mean_ms').error_calibrated) < 0.1, JSON.stringify(rows[1]));
  // A closed-loop scenario outside the concurrencies it was fitted on is told, at its own key.
  const closedRun = (clients) => {
    const sc = base();
    sc.id = `closed-${clients}`;
    sc.serving.workload = { arrival: { process: 'closed_loop', concurrency: clients }, num_requests: 8, prompt_tokens: 32, output_tokens: 16 };
    const rr = cli(['run', write(`${sc.id}.json`, sc), '--calibration', out, '--format', 'json', '--central-only']);
    assert.equal(rr.code, 0, rr.err);
    return JSON.parse(rr.out).result.warnings.filter((w) => /^calibration_out_of_range at \/serving\/workload\/arrival/.test(w));
  };
  assert.deepEqual(closedRun(2), []);
  const [outside] = closedRun(8);
  assert.match(outside, /^calibration_out_of_range at \/serving\/workload\/arrival\/concurrency: concurrency \(clients\) 8 is outside the range the calibration was fitted on \[2, 2\]/);
  assert.ok(!fit.warnings.some((w) => /replayed \d+ of the/.test(w)), JSON.stringify(fit.warnings));
});

// A finite request_rate with max_concurrency: no real file of that kind has been found yet (issue 37),
// so this is the real vLLM 0.25.1 sweep file (er0080, SOURCES.md) with one change, its request_rate
// set to 4.0: every other key is as vLLM wrote it. vLLM draws the arrivals from the rate and holds
// one that finds max_concurrency requests in flight at the client (engine/serve/client_cap.hpp).
test('vLLM: a finite request_rate with max_concurrency is read as the rate with the client\'s cap, and replayed with it', () => {
  const capped = { ...vllm, request_rate: 4.0 };
  const [r] = importRuns(write('rate-cap.json', capped));
  assert.deepEqual([r.format, r.load.kind, r.load.arrival, r.load.rate_qps, r.load.max_concurrency, r.load.source],
    ['vllm', 'rate', 'poisson', 4, 2, '/request_rate']);
  assert.equal(r.load.concurrency, undefined);  // not a closed loop
  assert.equal(r.requests.completed, 8);
  assert.ok(r.notes.some((n) => /max_concurrency 2: an arrival that finds 2 requests in flight waits at the client/.test(n)), JSON.stringify(r.notes));
  assert.ok(!r.notes.some((n) => /not replayed/.test(n)), JSON.stringify(r.notes));
  assert.ok(r.fields_used.includes('/max_concurrency'), JSON.stringify(r.fields_used));
  // The fit replays it with the cap (run's own count 8: a cap of 2 binds).
  const out = path.join(work, 'rate-cap-fit.json');
  const summary = write('rate-cap-summary.json', [capped, { ...capped, request_rate: 2.0 }]);
  const f = cli(['fit', summary, '--base', write('base-cap.json', base()), '--holdout-every', '0', '--out', out]);
  assert.equal(f.code, 0, f.err);
  const runs = JSON.parse(readFileSync(out, 'utf8')).fit.runs;
  assert.deepEqual(runs.map((x) => x.replayed_arrival),
    [{ process: 'poisson', rate_qps: 4, max_concurrency: 2 }, { process: 'poisson', rate_qps: 2, max_concurrency: 2 }]);
});

test('fit: one run (a TTFT and a TPOT) fits at most one factor; the others are held at no correction, named, and not written', () => {
  const out = path.join(work, 'one-run.json');
  const r = cli(['fit', path.join(real, 'er0080_opt125m_bench_serve_v0.25.1.json'), '--base', write('base-one.json', base()), '--out', out]);
  assert.equal(r.code, 0, r.err);
  const cal = JSON.parse(readFileSync(out, 'utf8'));
  // Two figures (TTFT, TPOT) leave one to spare for the misfit at one factor.
  assert.ok(cal.fit.fitted.length <= 1, JSON.stringify(cal.fit.fitted));  // one figure to spare
  const held = Object.keys(cal.fit.held_at_no_correction);
  assert.ok(held.length >= 4, JSON.stringify(cal.fit.held_at_no_correction));
  for (const k of held) {
    assert.equal(cal.fit.standard_errors[k], null, k);
    if (k === 'request_latency_ms') assert.equal(cal.fit.request_latency_ms, 0);
    else assert.equal(cal.factors[k], k === 'host_us_per_step' ? 0 : 1, `${k} is written as no correction`);
  }
  assert.match(r.out, /held at no correction/);
});

test('fit --holdout-every: N >= 2 holds every N-th run out and reports it; 0 holds none out; 1 is a usage error', () => {
  const sg = path.join(real, 'er0080_opt125m_sweep_seqs4_c2_summary.json');  // two runs
  const b = write('base-holdout.json', base());
  const two = cli(['fit', sg, '--base', b, '--holdout-every', '2', '--format', 'json']);
  assert.equal(two.code, 0, two.err);
  const cal = JSON.parse(two.out);
  assert.equal(cal.fit.held_out.every, 2);
  assert.equal(cal.fit.held_out.runs.length, 1);
  assert.equal(cal.fit.held_out.runs[0].where, cal.fit.runs[1].where);
  for (const k of ['median_abs_error', 'median_abs_error_uncalibrated']) assert.equal(typeof cal.fit.held_out[k], 'number', k);
  // Two runs: too few to leave one out, and the report says so.
  assert.match(cal.fit.leave_one_run_out.skipped, /at least 3 runs/);
  const none = cli(['fit', sg, '--base', b, '--holdout-every', '0', '--format', 'json']);
  assert.equal(none.code, 0, none.err);
  assert.equal(JSON.parse(none.out).fit.held_out, null);
  const five = cli(['fit', sg, '--base', b, '--holdout-every', '5']);
  assert.equal(five.code, 0, five.err);
  assert.match(five.out, /no held-out runs \(holding out every 5-th run leaves none out of these 2 runs\)/);
  const one = cli(['fit', sg, '--base', b, '--holdout-every', '1']);
  assert.equal(one.code, 2);
  assert.match(one.err, /--holdout-every N takes 0/);
});

test('fit: 300 runs are refused by the work estimate before any replay, naming the flag that raises it', () => {
  const line = readFileSync(path.join(real, 'datacrunch_llama31-405b_8xh200_online.jsonl'), 'utf8').split('\n')[0];
  const many = write('many.jsonl', Array.from({ length: 300 }, (_, i) => line.replace('"request_rate": 1.0', `"request_rate": ${1 + i / 100}`)).join('\n') + '\n');
  const r = cli(['fit', many, '--base', write('base-many.json', base())]);
  assert.equal(r.code, 1);
  // The estimate stops as soon as the budget is known to be short: it names
  // how many of the 300 runs it priced, far fewer than all.
  const m = r.err.match(/error \[limit_exceeded\] at '': fit: replaying the first (\d+) of the 300 runs once takes up to \d+ work units.*raise --max-work-units/);
  assert.ok(m, r.err);
  assert.ok(Number(m[1]) < 300);
});

test('rule: a deeply nested --base is a located parse error at the base file, not a crash', () => {
  const r = cli(['fit', path.join(real, 'er0080_opt125m_bench_serve_v0.25.1.json'), '--base', write('deep-base.json', '{"a":'.repeat(50000) + '1' + '}'.repeat(50000))]);
  assert.equal(r.code, 1, r.err);
  assert.match(r.err, /^error \[parse_error\] at '[^']*': .*deep-base\.json: /m);
});

test('vLLM --append-result JSON lines are read as vllm runs with their model id', () => {
  const lines = [vllm, { ...vllm, max_concurrency: 4 }].map((o) => JSON.stringify(o)).join('\n') + '\n';
  const runs = importRuns(write('appended.json', lines));
  assert.deepEqual(runs.map((r) => [r.format, r.model, r.where, r.load.concurrency]),
    [['vllm', 'facebook/opt-125m', '/0', 2], ['vllm', 'facebook/opt-125m', '/1', 4]]);
});

test('rule: one place adds a calibration\'s per-request latency to TTFT and E2E (jobs/client_request_latency)', () => {
  // The fit's replays and `run` go through the same job; a second place that
  // adds the latency (as the fit once did in its predictions) would let the fit
  // model something `run` does not apply.
  const files = [];
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(cpp|hpp)$/.test(e.name)) files.push(p);
    }
  };
  walk(path.join(repoRoot, 'engine'));
  // A line that adds (+) and names both a TTFT/E2E figure and the latency.
  const addsLine = (l) => /\+/.test(l) && /(ttft|e2e)/.test(l) && /(request_latency|request_ms)/.test(l);
  const adds = (text) => text.split('\n').some(addsLine);
  const offenders = files.filter((f) => !f.includes('client_request_latency') && adds(readFileSync(f, 'utf8')));
  assert.deepEqual(offenders.map((f) => path.relative(repoRoot, f)), []);
  assert.ok(adds('  return it->second + (t.statistic.rfind("ttft", 0) == 0 ? request_ms : 0);'), 'the pattern catches the old fit-side addition');
});

// --- SGLang's server_info: the deployment the server reports, against the base scenario's.

// A base for the tonyli PD run (one prefill and one decode server, tp 1 each, bf16): `pools` as given.
function pdBase(pools, precision = undefined) {
  const gpus = pools.reduce((n, p) => n + p.replicas * p.tp, 0);
  return {
    schema_version: 1, id: 'fit-pd-base', seed: 7, model: 'llama-2-7b',
    hardware: { gpu: 'h100-sxm', gpus_per_node: gpus, ...(gpus > 1 ? { intra_node: 'nvlink4-nvswitch' } : {}) },
    ...(precision ? { precision } : {}),
    cost_model: { software_stack: 'sglang-overlap-like' },  // the servers' overlap scheduler and CUDA graphs
    serving: { mode: 'simulate', cluster: { pools },
      workload: { arrival: { process: 'poisson', rate_qps: 1 }, num_requests: 10, prompt_tokens: { dist: 'fixed', value: 128 }, output_tokens: { dist: 'fixed', value: 16 } } },
  };
}
const pd = (tpPrefill, decodeReplicas) => [
  { name: 'p', replicas: 1, tp: tpPrefill, role: 'prefill' }, { name: 'd', replicas: decodeReplicas, tp: 1, role: 'decode' }];

test('rule: SGLang server_info is read for its deployment; a base scenario that contradicts it is refused at the file\'s key', () => {
  const file = path.join(real, 'tonyli_qwen25-3b_pd_gh200_a100.jsonl');
  const [r] = importRuns(file);
  assert.deepEqual(r.server.deployment.map((s) => [s.at, s.role, s.tp, s.pp, s.dp]),
    [['/server_info/prefill/0', 'prefill', 1, 1, 1], ['/server_info/decode/0', 'decode', 1, 1, 1]]);
  assert.ok(r.notes.some((n) => /server_info: the deployment .* are compared with the base scenario's; 4 scheduler and KV settings are replayed/.test(n)), r.notes.join('\n'));
  // The prefill server's radix cache and token budget (the decode server runs no prompt); both servers' page size and memory.
  assert.deepEqual(r.server.replayed.map((s) => [s.scenario, s.source]), [
    ['/serving/kv_cache/prefix_caching', '/server_info/prefill/0/disable_radix_cache'],
    ['/serving/scheduler/max_num_batched_tokens', '/server_info/prefill/0/chunked_prefill_size'],
    ['/serving/kv_cache/block_size', '/server_info/prefill/0/page_size'],
    ['/serving/kv_cache/gpu_memory_utilization', '/server_info/prefill/0/mem_fraction_static']]);
  // The server's own deployment passes the comparison (the single run then pins no factor: a later, other refusal).
  const same = cli(['fit', file, '--base', write('pd-same.json', pdBase(pd(1, 1)))]);
  assert.match(same.err, /determine none of the calibration's factors/, same.err);
  const cases = [
    ['pd-tp2.json', pdBase(pd(2, 1)), '/server_info/prefill/0/tp_size', /prefill server ran tp_size 1, but the base scenario runs tp 2/],
    ['pd-two-decoders.json', pdBase(pd(1, 2)), '/server_info/decode/0/dp_size', /decode server ran 1 replica .*has 2 decode replicas/],
    ['pd-mixed.json', base(), '/server_info/prefill/0', /reports a prefill server, but the base scenario has no prefill pool/],
    ['pd-fp8-kv.json', pdBase(pd(1, 1), { kv_cache: 'fp8' }), null, null],
  ];
  for (const [name, doc, at, message] of cases) {
    const f = cli(['fit', file, '--base', write(name, doc)]);
    if (!at) {  // passes the comparison: refused later, only because one run pins no factor
      assert.match(f.err, /determine none of the calibration's factors/, `${name}: kv_cache_dtype "auto" is not compared: ${f.err}`);
      continue;
    }
    assert.equal(f.code, 1, name);
    assert.match(f.err, new RegExp(`^error \\[constraint_violation\\] at '${at}': .*tonyli_qwen25-3b_pd_gh200_a100\\.jsonl: `, 'm'), `${name}: ${f.err}`);
    assert.match(f.err, message, name);
  }
});

test('rule: SGLang server_info: a stated KV format or quantization must match the base; speculation is refused; max_running_requests is replayed', () => {
  const text = readFileSync(path.join(real, 'tonyli_qwen25-3b_pd_gh200_a100.jsonl'), 'utf8');
  const kv = write('sglang-kv-fp8.jsonl', text.replaceAll('"kv_cache_dtype": "auto"', '"kv_cache_dtype": "fp8_e4m3"'));
  const bf16 = cli(['fit', kv, '--base', write('pd-bf16.json', pdBase(pd(1, 1)))]);
  assert.match(bf16.err, /^error \[constraint_violation\] at '\/server_info\/prefill\/0\/kv_cache_dtype': .*KV cache in fp8, but the base scenario keeps it in bf16/m);
  const fp8 = cli(['fit', kv, '--base', write('pd-kv8.json', pdBase(pd(1, 1), { kv_cache: 'fp8' }))]);
  assert.match(fp8.err, /determine none of the calibration's factors/, fp8.err);
  const quant = write('sglang-fp8.jsonl', text.replaceAll('"quantization": null', '"quantization": "fp8"'));
  assert.match(cli(['fit', quant, '--base', write('pd-bf16w.json', pdBase(pd(1, 1)))]).err,
    /at '\/server_info\/prefill\/0\/quantization': .*with fp8 weights, but the base scenario has bf16 weights/);
  const spec = write('sglang-eagle.jsonl', text.replaceAll('"speculative_algorithm": null', '"speculative_algorithm": "EAGLE"'));
  const s = cli(['fit', spec, '--import-only']);
  assert.equal(s.code, 1);
  assert.match(s.err, /^error \[not_implemented\] at '\/server_info\/prefill\/0\/speculative_algorithm': .*decoded speculatively/m);
  const limited = write('sglang-mrr.jsonl', text.replaceAll('"max_running_requests": null', '"max_running_requests": 48'));
  const [m] = importRuns(limited);
  assert.equal(m.server.max_num_seqs, 48);
});
