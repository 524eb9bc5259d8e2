// The engine fuzzer: mutates the shipped scenario presets (as text and as
// structure) and runs every case through the real API, in the wasm module
// (Node) and natively (build/fuzz_driver, one process for all cases), and
// counts what must never happen:
//   crashes   - a trap or exception out of wasm, a native driver that dies,
//               an internal_error envelope, a reply that is not JSON;
//   hangs     - a wasm case over HANG_MS of CPU (process.cpuUsage, not the wall
//               clock), or a native batch past its (generous) wall-clock guard;
//   unlocated - an error without a code, or without a path that names where
//               (the root path "" counts only for a root that is not an
//               object, or with a byte offset in the message);
//   mismatch  - native and wasm envelopes that differ in any byte.
// Deterministic: the seed fixes every case.
//
// Long run (documented in docs/testing.md):
//   node tests/fuzz/fuzz.mjs --cases 200000 --runs 5000 --seed 7
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { rng, mutateText, mutateStructure, growScenario } from './mutate.mjs';
import { spawnCpuBounded } from '../tools/cpu_bounded.mjs';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const HANG_MS = 5000;
const enc = new TextEncoder();
const dec = new TextDecoder();

export function loadPresetTexts() {
  const dir = path.join(repoRoot, 'presets', 'scenarios');
  return fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
    .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'));
}

/** The cases of a seed: [{op, bytes}], `validations` validate cases then `runs` run cases. */
export function makeCases({ seed, validations, runs, maxWorkUnits = 3000 }) {
  const r = rng(seed);
  const texts = loadPresetTexts();
  const docs = texts.map((t) => JSON.parse(t));
  const cases = [];
  for (let i = 0; i < validations; i++) {
    const k = r.int(texts.length);
    const bytes = r.chance(0.6) ? mutateText(texts[k], r) : enc.encode(JSON.stringify(mutateStructure(docs[k], r)));
    cases.push({ op: 'validate', bytes });
  }
  for (let i = 0; i < runs; i++) {
    const doc = growScenario(docs[r.int(docs.length)], r, maxWorkUnits);
    cases.push({ op: r.chance(0.2) ? 'sliced' : 'run', bytes: enc.encode(JSON.stringify(doc)) });
  }
  return cases;
}

function rootIsObject(bytes) {
  try {
    const v = JSON.parse(dec.decode(bytes));
    return v !== null && typeof v === 'object' && !Array.isArray(v);
  } catch {
    return true;  // not even JSON: the error must carry a byte offset
  }
}

/** Classifies one reply; returns null when it is fine, else a problem name. */
export function judge(reply, bytes) {
  let e;
  try {
    e = JSON.parse(reply);
  } catch {
    return 'crash';
  }
  if (typeof e.ok !== 'boolean') return 'crash';
  if (e.ok) return null;
  const err = e.error || {};
  if (err.code === 'internal_error') return 'crash';
  if (typeof err.code !== 'string' || !err.code || typeof err.path !== 'string' || typeof err.message !== 'string') {
    return 'unlocated';
  }
  if (err.path === '' && !/byte \d+/.test(err.message) && rootIsObject(bytes)) return 'unlocated';
  return null;
}

function runWasm(m, c) {
  const arg = c.bytes;  // Embind takes a Uint8Array for std::string: raw bytes, invalid UTF-8 included
  if (c.op === 'validate') return m.validateScenario(arg);
  if (c.op === 'run') return m.runScenario(arg);
  const started = m.start(arg);
  const s = JSON.parse(started);
  if (!s.ok) return started;
  for (;;) {
    const st = JSON.parse(m.step(s.result.handle, 97));
    if (!st.ok) return JSON.stringify(st);
    if (st.result.done) break;
  }
  return m.result(s.result.handle);
}

// `name`: the page's module (sightline) or the Calibrate tab's on-demand one
// (sightline-calibrate: the benchmark readers and the fit).
export async function loadWasmModule(name = 'sightline') {
  const wasmDir = path.join(repoRoot, 'build-wasm', 'wasm');
  const require = createRequire(import.meta.url);
  const create = require(path.join(wasmDir, `${name}.js`));
  return create({ wasmBinary: fs.readFileSync(path.join(wasmDir, `${name}.wasm`)) });
}

/**
 * Runs every case natively in one driver process; returns the replies (one per
 * case, or fewer if it died). `timeoutMs` is a wall-clock outer guard only;
 * with `cpuSeconds` the driver also runs under that CPU-time bound
 * (tests/tools/cpu_bounded.mjs) and the result carries its CPU seconds.
 */
export function runNative(driver, cases, timeoutMs, args = [], { cpuSeconds = 0 } = {}) {
  const chunks = [];
  for (const c of cases) chunks.push(enc.encode(`${c.op} ${c.bytes.length}\n`), c.bytes);
  const input = Buffer.concat(chunks.map((b) => Buffer.from(b.buffer, b.byteOffset, b.length)));
  const res = cpuSeconds > 0
    ? spawnCpuBounded(driver, args, { cpuSeconds, wallGuardMs: timeoutMs, input, maxBuffer: 1 << 30 })
    : spawnSync(driver, args, { input, maxBuffer: 1 << 30, timeout: timeoutMs });
  const replies = res.stdout.toString('utf8').split('\n');
  replies.pop();  // after the last newline
  return {
    replies, status: res.status, signal: res.signal, timedOut: res.error?.code === 'ETIMEDOUT', stderr: String(res.stderr),
    cpuS: res.cpuS ?? null, cpuExceeded: res.cpuExceeded ?? false,
  };
}

