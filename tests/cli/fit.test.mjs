// Benchmark import and cluster calibration (`sightline fit`, `run --calibration`).
// The round trip: a known "truth" cluster (efficiencies and host time per step
// perturbed by known amounts through a calibration file) is run through the real
// CLI, its results are written in every supported benchmark format with the
// field names each tool writes, and `fit` must recover the perturbation and
// predict a different scenario on the same cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../wasm/wasm_module.mjs';
import { cli, workspace } from './fit_helpers.mjs';

const fixtures = path.join(repoRoot, 'tests', 'data', 'bench');
const real = path.join(fixtures, 'real');
const { work, write } = workspace('sightline-fit-');

const fixed = (v) => ({ dist: 'fixed', value: v });
function scenario(model, rate, prompt, output, requests = 200, process = 'poisson') {
  return {
    schema_version: 1,
    id: `fit-${model}-${rate}-${prompt}-${output}`,
    seed: 7,
    model,
    hardware: { gpu: 'a100-80g-sxm', gpus_per_node: 1 },
    serving: {
      mode: 'simulate',
      parallelism: { tp: 1, pp: 1 },
      workload: { arrival: { process, rate_qps: rate }, num_requests: requests, prompt_tokens: fixed(prompt), output_tokens: fixed(output) },
      scheduler: { policy: 'continuous' },
    },
  };
}

const truth = { id: 'truth', source: 'fit.test.mjs: known perturbation', factors: { compute_efficiency_scale: 0.8, memory_efficiency_scale: 0.9, comm_efficiency_scale: 1, host_us_per_step: 300 } };
const truthFile = write('truth.json', truth);

function runMetrics(s, calFile) {
  const args = ['run', write(`${s.id}.json`, s), '--format', 'json', '--central-only'];
  if (calFile) args.push('--calibration', calFile);
  const r = cli(args);
  assert.equal(r.code, 0, r.err);
  return JSON.parse(r.out).result;
}

// The measured figures each writer needs, from a truth run.
function measured(s) {
  const r = runMetrics(s, truthFile);
  const m = r.metrics;
  const w = s.serving.workload;
  return {
    process: w.arrival.process, rate: w.arrival.rate_qps, n: m.requests.completed, prompt: w.prompt_tokens.value, output: w.output_tokens.value,
    ttft: m.ttft_ms.mean, tpot: m.tpot_ms.mean, itl: m.itl_ms.mean, e2e_ms: m.e2e_s.mean * 1e3,
    rps: m.throughput.requests_per_s, otps: m.throughput.output_tokens_per_s, duration: m.duration_s,
  };
}

