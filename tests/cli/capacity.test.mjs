// The max-QPS answer checked against brute force through the real CLI
// (`sightline check-capacity`): long plain runs at fixed rates, no shared
// statistics with the search's own verdict.
//   - Every shipped scenario preset with a serving SLO, as shipped (the
//     search's defaults added where the preset has no max_qps_search): at
//     the answer a run 20x longer than the search's runs (and at least twice
//     the run that decided the answer) meets the SLO, 10% above it misses,
//     and the answer is within 5% of the brute-force capacity (the highest
//     rate whose long run meets the SLO: a grid at 0.8..1.2 x the answer,
//     refined by bisection to 1%). The brute force on all of them takes
//     minutes of CPU, so it is recorded by the command
//        ./build/sightline check-capacity --all --jobs 2 --format json --max-work-units 1200000000 > tests/cli/capacity-brute-force.json
//     (never edited by hand), and CI checks the record and re-runs the
//     cheapest search (I5.3) live against it; the presets that ship a search
//     (I2.3, I5.5) are checked against it on tests/wasm/determinism.test.mjs's
//     runs of them as shipped (capacity_record.mjs).
//   - A case whose capacity is known in closed form: one server, one request
//     at a time, a fixed prompt and a single output token (a fixed service
//     time), Poisson arrivals, a TTFT-only SLO: an M/D/1 queue.
//   - A property test over randomly drawn scenarios (model, GPU, lengths,
//     SLO) against brute force: a few draws in CI (SIGHTLINE_CAPACITY_DRAWS
//     raises the count).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';
import { checkLiveCapacity, record, regenerate } from './capacity_record.mjs';

function cli(args) {
  const r = spawnSync(cliPath, args, { cwd: repoRoot, encoding: 'utf8', maxBuffer: 64 << 20 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function tmpFile(obj) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'capacity-')), 's.json');
  fs.writeFileSync(file, JSON.stringify(obj));
  return file;
}

const scenarioDir = path.join(repoRoot, 'presets/scenarios');
const withSlo = fs
  .readdirSync(scenarioDir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(fs.readFileSync(path.join(scenarioDir, f), 'utf8')))
  .filter((s) => s.serving && s.serving.slo);

// Known failures, each with its reason and issue: the record must still show
// it failing (a fixed one leaves this list), and every other preset passes.
const KNOWN_FAILURES = {
  // None. I5.5 was one until 2026-11-28: the search answered 0.866 req/s, where a
  // 12,000-request run met 0.89925 of its 0.90 target; the answer now has to
  // predict the hold in a run 20x the search's runs (docs/capacity.md, step 6).
};

test('capacity record: every shipped preset with a serving SLO, as shipped, passed all three checks (known failures listed)', () => {
  assert.equal(record.command, 'sightline check-capacity --all --scale 20 --format json');
  assert.deepEqual(record.presets.map((p) => p.id).sort(), withSlo.map((s) => s.id).sort(), regenerate);
  for (const [id, checks] of Object.entries(KNOWN_FAILURES)) {
    const p = record.presets.find((q) => q.id === id);
    assert.ok(p, `known failure ${id} is in the record`);
    assert.deepEqual(p.checks, checks, `${id}: the known failure changed; update KNOWN_FAILURES (${regenerate})`);
    assert.equal(p.passed, false, `${id} passes now: drop it from KNOWN_FAILURES`);
  }
  assert.equal(record.passed, Object.keys(KNOWN_FAILURES).length === 0);
  for (const p of record.presets.filter((q) => !KNOWN_FAILURES[q.id])) {
    const shipped = withSlo.find((s) => s.id === p.id);
    const msg = `${p.id}: answer ${p.answer_qps}, brute force ${p.brute_force_qps}; ${regenerate}`;
    // The record was made from the preset as it ships now (its SLO, its own search settings or none).
    assert.equal(p.search_added_with_defaults, !shipped.serving.max_qps_search, msg);
    for (const k of ['ttft_ms', 'tpot_ms', 'itl_ms', 'e2e_ms']) assert.equal(p.slo[k], shipped.serving.slo[k], `${msg} (${k})`);
    assert.ok(p.long_run_requests >= 20 * p.search_requests_floor, msg);
    assert.equal(p.at_answer.qps, p.answer_qps, msg);
    assert.equal(p.at_answer.meets_slo, true, msg);
    assert.equal(p.at_answer.completed, p.long_run_requests, msg);
    assert.ok(Math.abs(p.above_10pct.qps / p.answer_qps - 1.1) < 1e-9, msg);
    assert.equal(p.above_10pct.meets_slo, false, msg);
    assert.ok(p.brute_force_qps > 0 && p.brute_force_upper_qps <= p.brute_force_qps * 1.011, msg);
    assert.ok(Math.abs(p.answer_qps / p.brute_force_qps - 1) <= 0.05, msg);
    assert.deepEqual(p.checks, { holds_at_answer: true, fails_10pct_above: true, within_5pct_of_brute_force: true }, msg);
  }
});

