// Issue 34, point 7, "bounds on every command": each command that simulates,
// searches, sweeps or fits estimates its work before doing any (the per-run
// estimate `run` uses, summed over its runs, rows or candidates, or the size
// of the files it fits) and is refused past its budget with a located
// limit_exceeded error naming the estimate, the budget and --max-work-units
// (one helper: engine/cli/command_budget). Refusals are judged on CPU time
// (tests/tools/cpu_bounded.mjs), never the wall clock. Inputs are tiny: a
// refusal uses a budget below a small input's estimate (or an input whose
// size alone is over the default), and the same input then runs at the default.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';
import { spawnCpuBounded } from '../tools/cpu_bounded.mjs';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-budgets-'));
const write = (name, text) => {
  const p = path.join(dir, name);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
  return p;
};
// A file of `bytes` bytes that takes no time to write (sparse): the estimate reads sizes only.
const sized = (name, bytes) => {
  const p = write(name, '');
  fs.truncateSync(p, bytes);
  return p;
};
const repo = (rel) => path.join(repoRoot, rel);

// A refusal must come before the work: within this much CPU (the kernel stops it at the rlimit).
const kRefusalCpuS = 5;

function cli(args, input = '') {
  const r = spawnCpuBounded(cliPath, args, { cpuSeconds: 120, cwd: repoRoot, input, encoding: 'utf8', maxBuffer: 1 << 26 });
  return { code: r.status, signal: r.signal, out: r.stdout, err: r.stderr, cpuS: r.cpuS };
}

// A located limit_exceeded refusal that gives the estimate, the budget and the flag, made quickly.
function refused(args, budget, input = '') {
  const r = cli(args, input);
  assert.equal(r.signal, null, `killed by ${r.signal}: ${r.err.slice(0, 400)}`);
  assert.equal(r.code, 1, r.err.slice(0, 600));
  const m = r.err.match(/^error \[([a-z_]+)\] at '([^']*)': (.+)$/m);
  assert.ok(m, r.err.slice(0, 400));
  assert.equal(m[1], 'limit_exceeded', r.err.slice(0, 600));
  assert.match(m[3], /needs at least [0-9.e+]+ work units/, m[3]);
  assert.ok(m[3].includes(`budget of ${budget}`), m[3]);
  assert.ok(m[3].includes('--max-work-units'), m[3]);
  assert.equal(r.out, '', 'nothing is written before the refusal');
  if (r.cpuS !== null) assert.ok(r.cpuS < kRefusalCpuS, `refused after ${r.cpuS} s of CPU`);
  return m[3];
}

function accepted(args, input = '') {
  const r = cli(args, input);
  assert.equal(r.signal, null, `killed by ${r.signal}: ${r.err.slice(0, 400)}`);
  assert.equal(r.code, 0, r.err.slice(0, 600));
  return r;
}

const kDefault = 80000000;

test('sweep: a grid over the default budget is refused before a line; a small one runs, and is refused below its estimate', () => {
  const base = repo('presets/scenarios/I2.1.json');
  // 5,000,000 points of about 1 kB: 5 GB of lines, over the 2 GB the default allows.
  const seeds = Array.from({ length: 5000 }, (_, i) => i + 1).join(',');
  const rates = Array.from({ length: 1000 }, (_, i) => i + 1).join(',');
  const msg = refused(['sweep', base, '--set', `seed=${seeds}`, '--set', `serving.workload.arrival.rate_qps=${rates}`], kDefault);
  assert.match(msg, /5000000 points/);
  refused(['sweep', base, '--set', 'seed=1,2,3', '--max-work-units', '10'], 10);
  const r = accepted(['sweep', base, '--set', 'seed=1,2,3']);
  assert.equal(r.out.trim().split('\n').length, 3);
});

test('calibrate: measurement files over the default budget by size are refused unread; a small fit runs', () => {
  refused(['calibrate', '--gpu', 'h100-sxm', '--csv', sized('big-kernels.csv', 9 << 20)], kDefault);
  const published = repo('presets/calibrations/data/published_kernels.csv');
  refused(['calibrate', '--gpu', 'h100-sxm', '--csv', published, '--max-work-units', '1000'], 1000);
  accepted(['calibrate', '--gpu', 'h100-sxm', '--csv', published, '--out', path.join(dir, 'h100.json')]);
});

test('calibrate-comm: refused below the collective CSVs\' estimate (both forms); runs at the default', () => {
  const csv = repo('presets/calibrations/data/published_collectives.csv');
  refused(['calibrate-comm', '--interconnect', 'nvlink4-nvswitch', '--csv', csv, '--max-work-units', '100'], 100);
  refused(['calibrate-comm', '--csv', csv, '--transfer-errors-out', path.join(dir, 't.json'), '--max-work-units', '100'], 100);
  refused(['calibrate-comm', '--interconnect', 'nvlink4-nvswitch', '--csv', sized('big-coll.csv', 9 << 20)], kDefault);
  accepted(['calibrate-comm', '--interconnect', 'nvlink4-nvswitch', '--csv', csv, '--out', path.join(dir, 'nvl4.json')]);
});