/**
 * Runs the cases and counts problems. `native`: path of fuzz_driver or null;
 * `wasm`: true to run in the wasm module too.
 */
export async function fuzz({ seed = 1, validations = 20000, runs = 200, native = null, wasm = true, nativeCpuSeconds = 300, nativeWallGuardMs = 3600000 }) {
  const cases = makeCases({ seed, validations, runs });
  const counts = { cases: cases.length, validations, runs, crashes: 0, hangs: 0, unlocated: 0, mismatches: 0,
    ok: 0, errors: 0, limit_exceeded: 0, wasm_ms: 0, native_ms: 0, examples: [] };
  const note = (what, i, detail) => {
    counts[what] += 1;
    if (counts.examples.length < 10) {
      counts.examples.push({ what, case: i, op: cases[i].op, input: dec.decode(cases[i].bytes.subarray(0, 160)), detail: String(detail).slice(0, 300) });
    }
  };
  let wasmReplies = null;
  if (wasm) {
    let m = await loadWasmModule();
    wasmReplies = [];
    const t0 = Date.now();
    for (let i = 0; i < cases.length; i++) {
      const c = cases[i];
      const cpu0 = process.cpuUsage();  // a hang is judged on CPU time, not the wall clock
      let reply;
      try {
        reply = runWasm(m, c);
      } catch (err) {
        note('crashes', i, `wasm threw: ${err}`);
        m = await loadWasmModule();  // a trapped instance is unusable
        wasmReplies.push(null);
        continue;
      }
      const used = process.cpuUsage(cpu0);
      const cpuMs = (used.user + used.system) / 1000;
      if (cpuMs > HANG_MS) note('hangs', i, `${cpuMs.toFixed(0)} ms of CPU in wasm`);
      wasmReplies.push(reply);
      const problem = judge(reply, c.bytes);
      if (problem) note(problem === 'crash' ? 'crashes' : problem, i, reply);
      else {
        const e = JSON.parse(reply);
        if (e.ok) counts.ok += 1; else counts.errors += 1;
        if (reply.includes('limit_exceeded')) counts.limit_exceeded += 1;
      }
    }
    counts.wasm_ms = Date.now() - t0;
  }
  if (native) {
    const t0 = Date.now();
    // A hang is judged on the driver's CPU time; the wall clock is an outer guard only.
    const res = runNative(native, cases, nativeWallGuardMs, [], { cpuSeconds: nativeCpuSeconds });
    counts.native_ms = Date.now() - t0;
    if (res.cpuExceeded || res.timedOut) {
      note('hangs', Math.min(res.replies.length, cases.length - 1),
        res.cpuExceeded ? `native driver past ${nativeCpuSeconds} s of CPU` : `native driver past the ${nativeWallGuardMs} ms outer guard`);
    }
    else if (res.status !== 0) note('crashes', Math.min(res.replies.length, cases.length - 1), `native driver exit ${res.status} ${res.signal ?? ''} ${res.stderr.slice(0, 200)}`);
    for (let i = 0; i < res.replies.length && i < cases.length; i++) {
      const reply = res.replies[i];
      if (!wasm) {
        const problem = judge(reply, cases[i].bytes);
        if (problem) note(problem === 'crash' ? 'crashes' : problem, i, reply);
        else if (JSON.parse(reply).ok) counts.ok += 1; else counts.errors += 1;
        if (!problem && reply.includes('limit_exceeded')) counts.limit_exceeded += 1;
      }
      if (wasmReplies && wasmReplies[i] !== null && wasmReplies[i] !== reply) note('mismatches', i, `native ${reply.slice(0, 140)} | wasm ${wasmReplies[i].slice(0, 140)}`);
    }
  }
  return counts;
}

// Command line: node tests/fuzz/fuzz.mjs [--cases N] [--runs M] [--seed S] [--native PATH|none] [--no-wasm]
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const arg = (name, dflt) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? process.argv[i + 1] : dflt;
  };
  const nativeArg = arg('native', path.join(repoRoot, 'build', 'fuzz_driver'));
  const counts = await fuzz({
    seed: Number(arg('seed', 1)),
    validations: Number(arg('cases', 20000)),
    runs: Number(arg('runs', 200)),
    native: nativeArg === 'none' ? null : nativeArg,
    wasm: !process.argv.includes('--no-wasm'),
    nativeCpuSeconds: Number(arg('native-cpu-seconds', 3600)),
  });
  console.log(JSON.stringify(counts, null, 2));
  process.exitCode = counts.crashes + counts.hangs + counts.unlocated + counts.mismatches === 0 ? 0 : 1;
}
