// The bounds fuzzer: aims where the preset mutator (fuzz.mjs) does not.
//   engine cases: every parameter of the exported schema (`sightline
//     registries`), set in a preset of its kind at its minimum, its maximum,
//     just past each, and (choices) an unknown name; validated through the API,
//     and a share of them run in full at the real default budget (no "limits").
//   CLI cases: every command (run, validate, sweep, batch, merge, search, ops,
//     comm, presets, registries, version) with flag values at and past their
//     bounds, non-numbers, huge and negative numbers.
// It counts what must never happen: crashes (a signal, an internal_error, a
// reply that is not JSON), hangs, unlocated errors, and numbers that lie: a
// non-finite or negative time, a key metric outside its own interval.
//
//   node tests/fuzz/bounds_fuzz.mjs [--seed S] [--engine N] [--runs M] [--cli K] [--wasm]
//     [--run-work-units U]  (full runs under a work budget of at most U units)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rng } from './mutate.mjs';
import { judge, runNative, loadWasmModule, loadPresetTexts, repoRoot } from './fuzz.mjs';
import { spawnCpuBounded } from '../tools/cpu_bounded.mjs';

const enc = new TextEncoder();
const cliPath = process.env.SIGHTLINE_CLI || path.join(repoRoot, 'build', 'sightline');

function setPointer(doc, pointer, value) {
  const keys = pointer.split('/').slice(1).map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
  let node = doc;
  for (let i = 0; i < keys.length - 1; i++) {
    if (node[keys[i]] === null || typeof node[keys[i]] !== 'object') node[keys[i]] = {};
    node = node[keys[i]];
  }
  node[keys[keys.length - 1]] = value;
}

// Values at and just past a parameter's bounds.
function boundValues(p, r) {
  if (p.type === 'choice') return [...(p.choices || []), 'no-such-choice', 7, null];
  if (p.type === 'boolean') return [true, false, 'yes', 1];
  if (p.type === 'string') return ['', 'x'.repeat(300), 5];
  const out = [];
  const isInt = p.type === 'integer';
  for (const b of [p.min, p.max]) {
    if (typeof b !== 'number') continue;
    out.push(b);
    out.push(isInt ? b - 1 : b - Math.max(Math.abs(b) * 1e-9, 1e-12));
    out.push(isInt ? b + 1 : b + Math.max(Math.abs(b) * 1e-9, 1e-12));
  }
  out.push(isInt ? 1.5 : 'NaN', 1e308, -1e308, 2 ** 63, -(2 ** 63), 2 ** 53 + 1);
  if (typeof p.min === 'number' && typeof p.max === 'number') out.push(p.min + (r.int(1000001) / 1000000) * (p.max - p.min));
  return out;
}

/** The engine cases of a seed: validate cases at the bounds, then `runs` full runs of accepted ones. */
export function makeEngineCases({ seed, count, parameters }) {
  const r = rng(seed);
  const docs = loadPresetTexts().map((t) => JSON.parse(t));
  const byRoot = (p) => docs.filter((d) => p.pointer.startsWith('/serving') ? d.serving?.mode === 'simulate'
    : p.pointer.startsWith('/training') ? d.training : true);
  const cases = [];
  for (let i = 0; i < count; i++) {
    const p = parameters[r.int(parameters.length)];
    const pool = byRoot(p);
    const base = structuredClone(pool.length ? pool[r.int(pool.length)] : docs[r.int(docs.length)]);
    const values = boundValues(p, r);
    setPointer(base, p.pointer, values[r.int(values.length)]);
    // Exploding products: a second parameter at its bound in the same case.
    if (r.chance(0.5)) {
      const q = parameters[r.int(parameters.length)];
      const qv = boundValues(q, r);
      setPointer(base, q.pointer, qv[r.int(qv.length)]);
    }
    cases.push({ op: 'validate', bytes: enc.encode(JSON.stringify(base)), doc: base });
  }
  return cases;
}

// Numbers that lie: non-finite (written as null where a number belongs is
// allowed only with a reason), negative times, a key metric outside its interval.
export function checkNumbers(result) {
  const problems = [];
  const walk = (v, where) => {
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) problems.push(`${where} is ${v}`);
      if (/(_ms|_s|_us|time_s|duration_s)$/.test(where) && v < 0) problems.push(`${where} is negative: ${v}`);
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${where}/${i}`));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${where}/${k}`);
  };
  walk(result.metrics, '/metrics');
  for (const k of result.key_metrics || []) {
    if (typeof k.value === 'number') {
      if (!Number.isFinite(k.value)) problems.push(`key metric ${k.id} is ${k.value}`);
      if (/_ms$|_s$|time/.test(k.id) && k.value < 0) problems.push(`key metric ${k.id} is negative`);
      if (k.low !== undefined && !(k.low <= k.value * (1 + 1e-12) + 1e-12 && k.value <= k.high * (1 + 1e-12) + 1e-12)) {
        problems.push(`key metric ${k.id} = ${k.value} outside [${k.low}, ${k.high}]`);
      }
    } else if (k.value === null && k.reason === undefined && !['compare', 'scaling', 'tokens_to_train', 'gpu_hour_usd'].some((n) => JSON.stringify(k).includes(n))) {
      // A key metric the run lacks: allowed (needs-inputs), counted only when a statistic is null without reason.
    }
  }
  return problems;
}