const writers = {
  vllm: (x) => ({ date: '20260101-000000', backend: 'vllm', model_id: 'meta-llama/Llama-2-7b-hf', tokenizer_id: 'meta-llama/Llama-2-7b-hf', num_prompts: x.n, request_rate: x.rate, burstiness: 1.0, max_concurrency: null, duration: x.duration, completed: x.n, total_input_tokens: x.n * x.prompt, total_output_tokens: x.n * x.output, request_throughput: x.rps, request_goodput: null, output_throughput: x.otps, total_token_throughput: x.otps * (1 + x.prompt / x.output), mean_ttft_ms: x.ttft, median_ttft_ms: x.ttft, std_ttft_ms: 0, p99_ttft_ms: x.ttft, mean_tpot_ms: x.tpot, median_tpot_ms: x.tpot, std_tpot_ms: 0, p99_tpot_ms: x.tpot, mean_itl_ms: x.itl, median_itl_ms: x.itl, std_itl_ms: 0, p99_itl_ms: x.itl, mean_e2el_ms: x.e2e_ms, median_e2el_ms: x.e2e_ms, std_e2el_ms: 0, p99_e2el_ms: x.e2e_ms }),
  sglang: (x) => ({ backend: 'sglang', dataset_name: 'random', request_rate: x.rate, max_concurrency: null, random_input_len: x.prompt, random_output_len: x.output, random_range_ratio: 1.0, duration: x.duration, completed: x.n, total_input_tokens: x.n * x.prompt, total_output_tokens: x.n * x.output, total_output_tokens_retokenized: x.n * x.output, request_throughput: x.rps, input_throughput: x.rps * x.prompt, output_throughput: x.otps, mean_e2e_latency_ms: x.e2e_ms, median_e2e_latency_ms: x.e2e_ms, mean_ttft_ms: x.ttft, median_ttft_ms: x.ttft, p99_ttft_ms: x.ttft, mean_tpot_ms: x.tpot, median_tpot_ms: x.tpot, mean_itl_ms: x.itl, median_itl_ms: x.itl, concurrency: 1 }),
  guidellm: (x) => {
    const s = (v) => ({ successful: { mean: v, median: v, mode: v, variance: 0, std_dev: 0, min: v, max: v, count: x.n, total_sum: v * x.n } });
    return { benchmarks: [{ type_: 'generative_benchmark', args: { strategy: { type_: x.process === 'fixed' ? 'constant' : 'poisson', rate: x.rate } }, run_stats: { requests_made: { successful: x.n, errored: 0, incomplete: 0, total: x.n } }, metrics: { requests_per_second: s(x.rps), request_latency: s(x.e2e_ms / 1e3), prompt_token_count: s(x.prompt), output_token_count: s(x.output), time_to_first_token_ms: s(x.ttft), time_per_output_token_ms: s(x.e2e_ms / x.output), inter_token_latency_ms: s(x.tpot), output_tokens_per_second: s(x.otps) } }] };
  },
  'genai-perf': (x) => ({ request_throughput: { unit: 'requests/sec', avg: x.rps }, request_latency: { unit: 'ms', avg: x.e2e_ms }, request_count: { unit: 'count', avg: x.n }, time_to_first_token: { unit: 'ms', avg: x.ttft }, inter_token_latency: { unit: 'ms', avg: x.tpot }, output_token_throughput: { unit: 'tokens/sec', avg: x.otps }, output_sequence_length: { unit: 'tokens', avg: x.output }, input_sequence_length: { unit: 'tokens', avg: x.prompt }, input_config: { model: ['meta-llama/Llama-2-7b-hf'], request_rate: x.rate, concurrency: null, streaming: true } }),
  mlperf: (x) => ['================================================', 'MLPerf Results Summary', '================================================', 'SUT name : PySUT', 'Scenario : Server', 'Mode     : PerformanceOnly', `Completed samples per second    : ${x.rps}`, `Completed tokens per second: ${x.otps}`, 'Result is : VALID', '', 'Additional Stats', `Mean latency (ns)               : ${Math.round(x.e2e_ms * 1e6)}`, `Mean First Token latency (ns)   : ${Math.round(x.ttft * 1e6)}`, `Mean Time to Output Token (ns)  : ${Math.round(x.tpot * 1e6)}`, '', 'Test Parameters Used', 'samples_per_query : 1', `target_qps : ${x.rate}`, `min_duration (ms): ${(x.n / x.rate) * 1000}`, `min_query_count : ${x.n}`, ''].join('\n'),
};

// Each format's reader on a real file (tests/data/bench/real, SOURCES.md there), with the load as
// the tool applied it. genai-perf has no real export in real/ yet (the one checked,
// wellflat/k8s-dev@e17e8f5b, is 41.5 KB of mostly GPU telemetry): its case is the format example.
test('every format reads as itself, with the load as run', () => {
  const cases = [
    // file, format, runs, load kind, rate or concurrency, mean prompt tokens of run 0
    [path.join(real, 'er0080_opt125m_bench_serve_v0.25.1.json'), 'vllm', 1, 'closed_loop', 2, 32],
    [path.join(real, 'datacrunch_llama31-405b_8xh200_online.jsonl'), 'sglang', 6, 'rate', 1, 152612 / 300],
    [path.join(real, 'korat_gpt-oss-20b_tp4_xpu.json'), 'guidellm', 1, 'closed_loop', 1, 92.72],
    [path.join(real, 'anud18_qwen36-35b-a3b-nvfp4_rtx5090_chatbot_r1.0_profile_export_aiperf.json'), 'aiperf', 1, 'rate', 1, 574.5625],
    [path.join(real, 'nv41_gh200x1_llama2-70b-99.9_server_summary.txt'), 'mlperf', 1, 'rate', 13.43, null],
    [path.join(fixtures, 'genai_perf_profile_export_genai_perf.json'), 'genai-perf', 1, 'rate', 2, 512],
  ];
  for (const [file, format, runs, kind, load, prompt] of cases) {
    const r = cli(['fit', file, '--import-only']);
    assert.equal(r.code, 0, `${file}: ${r.err}`);
    const a = JSON.parse(r.out);
    assert.equal(a.length, runs, file);
    assert.equal(a[0].format, format, file);
    assert.equal(a[0].load.kind, kind, file);
    assert.equal(kind === 'rate' ? a[0].load.rate_qps : a[0].load.concurrency, load, file);
    if (prompt === null) assert.equal(a[0].lengths.prompt_tokens_mean, null, file);
    else assert.ok(Math.abs(a[0].lengths.prompt_tokens_mean / prompt - 1) < 1e-9, `${file}: ${a[0].lengths.prompt_tokens_mean}`);
    assert.ok(a[0].measured.ttft_mean_ms?.value > 0 || a[0].measured.ttft_median_ms?.value > 0, file);
    assert.ok(a[0].fields_used.length > 3, file);
  }
});