test('report-accuracy: a data folder over the default budget by size is refused unread, and so is the shipped data below its estimate', () => {
  const data = path.join(dir, 'data');
  sized('data/vidur-profiling/compute/a100/m/mlp.csv', 64 << 20);
  sized('data/vidur-profiling/compute/a40/m/mlp.csv', 1000);
  refused(['report-accuracy', '--data', data], kDefault);
  // The shipped data (203M units, about 130 s of CPU) is over the default of about 60 s (d512b15 let it
  // run at 60M of the units of then, a quarter of today's): refused unread. It runs with the flag:
  // tests/cli/accuracy_report.test.mjs.
  const msg = refused(['report-accuracy'], kDefault);
  assert.match(msg, /needs at least 2\.0[0-9]*e\+08 work units/);
  refused(['report-accuracy', '--max-work-units', '1000'], 1000);
});

// A latency run on one H200 (Llama-2-7B, batch 64, 128 + 2048 tokens): run's estimate is 393,216 units.
function latencyLine(id) {
  const s = JSON.parse(fs.readFileSync(repo('presets/scenarios/I1.1.json'), 'utf8'));
  s.id = id;
  s.hardware.gpu = 'h200';
  Object.assign(s.serving.workload, { batch_size: 64, output_tokens: 2048 });
  return JSON.stringify(s);
}

test('batch: one budget over all its lines, refused before any line runs (d512b15 gave each line its own)', () => {
  // 210 lines of 393,216 units: each within run's default, 82.6M together, over the batch's default
  // (80M: twice run's 40M since a serving unit counts sequences and prompts; a latency unit, a
  // sequence-step, is as it was).
  const big = write('big-batch.jsonl', Array.from({ length: 210 }, (_, i) => latencyLine(`l${i}`)).join('\n') + '\n');
  const msg = refused(['batch', big], kDefault);
  assert.match(msg, /^batch: the work needs at least 8\.0[0-9]*e\+07 work units/);
  assert.match(msg, /line 204 of /);
  // Three tiny lines (384 units each): each within 1,000, not all three.
  const tiny = fs.readFileSync(repo('presets/scenarios/I1.1.json'), 'utf8').replace(/\n\s*/g, ' ');
  const three = write('three.jsonl', `${tiny}\n\n${tiny}\n${tiny}\n`);
  refused(['batch', three, '--max-work-units', '1000'], 1000);
  // A shard is budgeted on its own lines: the first half holds one of the three.
  const r = accepted(['batch', three, '--max-work-units', '1000', '--shard', '0/2']);
  assert.equal(r.out.trim().split('\n').length, 1);
  const all = accepted(['batch', three, '--max-work-units', '1200']);
  assert.equal(all.out.trim().split('\n').length, 3);
  assert.ok(all.out.split('\n').filter(Boolean).every((l) => JSON.parse(l).ok), all.out.slice(0, 400));
});

test('report-e2e and report-training: refused below their rows\' estimate; one row runs at the default', () => {
  refused(['report-e2e', '--rows', 'E.I-gf1-7b-tp1-bf16', '--max-work-units', '1'], 1);
  refused(['report-e2e', '--max-work-units', '1000'], 1000);
  refused(['report-training', '--max-work-units', '1000'], 1000);
  accepted(['report-e2e', '--rows', 'E.I-gf1-7b-tp1-bf16', '--format', 'json']);
  accepted(['report-training', '--format', 'json']);
});

test('search: a deployment search over the default budget is refused before any candidate runs', () => {
  const q = JSON.parse(fs.readFileSync(repo('examples/search-llama3-70b.json'), 'utf8'));
  q.requests = 200000;
  q.max_requests = 2000000;
  const msg = refused(['search', write('big-search.json', JSON.stringify(q))], kDefault);
  assert.match(msg, /candidate \d+ of \d+, h100-sxm/);
  refused(['search', repo('examples/search-llama3-70b.json'), '--max-work-units', '1000'], 1000);
  // The wide example (162 candidates, about 140 s of CPU) is over the default of about 60 s (d512b15
  // counted each candidate's first run alone, 9.9M units in all, and let it run); the README's runs.
  const wide = refused(['search', repo('examples/search-llama3-70b.json')], kDefault);
  assert.match(wide, /candidate \d+ of 162/);
});

test('search (training): a space over the default budget is refused before planning; a small one runs', () => {
  // 138,240 configurations (the most a question may have is 200,000) at 600 units each.
  const big = { kind: 'training_search', base: 'T3.4', gpus: [{ gpu: 'h100-sxm', count: [64, 128, 256, 512, 1024] }],
    tp: [1, 2, 4, 8], pp: [1, 2, 4, 8], micro_batch: [1, 2, 4, 8, 16, 32], virtual_stages: [1, 2, 3, 4],
    zero_stage: [0, 1, 2, 3], recompute: ['none', 'selective', 'full'], cp: [1, 2, 4], ep: [1, 2] };
  const msg = refused(['search', '-'], kDefault, JSON.stringify(big));
  assert.match(msg, /configurations of the question/);
  const small = repo('tests/golden/search-training-llama3-8b-64-h100.search.json');
  refused(['search', small, '--max-work-units', '1000'], 1000);
  accepted(['search', small, '--format', 'json']);
});