function cliCase(r, tmp) {
  const pick = (a) => a[r.int(a.length)];
  const nums = ['0', '1', '-1', '-2', '2', '1e3', '1.5', 'nan', 'inf', '-inf', '', 'x', '4294967298', '9223372036854775807',
    '9223372036854775808', '-9223372036854775809', '1000000000000', '16777216', '16777217', '1048576', '1048577', '0x10', '+3', ' 4'];
  const presets = ['I1.1', 'I2.1', 'I3.1', 'T1.1', 'nope', '-'];
  const jsonl = path.join(tmp, 'in.jsonl');
  switch (r.int(11)) {
    case 0: return ['ops', '--model', pick(['llama-2-7b', 'mixtral-8x7b', 'gpt2', 'x']), '--gpu', pick(['a100-80g-sxm', 'h100-sxm', 'y']),
      '--phase', pick(['prefill', 'decode', 'train']), '--tokens', pick(nums), ...(r.chance(0.5) ? ['--tp', pick(nums)] : []),
      ...(r.chance(0.5) ? ['--batch', pick(nums)] : []), ...(r.chance(0.3) ? ['--kv-len', pick(nums)] : []),
      ...(r.chance(0.3) ? ['--tier', pick(['auto', 'roofline', 'magic'])] : []), ...(r.chance(0.2) ? ['--training'] : [])];
    case 1: return ['comm', '--collective', pick(['all_reduce', 'all_gather', 'reduce_scatter', 'all_to_all', 'p2p', 'bogus']),
      '--gpus', pick(nums), '--interconnect', pick(['nvlink4-nvswitch', 'ib-hdr', 'pcie4', 'z']), '--bytes', pick(nums),
      ...(r.chance(0.4) ? ['--nodes', pick(nums)] : [])];
    case 2: {
      const axes = [];
      for (let i = 0, n = 1 + r.int(4); i < n; i++) {
        axes.push('--set', `${pick(['/seed', '/serving/workload/num_requests', '/serving/key_metrics/' + pick(nums), 'a.b', '/x/-'])}=${Array.from({ length: 1 + r.int(3) }, () => pick(nums)).join(',')}`);
      }
      return ['sweep', pick(presets), ...axes, ...(r.chance(0.2) ? ['--zip'] : [])];
    }
    case 3: return ['batch', jsonl, '--jobs', pick(nums), ...(r.chance(0.3) ? ['--shard', `${pick(nums)}/${pick(nums)}`] : []), '--central-only',
      ...(r.chance(0.3) ? ['--max-work-units', pick(nums)] : [])];
    case 4: return ['run', '--preset', pick(presets), '--format', pick(['json', 'table', 'csv', 'envelope', 'yaml']), '--central-only',
      ...(r.chance(0.3) ? ['--max-work-units', pick(nums)] : [])];
    case 5: return ['validate', pick([jsonl, path.join(repoRoot, 'presets/scenarios/I1.1.json'), '/nonexistent'])];
    case 6: return ['search', pick([path.join(repoRoot, 'examples/search-llama3-70b.json'), '/nonexistent']), '--jobs', pick(nums), '--top', pick(nums),
      ...(r.chance(0.5) ? ['--confirm', pick(nums)] : []), '--out', path.join(tmp, 'search.out')].filter(() => true);
    case 7: return ['presets', pick(['models', 'gpus', 'scenarios', 'nonsense', '']), ...(r.chance(0.5) ? ['--format', pick(['json', 'table', 'x'])] : [])];
    case 8: return [pick(['registries', 'version']), ...(r.chance(0.3) ? [pick(nums)] : [])];
    case 9: return ['merge', jsonl, ...(r.chance(0.3) ? ['--out'] : [])];
    default: return [pick(['report-e2e', 'report-training']), '--format', pick(['x', '--bogus'])];
  }
}