test('malformed and partial benchmark files get located errors', () => {
  const vllm = JSON.parse(readFileSync(path.join(real, 'er0080_opt125m_sweep_seqs4_c2_run0.json'), 'utf8'));
  const cases = [
    ['bad.json', '{"mean_ttft_ms": 1,', 'parse_error', '/mean_ttft_ms'],
    ['partial-vllm.json', { ...vllm, completed: undefined }, 'missing_key', '/completed'],
    ['type-vllm.json', { ...vllm, completed: 'four' }, 'type_error', '/completed'],
    ['short-arrays.json', { ...vllm, input_lens: [512, 512] }, 'invalid_value', '/input_lens'],
    ['sglang.jsonl', readFileSync(path.join(real, 'datacrunch_llama31-405b_8xh200_online.jsonl'), 'utf8').split('\n').map((l, i) => (i === 1 ? l.replace(/"median_ttft_ms": [0-9.]+/, '"median_ttft_ms": -1') : l)).join('\n'), 'out_of_range', '/1/median_ttft_ms'],
    ['guidellm.json', { benchmarks: [{ args: { strategy: { type_: 'warp' } }, metrics: {} }] }, 'invalid_value', '/benchmarks/0/args/strategy/type_'],
    ['genai.json', { time_to_first_token: { unit: 'parsecs', avg: 0.04 }, input_sequence_length: { unit: 'tokens', avg: 5 }, output_sequence_length: { unit: 'tokens', avg: 5 }, request_count: { avg: 3 }, input_config: {} }, 'invalid_value', '/time_to_first_token/unit'],
    ['mlperf.txt', '================\nMLPerf Results Summary\n================\nScenario : SingleStream\n', 'not_implemented', '/line/4'],
    ['other.json', { hello: 1 }, 'invalid_value', ''],
  ];
  for (const [name, content, code, where] of cases) {
    const r = cli(['fit', write(name, content), '--import-only']);
    assert.equal(r.code, 1, name);
    assert.match(r.err, new RegExp(`error \\[${code}\\] at '${where}': .*${name.replace('.', '\\.')}`), `${name}: ${r.err}`);
  }
});

test('a run names the calibration it used; a bad calibration file is a located error', () => {
  const s = scenario('llama-2-7b', 2, 512, 128, 50);
  const plain = runMetrics(s);
  const cal = runMetrics(s, truthFile);
  assert.equal(plain.calibration, undefined);
  assert.deepEqual(cal.calibration.factors, truth.factors);
  assert.equal(cal.calibration.id, 'truth');
  assert.ok(cal.metrics.tpot_ms.mean > plain.metrics.tpot_ms.mean * 1.05);
  const bad = write('bad-cal.json', { ...truth, factors: { ...truth.factors, memory_efficiency_scale: 0 } });
  const r = cli(['run', write('s.json', s), '--calibration', bad]);
  assert.equal(r.code, 1);
  // Located in the file the user gave (issue 34): its own pointer, and its name.
  assert.match(r.err, /error \[out_of_range\] at '\/factors\/memory_efficiency_scale': .*bad-cal\.json/);
  // --model-of must name one of the benchmark files given.
  const v = path.join(real, 'er0080_opt125m_bench_serve_v0.25.1.json');
  const u = cli(['fit', v, '--base', write('s2.json', s), '--model-of', 'other.json=gpt2']);
  assert.equal(u.code, 2);
  assert.match(u.err, /--model-of names 'other\.json', which is not one of the BENCH_FILEs/);
});