test('check-capacity: refused below its estimate (the search and the long runs) before anything runs', () => {
  const msg = refused(['check-capacity', '--preset', 'I2.1', '--max-work-units', '1000'], 1000);
  assert.match(msg, /I2\.1/);
  // Long runs 1000 times the search's: over its default.
  refused(['check-capacity', '--preset', 'I2.1', '--scale', '1000'], kDefault);
  // --all (many minutes of CPU) is over the default of about 60 s (d512b15 let it run at 50M): at
  // its 13th preset (S.eagle3-...; the 9th, I5.1, when a unit was an event).
  assert.match(refused(['check-capacity', '--all'], kDefault), /preset or file [IS]/);
  // It runs at the default: tests/cli/capacity.test.mjs (check-capacity on its own scenarios).
});

test('check-capacity: long runs figured at the answer are refused after the search, before any of them runs', () => {
  // I2.3 at --scale 500: 4.3e7 units before starting (its own rate), then its search answers
  // about 9.7 req/s, and 9 long runs of 300,000 requests there figure over 80M (at --scale 400,
  // 7.76e7: under it since a unit counts sequences; over 20M events before). d512b15 ran them.
  const r = cli(['check-capacity', '--preset', 'I2.3', '--scale', '500']);
  assert.equal(r.signal, null, `killed by ${r.signal}`);
  assert.equal(r.code, 1, r.err.slice(0, 600));
  const m = r.err.match(/^error \[limit_exceeded\] at '': (.+)$/m);
  assert.ok(m, r.err.slice(0, 400));
  assert.match(m[1], /needs at least [0-9.e+]+ work units \(estimated after the capacity searches, before any long run, /);
  assert.match(m[1], /the long runs of I2\.3 \(9 of 300000 requests at the least\)/);
  assert.ok(m[1].includes(`budget of ${kDefault}`) && m[1].includes('--max-work-units'), m[1]);
  assert.equal(r.out, '');
  // The search alone (about 6 s of CPU), not its long runs (over a minute).
  if (r.cpuS !== null) assert.ok(r.cpuS < 30, `refused after ${r.cpuS} s of CPU`);
});

// --- structure: a new command cannot skip the budget, or read a file past the cap ---

// Commands that do no work a budget bounds, or that bound it another way, each with the reason.
const notBudgeted = {
  'cmd_run.cpp': 'one run, budgeted by the API (run_scenario_with_budget, --max-work-units)',
  'cmd_fit.cpp': 'its replays are capped by fit::FitOptions (--max-work-units)',
  'cmd_validate.cpp': 'validate and inspect-model read a document and run nothing',
  'cmd_presets.cpp': 'lists presets',
  'cmd_ops.cpp': 'prices one operator',
  'cmd_comm.cpp': 'prices one collective',
  'cmd_explain_step.cpp': 'prices one decode step',
};
// What doing work looks like in a command's source.
const workCalls = /run_scenario|evaluate_candidate|run_training_search|make_(single_)?job|fit_\w*calibration|check_scenario|\.step\(/;

test('every cmd_*.cpp uses the one command budget, or is listed with its reason', () => {
  const cliDir = repo('engine/cli');
  const files = fs.readdirSync(cliDir).filter((f) => /^cmd_.*\.cpp$/.test(f));
  assert.ok(files.length >= 15, files.join(' '));
  for (const f of files) {
    const text = fs.readFileSync(path.join(cliDir, f), 'utf8');
    if (notBudgeted[f]) {
      if (/--max-work-units/.test(notBudgeted[f])) assert.match(text, /--max-work-units/, f);
      else assert.doesNotMatch(text, workCalls, `${f} does work: give it a CommandBudget (cli/command_budget.hpp)`);
      continue;
    }
    // Its own budget, or (a part of a command: search's training form) its command's.
    assert.match(text, /CommandBudget budget\(|CommandBudget& budget\)/, `${f}: a command estimates its work with cli/command_budget.hpp`);
    if (/CommandBudget budget\(/.test(text)) assert.match(text, /budget\.flag\(flags\)/, `${f}: --max-work-units comes from the budget`);
    assert.match(text, /budget\.add(_files)?\(|, budget\)/, `${f}: the budget is given an estimate`);
  }
});

test('every file a command reads goes through the capped reader (cli_common read_file)', () => {
  const offenders = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(cpp|hpp)$/.test(e.name) && !p.endsWith(path.join('cli', 'cli_common.cpp'))) {
        fs.readFileSync(p, 'utf8').split('\n').forEach((line, i) => {
          if (/std::ifstream|\bfopen\s*\(|std::cin\b|istreambuf_iterator|\bmmap\s*\(/.test(line)) offenders.push(`${path.relative(repoRoot, p)}:${i + 1}`);
        });
      }
    }
  };
  walk(repo('engine'));
  assert.deepEqual(offenders, []);
});