/** Runs `count` CLI cases; returns counts. Search cases that would run a full search are replaced by their parse check. */
export function fuzzCli({ seed, count }) {
  const r = rng(seed);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sl-bfuzz-'));
  fs.writeFileSync(path.join(tmp, 'in.jsonl'), '{"model":"llama-2-7b"}\n{}\nnot json\n');
  const counts = { cases: 0, crashes: 0, hangs: 0, unlocated: 0, lies: 0, ok: 0, usage: 0, errors: 0, examples: [] };
  const note = (what, args, detail) => {
    counts[what] += 1;
    if (counts.examples.length < 10) counts.examples.push({ what, args: args.join(' '), detail: String(detail).slice(0, 300) });
  };
  for (let i = 0; i < count; i++) {
    let args = cliCase(r, tmp);
    // A search whose flags all parse runs a whole search (tens of seconds):
    // an unknown flag after them keeps the case to the parser's checks.
    if (args[0] === 'search') args = [...args, '--no-such-flag'];
    counts.cases += 1;
    // A hang is a case past 60 s of CPU (the kernel stops it: SIGXCPU); the
    // wall clock is only an outer guard of an hour, as a busy machine slows it.
    const res = spawnCpuBounded(cliPath, args, { cpuSeconds: 60, cwd: repoRoot, encoding: 'utf8', maxBuffer: 1 << 28, input: '' });
    if (res.cpuExceeded) { note('hangs', args, `past 60 s of CPU (${res.cpuS ?? '?'} s)`); continue; }
    if (res.wallGuardHit) { note('hangs', args, 'past the one-hour wall-clock guard'); continue; }
    if (res.signal) { note('crashes', args, `${res.signal} ${res.stderr.slice(0, 200)}`); continue; }
    if (res.status === 2) {
      if (!/^sightline: /.test(res.stderr)) note('unlocated', args, res.stderr);
      else counts.usage += 1;
      continue;
    }
    if (res.status === 1) {
      const lines = res.stderr.split('\n').filter((l) => l.startsWith('error ['));
      const bad = lines.length === 0 || lines.some((l) => !/^error \[[a-z_]+\] at '[^']*': .+/.test(l) || l.includes('[internal_error]'));
      if (bad) note(res.stderr.includes('internal_error') ? 'crashes' : 'unlocated', args, res.stderr);
      else counts.errors += 1;
      continue;
    }
    if (res.status !== 0) { note('crashes', args, `exit ${res.status}: ${res.stderr.slice(0, 200)}`); continue; }
    counts.ok += 1;
    if (args[0] === 'ops' || args[0] === 'comm') {
      const out = JSON.parse(res.stdout);
      const times = args[0] === 'ops' ? [out.step_time_us, ...out.operators.map((o) => o.time_us)] : [out.time_us];
      if (times.some((t) => !Number.isFinite(t) || t < 0)) note('lies', args, `times ${times.slice(0, 4)}`);
    }
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  return counts;
}

/**
 * A case's bytes with its work budget lowered to at most `units`
 * (limits.max_work_units). Used by the sanitizer leg: an -O1 ASan build runs
 * about ten times slower than the release build, so there a full run at the
 * default budget tests the machine's patience, not the engine; the 60 s bound
 * at the default budget is held on the release build
 * (tests/cli/bounds_fuzz.test.mjs). Bytes that are not plain JSON (the engine
 * accepts a few spellings JSON.parse does not) are left as they are.
 */
function withWorkBudget(bytes, units) {
  let s;
  try { s = JSON.parse(new TextDecoder().decode(bytes)); } catch { return bytes; }
  if (!s || typeof s !== 'object' || Array.isArray(s)) return bytes;
  const limits = s.limits && typeof s.limits === 'object' && !Array.isArray(s.limits) ? s.limits : {};
  const current = Number(limits.max_work_units);
  s.limits = { ...limits, max_work_units: Number.isFinite(current) && current > 0 ? Math.min(current, units) : units };
  return new TextEncoder().encode(JSON.stringify(s));
}

/** Engine cases through the native driver (and wasm): located errors, then numbers of the accepted runs. */
export async function fuzzEngine({ seed, count, runs, wasm = false, native = path.join(repoRoot, 'build', 'fuzz_driver'), runWorkUnits = 0 }) {
  // The schema from the driver under test itself (not the CLI): the sanitizer
  // job runs before or beside the release build.
  const schema = runNative(native, [{ op: 'registries', bytes: new Uint8Array(0) }], 120000);
  if (schema.status !== 0 || !schema.replies[0]) throw new Error(`${native} registries failed: ${schema.status} ${schema.stderr}`);
  const parameters = JSON.parse(schema.replies[0]).result.parameters;
  const cases = makeEngineCases({ seed, count, parameters });
  const counts = { cases: 0, parameters: parameters.length, crashes: 0, hangs: 0, unlocated: 0, lies: 0, mismatches: 0,
    accepted: 0, runs: 0, runs_ok: 0, limit_exceeded: 0, examples: [] };
  const note = (what, c, detail) => {
    counts[what] += 1;
    if (counts.examples.length < 10) counts.examples.push({ what, input: new TextDecoder().decode(c.bytes.subarray(0, 200)), detail: String(detail).slice(0, 300) });
  };
  const judgeAll = (list, replies) => {
    for (let i = 0; i < list.length; i++) {
      if (i >= replies.length) { note('crashes', list[i], 'no reply (the driver died)'); break; }
      const problem = judge(replies[i], list[i].bytes);
      if (problem) note(problem === 'crash' ? 'crashes' : problem, list[i], replies[i]);
    }
  };
  let res = runNative(native, cases, 3600000);
  counts.cases += cases.length;
  if (res.timedOut) note('hangs', cases[Math.min(res.replies.length, cases.length - 1)], 'native validate batch timed out');
  judgeAll(cases, res.replies);
  // Full runs of accepted cases, at the default budget (no limits section).
  const accepted = cases.filter((c, i) => res.replies[i] && res.replies[i].startsWith('{"ok":true'));
  counts.accepted = accepted.length;
  const r = rng(seed + 1);
  const runCases = [];
  for (let i = 0; i < runs && accepted.length; i++) {
    const c = accepted[r.int(accepted.length)];
    runCases.push({ op: 'run', bytes: runWorkUnits > 0 ? withWorkBudget(c.bytes, runWorkUnits) : c.bytes });
  }
  // A hang is a run past 60 s of CPU natively (the bound the README states):
  // the run goes under a CPU-time limit a little above it (the kernel stops
  // it), and its CPU time is measured; the wall clock, which a busy machine
  // stretches, is only an outer guard of an hour (tests/tools/cpu_bounded.mjs).
  counts.max_run_cpu_s = 0;
  for (const c of runCases) {
    const t0 = Date.now();
    res = runNative(native, [c], 3600000, [], { cpuSeconds: 65 });
    counts.runs += 1;
    counts.cases += 1;
    if (res.cpuExceeded) { note('hangs', c, `run past 60 s of CPU natively (${res.cpuS ?? '?'} s)`); continue; }
    if (res.timedOut) { note('hangs', c, 'run past the one-hour wall-clock guard'); continue; }
    const cpuS = res.cpuS ?? 0;
    counts.max_run_cpu_s = Math.max(counts.max_run_cpu_s, cpuS);
    if (res.signal || res.status !== 0) { note('crashes', c, `driver ${res.status} ${res.signal}`); continue; }
    judgeAll([c], res.replies);
    const e = JSON.parse(res.replies[0] || '{}');
    if (e.ok) {
      counts.runs_ok += 1;
      for (const p of checkNumbers(e.result)) note('lies', c, p);
    } else if (e.error?.code === 'limit_exceeded') counts.limit_exceeded += 1;
    if (cpuS > 60) note('hangs', c, `${cpuS.toFixed(1)} s of CPU natively (${Date.now() - t0} ms wall)`);
    c.reply = res.replies[0];
  }
  if (wasm) {
    const m = await loadWasmModule();
    for (const c of cases.slice(0, Math.min(cases.length, count))) {
      let reply;
      try { reply = m.validateScenario(c.bytes); } catch (err) { note('crashes', c, `wasm threw ${err}`); continue; }
      const problem = judge(reply, c.bytes);
      if (problem) note(problem === 'crash' ? 'crashes' : problem, c, reply);
      counts.cases += 1;
    }
    for (const c of runCases) {
      let reply;
      try { reply = m.runScenario(c.bytes); } catch (err) { note('crashes', c, `wasm threw ${err}`); continue; }
      if (c.reply !== undefined && reply !== c.reply) note('mismatches', c, `native ${c.reply.slice(0, 120)} | wasm ${reply.slice(0, 120)}`);
      counts.cases += 1;
    }
  }
  return counts;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const arg = (name, dflt) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : dflt;
  };
  const seed = Number(arg('seed', 1));
  const engine = await fuzzEngine({ seed, count: Number(arg('engine', 3000)), runs: Number(arg('runs', 20)), wasm: process.argv.includes('--wasm'),
    native: arg('native', path.join(repoRoot, 'build', 'fuzz_driver')), runWorkUnits: Number(arg('run-work-units', 0)) });
  const cli = fuzzCli({ seed, count: Number(arg('cli', 300)) });
  console.log(JSON.stringify({ engine, cli }, null, 2));
  const bad = (c) => c.crashes + c.hangs + c.unlocated + c.lies + (c.mismatches || 0);
  process.exitCode = bad(engine) + bad(cli) === 0 ? 0 : 1;
}