test('run --calibration adds the calibration\'s per-request latency to TTFT and E2E, not to TPOT', () => {
  const s = scenario('llama-2-7b', 2, 512, 128, 50);
  const L = 25;
  const withL = write('truth-latency.json', { ...truth, factors: { ...truth.factors, request_latency_ms: L } });
  const a = runMetrics(s, truthFile);
  const b = runMetrics(s, withL);
  for (const k of ['p50', 'mean', 'p99']) {
    assert.ok(Math.abs(b.metrics.ttft_ms[k] - a.metrics.ttft_ms[k] - L) < 1e-6, `ttft ${k}: ${a.metrics.ttft_ms[k]} -> ${b.metrics.ttft_ms[k]}`);
    assert.ok(Math.abs(b.metrics.e2e_s[k] - a.metrics.e2e_s[k] - L / 1e3) < 1e-9, `e2e ${k}`);
  }
  assert.equal(b.metrics.ttft_ms.stddev, a.metrics.ttft_ms.stddev);
  assert.deepEqual(b.metrics.tpot_ms, a.metrics.tpot_ms);
  assert.deepEqual(b.metrics.itl_ms, a.metrics.itl_ms);
  const key = (r, id) => r.key_metrics.find((k) => k.id === id).value;
  assert.ok(Math.abs(key(b, 'ttft_p50_ms') - key(a, 'ttft_p50_ms') - L) < 1e-6);
  assert.equal(b.calibration_request_latency.request_latency_ms, L);
  assert.equal(b.calibration.factors.request_latency_ms, L);
  assert.equal(a.calibration_request_latency, undefined);
});

// The round trip's runs are designed so that each factor is identified by a
// signal the simulator computes smoothly: at low load (one request at a time)
// TTFT is one prefill and TPOT one decode step, so a long prompt pins compute
// efficiency. Host time per step and memory efficiency both lengthen every
// decode step of the 7B model by a similar share (host is 3% of its step), so
// no run of that model alone tells them apart to a few percent; the same
// cluster serving a small model (GPT-2, `--model-of`) has steps that are mostly
// host time, and that run pins it. Loaded runs add what a user's sweep has:
// queueing and batching. Every third run is held out by the fit, so the fit set
// (runs 0, 1, 3, 4) alone must identify every factor too.
const runScale = process.env.SIGHTLINE_FIT_FULL ? 5 : 1;
// The runs of the round trip, written in every format; `clientMs` is a
// constant per-request latency (client, network, tokenizer) added to every
// measured TTFT and E2E, as a client-side benchmark sees it.
function roundTrip(tag, clientMs) {
  const m = 'llama-2-7b';
  const few = 20 * runScale, many = 60 * runScale;
  const base = scenario(m, 2, 512, 128, many);
  const runs = [
    ['vllm', 'vllm.json', [scenario(m, 0.01, 2048, 16, few)]],                  // compute: one long prefill at a time
    ['sglang', 'sglang.jsonl', [scenario(m, 0.01, 32, 64, few), scenario(m, 4, 1024, 96, many)]],  // decode at a short context; loaded
    ['guidellm', 'guidellm.json', [scenario('gpt2', 1, 128, 128, few, 'fixed')]],  // host: a small model on the same cluster (constant rate)
    ['genai-perf', 'genai.json', [scenario(m, 2, 512, 128, many)]],
    ['mlperf', 'mlperf_log_summary.txt', [scenario(m, 3, 512, 128, many)]],
  ];
  const files = runs.map(([format, name, ss]) => {
    const xs = ss.map(measured).map((x) => ({ ...x, ttft: x.ttft + clientMs, e2e_ms: x.e2e_ms + clientMs }));
    const content = format === 'sglang' ? xs.map((x) => JSON.stringify(writers.sglang(x))).join('\n') + '\n' : writers[format](xs[0]);
    return write(`${tag}-${name}`, content);
  });
  const baseFile = write(`${tag}-base.json`, base);
  const out = path.join(work, `${tag}-my-cluster.json`);
  const small = files.find((f) => f.endsWith('guidellm.json'));
  const mlperf = files.find((f) => f.endsWith('mlperf_log_summary.txt'));
  const r = cli(['fit', ...files, '--base', baseFile, '--out', out, '--id', 'my-cluster', '--model-of', `${small}=gpt2`, '--prompt-tokens', `${mlperf}=512`]);
  assert.equal(r.code, 0, r.err);
  console.log(r.out);
  return { r, out, small, cal: JSON.parse(readFileSync(out, 'utf8')) };
}
const rel = (a, b) => Math.abs(a / b - 1);