// The answers users see, computed now, against the recorded brute force: the
// disaggregated preset (the cheapest search, and the former unit test's case,
// now unmodified) with the search's defaults added. The presets that ship a
// search (I2.3, I5.5) are checked the same way (checkLiveCapacity) on the
// determinism test's full runs of every preset as shipped, whose max_qps is
// the answer a central-only run gives, to the bit.
test('capacity I5.3 as shipped: today\'s answer within 5% of the recorded brute-force capacity', () => {
  const scenario = structuredClone(withSlo.find((s) => s.id === 'I5.3'));
  assert.equal(scenario.serving.max_qps_search, undefined, 'I5.3 ships no search: it is added here with its defaults');
  scenario.serving.max_qps_search = {};
  delete scenario.serving.compare;
  const r = cli(['run', tmpFile(scenario), '--central-only', '--format', 'json']);
  assert.equal(r.code, 0, r.err);
  checkLiveCapacity('I5.3', JSON.parse(r.out).result.max_qps);
});

// The answer's promise on a preset, in CI: a run 20x the search's runs
// (exactly, on the scenario's own seed) meets the SLO at the answer and
// misses it 10% above. I5.3 only: the cheapest search (about 4 s of CPU with
// both runs, 2026-11-29). Every preset with an SLO:
// tests/tools/capacity_hold.sh (docs/capacity.md, "The answer's promise on
// every preset").
test('capacity I5.3 as shipped: a run 20x longer meets the SLO at the answer and misses it 10% above', () => {
  const c = cli(['check-capacity', '--preset', 'I5.3', '--hold-only', '--format', 'json']);
  assert.ok(c.out, c.err);
  const out = JSON.parse(c.out);
  const msg = `I5.3: answer ${out.answer_qps}, at it ${JSON.stringify(out.at_answer?.binding)}, +10% ${JSON.stringify(out.above_10pct?.binding)}`;
  console.log(msg);
  assert.equal(out.long_run_requests, 20 * out.search_requests_floor, msg);
  assert.equal(out.at_answer.completed, out.long_run_requests, msg);
  assert.equal(out.checks.holds_at_answer, true, msg);
  assert.equal(out.checks.fails_10pct_above, true, msg);
  assert.equal(c.code, 0, msg);
});

// M/D/1: P(W <= x) = (1 - rho) sum_{k=0}^{floor(x/S)} (lam (kS - x))^k / k! e^{-lam (kS - x)}.
function md1WaitCdf(lam, S, x) {
  let sum = 0;
  for (let k = 0; k <= Math.floor(x / S); k++) {
    const u = lam * (k * S - x);
    let term = Math.exp(-u);
    for (let j = 1; j <= k; j++) term *= u / j;
    sum += term;
  }
  return (1 - lam * S) * sum;
}