test('round trip: fit recovers a known perturbation from every format and predicts another scenario', () => {
  const { r, out, small, cal } = roundTrip('plain', 0);
  assert.match(r.out, /held-out/);
  const f = cal.factors;
  console.log('evaluations', cal.fit.evaluations, 'standard errors', JSON.stringify(cal.fit.standard_errors));
  assert.ok(rel(f.compute_efficiency_scale, 0.8) < 0.03, `compute ${f.compute_efficiency_scale}`);
  assert.ok(rel(f.memory_efficiency_scale, 0.9) < 0.03, `memory ${f.memory_efficiency_scale}`);
  assert.ok(rel(f.host_us_per_step, 300) < 0.03, `host ${f.host_us_per_step}`);
  // The runs identify every factor they see: each standard error is under 1%
  // of its value (one standard error of every mean moves it less than that).
  for (const k of ['compute_efficiency_scale', 'memory_efficiency_scale', 'host_us_per_step'])
    assert.ok(cal.fit.standard_errors[k] < 0.01 * f[k], `${k} standard error ${cal.fit.standard_errors[k]}`);
  assert.equal(cal.fit.standard_errors.comm_efficiency_scale, null);
  assert.equal(cal.fit.runs.find((x) => x.file === small).replay_model, 'gpt2');
  assert.ok(cal.fit.in_sample.median_abs_error_calibrated < cal.fit.in_sample.median_abs_error_uncalibrated);
  // A different scenario on the same cluster: another model, lengths and rate.
  const other = scenario('llama-2-13b', 1.5, 1500, 200, 150);
  const t = runMetrics(other, truthFile);
  const c = runMetrics(other, out);
  const u = runMetrics(other);
  for (const k of ['ttft_ms', 'tpot_ms']) {
    console.log(k, 'truth', t.metrics[k].mean, 'calibrated', c.metrics[k].mean, 'uncalibrated', u.metrics[k].mean);
    assert.ok(rel(c.metrics[k].mean, t.metrics[k].mean) < 0.03, `${k}: ${c.metrics[k].mean} vs truth ${t.metrics[k].mean}`);
  }
  assert.equal(c.calibration.id, 'my-cluster');
  // Honest transfer (issue 37 point 3): the calibration says what it was fitted
  // on, and a run on another model is told, located at its /model.
  const on = cal.fit.fitted_on;
  assert.deepEqual(on.models, ['llama-2-7b', 'gpt2']);
  assert.equal(on.gpu, 'a100-80g-sxm');
  assert.deepEqual(on.prompt_tokens, [32, 2048]);
  assert.deepEqual(on.output_tokens, [16, 128]);
  assert.ok(on.rate_qps[0] === 0.01 && on.rate_qps[1] === 4, JSON.stringify(on.rate_qps));
  const outside = c.warnings.filter((w) => w.startsWith('calibration_out_of_range'));
  assert.equal(outside.length, 2, JSON.stringify(c.warnings));
  assert.match(outside[0], /^calibration_out_of_range at \/model: .*not 'llama-2-13b'/);
  assert.match(outside[1], /^calibration_out_of_range at \/serving\/workload\/output_tokens: output length \(tokens\) 200 is outside .*\[16, 128\]/);
  const inside = runMetrics(scenario('llama-2-7b', 2, 512, 128, 40), out);
  assert.deepEqual(inside.warnings.filter((w) => /calibration_/.test(w)), []);
  const faster = runMetrics(scenario('llama-2-7b', 12, 3000, 128, 40), out);
  const paths = faster.warnings.filter((w) => w.startsWith('calibration_out_of_range')).map((w) => w.split(':')[0]);
  assert.deepEqual(paths, ['calibration_out_of_range at /serving/workload/arrival/rate_qps', 'calibration_out_of_range at /serving/workload/prompt_tokens']);
  // The fit's own transfer error: every third run held out, and each run
  // predicted by the factors refitted without it.
  assert.equal(cal.fit.held_out.every, 3);
  const loo = cal.fit.leave_one_run_out;
  console.log('leave-one-run-out median |error|', loo.median_abs_error, 'uncalibrated', loo.median_abs_error_uncalibrated);
  assert.equal(loo.runs.length, cal.fit.runs.length);
  assert.ok(loo.median_abs_error < 0.03 && loo.median_abs_error < loo.median_abs_error_uncalibrated, JSON.stringify(loo.median_abs_error));
  assert.match(r.out, /leave-one-run-out .*median \|error\| \d/);
});

test('round trip: a constant per-request latency added to the truth is recovered as that term, not as efficiency or host time', () => {
  const { cal } = roundTrip('client', 20);
  const f = cal.factors;
  console.log('request latency', cal.fit.request_latency_ms, '±', cal.fit.standard_errors.request_latency_ms);
  assert.ok(Math.abs(cal.fit.request_latency_ms - 20) < 0.5, `request latency ${cal.fit.request_latency_ms} ms`);
  assert.ok(rel(f.compute_efficiency_scale, 0.8) < 0.03, `compute ${f.compute_efficiency_scale}`);
  assert.ok(rel(f.memory_efficiency_scale, 0.9) < 0.03, `memory ${f.memory_efficiency_scale}`);
  assert.ok(rel(f.host_us_per_step, 300) < 0.03, `host ${f.host_us_per_step}`);
  assert.ok(cal.fit.fitted.includes('request_latency_ms'));
});