test('capacity: a single fixed-time server with a TTFT-only SLO matches the M/D/1 formula', () => {
  // The default stack without its front end's tokenization: M/D/1's TTFT is
  // the queue's wait plus the service, with no delay before the queue.
  const stack = JSON.parse(fs.readFileSync(path.join(repoRoot, 'presets', 'stacks', 'vllm-like.json'), 'utf8'));
  delete stack.tokenize_us_per_token;
  const s = {
    schema_version: 1, id: 'md1', title: 'M/D/1', seed: 1, model: 'llama-2-7b',
    hardware: { gpu: 'a100-80g-sxm', gpus_per_node: 1 },
    precision: { weights: 'bf16', activations: 'bf16', kv_cache: 'bf16' },
    cost_model: { software_stack: stack },
    serving: {
      mode: 'simulate',
      workload: { arrival: { process: 'poisson', rate_qps: 0.5 }, num_requests: 300, prompt_tokens: 1024, output_tokens: 1 },
      scheduler: { policy: 'continuous', max_num_seqs: 1 },
      slo: { ttft_ms: 400, attainment: 0.9 },
    },
  };
  // The service time, from evenly spaced arrivals 2 s apart: none waits.
  const spaced = structuredClone(s);
  spaced.serving.workload.arrival = { process: 'fixed', rate_qps: 0.5 };
  const low = cli(['run', tmpFile(spaced), '--central-only', '--format', 'json']);
  assert.equal(low.code, 0, low.err);
  const ttft = JSON.parse(low.out).result.metrics.ttft_ms;
  assert.ok(ttft.max - ttft.min < 1e-6 * ttft.min, 'a fixed service time');
  const S = ttft.min / 1000, T = 0.4;
  // Analytic capacity: the rate at which P(wait <= T - S) = 0.9.
  let lo = 0, hi = 1 / S;
  for (let i = 0; i < 100; i++) {
    const m = (lo + hi) / 2;
    if (md1WaitCdf(m, S, T - S) >= 0.9) lo = m; else hi = m;
  }
  s.serving.max_qps_search = {};
  const r = cli(['run', tmpFile(s), '--central-only', '--format', 'json']);
  assert.equal(r.code, 0, r.err);
  const q = JSON.parse(r.out).result.max_qps;
  const msg = `service ${S * 1000} ms: analytic capacity ${lo} req/s, search ${q.qps} req/s, measured service rate ${q.service_rate_qps}`;
  console.log(msg);
  assert.ok(Math.abs(q.service_rate_qps * S - 1) < 0.01, msg);
  assert.ok(Math.abs(q.qps / lo - 1) <= 0.05, msg);
  // The same SLO as users state it per metric ("P90 TTFT within 400 ms"):
  // the same condition, so the same answer; and check-capacity judges its
  // long runs by that percentile (the run's metrics.goodput.conditions).
  const p90 = structuredClone(s);
  p90.serving.slo = { ttft_ms: 400, percentiles: { ttft: 'p90' } };
  const rp = cli(['run', tmpFile(p90), '--central-only', '--format', 'json']);
  assert.equal(rp.code, 0, rp.err);
  assert.equal(JSON.parse(rp.out).result.max_qps.qps, q.qps);
  const c = cli(['check-capacity', tmpFile(p90), '--format', 'json', '--scale', '10']);
  assert.ok(c.out, c.err);
  const out = JSON.parse(c.out);
  console.log(`P90 TTFT form: answer ${out.answer_qps}, brute force ${out.brute_force_qps} (analytic ${lo})`);
  assert.equal(out.at_answer.binding.statistic, 'p90');
  assert.deepEqual(out.at_answer.binding.metrics, ['ttft']);
  assert.equal(out.checks.fails_10pct_above, true);
  assert.equal(out.checks.within_5pct_of_brute_force, true);
  assert.ok(Math.abs(out.brute_force_qps / lo - 1) <= 0.05, `brute force ${out.brute_force_qps} against analytic ${lo}`);
});

// Deterministic draws (mulberry32), so a failure names its scenario.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const draws = Number(process.env.SIGHTLINE_CAPACITY_DRAWS || 2);
for (let d = 0; d < draws; d++) {
  const r = rng(1000 + d);
  const pick = (xs) => xs[Math.floor(r() * xs.length)];
  const model = pick(['llama-2-7b', 'mistral-7b', 'llama-3-8b', 'qwen2.5-7b']);
  const gpu = pick(['a100-80g-sxm', 'h100-sxm']);
  const prompt = pick([128, 256, 512, 1024]);
  const output = pick([64, 128, 256]);
  const slo = pick([
    { ttft_ms: 500, tpot_ms: 50, attainment: 0.9 },
    { ttft_ms: 1000, attainment: 0.95 },
    { ttft_ms: 300, tpot_ms: 40, attainment: 0.9 },
    { e2e_ms: 20000, attainment: 0.9 },
  ]);
  const s = {
    schema_version: 1, id: `draw-${d}`, title: 'drawn', seed: 1 + d, model,
    hardware: { gpu, gpus_per_node: 1 },
    precision: { weights: 'bf16', activations: 'bf16', kv_cache: 'bf16' },
    serving: {
      mode: 'simulate',
      workload: {
        arrival: { process: 'poisson', rate_qps: 1 }, num_requests: 600,
        prompt_tokens: { dist: 'lognormal', mean: prompt, cv: 0.6, min: 8, max: 4 * prompt },
        output_tokens: { dist: 'lognormal', mean: output, cv: 0.6, min: 4, max: 4 * output },
      },
      slo,
      max_qps_search: {},
    },
  };
  const label = `${model} on ${gpu}, ${prompt}/${output} tokens, SLO ${JSON.stringify(slo)}`;
  test(`capacity property draw ${d} (${label}): holds 10x longer and within 5% of brute force`, () => {
    const c = cli(['check-capacity', tmpFile(s), '--format', 'json', '--scale', '10', '--jobs', '2']);
    assert.ok(c.out, c.err);
    const out = JSON.parse(c.out);
    const msg = `${label}: answer ${out.answer_qps}, brute force ${out.brute_force_qps}, at answer ${JSON.stringify(out.at_answer)}`;
    console.log(msg);
    assert.equal(out.checks.holds_at_answer, true, msg);
    assert.equal(out.checks.within_5pct_of_brute_force, true, msg);
  });
}
