// wasm against native on the same scenarios (issue 41, point 3): each
// scenario run by the native CLI (`sightline run FILE --format json`, its CPU
// from bash's `time`, process start included) and by the wasm module under
// Node in this process (runScenario, or startCentralOnly/step/result for a
// central-only run; its CPU from process.cpuUsage around the call, the
// module's load left out), and the ratio wasm / native CPU. The two results'
// metrics must be equal (the determinism test holds them byte for byte).
//   scenarios: the head-to-head example (Llama-2-7B, one A100, Poisson
//   10 req/s, 512/128) at 1k, 10k and 100k requests, central only and in the
//   default mode, and tests/bench/bench_scenario.json (Llama-3-8B on one H100).
// Each scenario runs `rounds` times on each side, native and wasm alternately;
// the ratio is of the medians. The wasm module's first run of each scenario
// is timed apart ("first"): V8 compiles a function with its baseline compiler
// (Liftoff) and, once it is hot, again with its optimizing one (TurboFan, on
// background threads that process.cpuUsage counts), so a scenario's first
// run pays for the tier-up of the code it reaches first; the medians are of
// warm code, which is what a page's later runs get (docs/speed.md "wasm,
// third pass").
// Usage: node tests/bench/bench_wasm_vs_native.mjs [native-binary] [wasm-dir] [largest-request-count] [rounds]
//   defaults: build/sightline, $SIGHTLINE_WASM_DIR or build-wasm/wasm, 100000, 3.
// Prints one line per scenario; exits 1 when a run fails or the two disagree (no timing can fail it).
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const native = path.resolve(process.argv[2] || path.join(repoRoot, 'build', 'sightline'));
const wasmDir = path.resolve(process.argv[3] || process.env.SIGHTLINE_WASM_DIR || path.join(repoRoot, 'build-wasm', 'wasm'));
const largest = Number(process.argv[4] || 100000);
const rounds = Math.max(1, Number(process.argv[5] || 3));

const require = createRequire(import.meta.url);
const createSightline = require(path.join(wasmDir, 'sightline.js'));
const m = await createSightline({ wasmBinary: readFileSync(path.join(wasmDir, 'sightline.wasm')) });

const headToHead = JSON.parse(readFileSync(path.join(repoRoot, 'examples', 'head-to-head-llama2-7b-a100-10k.json'), 'utf8'));
const scenarios = [];
for (const n of [1000, 10000, 100000]) {
  if (n > largest) break;
  const s = structuredClone(headToHead);
  s.serving.workload.num_requests = n;
  s.serving.limits = { max_requests: n, max_sim_time_s: 1000000 };
  scenarios.push({ label: `head-to-head, ${n} requests`, scenario: s });
}
scenarios.push({
  label: 'bench_scenario (Llama-3-8B, H100, 10k)',
  scenario: JSON.parse(readFileSync(path.join(repoRoot, 'tests', 'bench', 'bench_scenario.json'), 'utf8')),
});

const dir = mkdtempSync(path.join(tmpdir(), 'sightline-wasm-bench-'));

// bash's `time` prints the child's user and system CPU to the millisecond; GNU
// time's %U %S print hundredths, which made a 1k run's native CPU 0.01 or 0.02 s
// and its ratio a coin toss (docs/speed.md "wasm, second pass").
function runNative(file, centralOnly) {
  const args = ['-c', 'TIMEFORMAT="%3U %3S"; time "$0" "$@"', native, 'run', file, '--format', 'json',
                ...(centralOnly ? ['--central-only'] : [])];
  const r = spawnSync('bash', args, { encoding: 'utf8', maxBuffer: 1 << 30 });
  const lines = r.stderr.trim().split('\n');
  const [user, sys] = lines.at(-1).split(' ').map(Number);
  return { cpu_s: user + sys, envelope: JSON.parse(r.stdout) };
}

function runWasm(text, centralOnly) {
  const t0 = process.cpuUsage();
  let out;
  if (!centralOnly) {
    out = m.runScenario(text);
  } else {
    const started = JSON.parse(m.startCentralOnly(text));
    if (!started.ok) return { cpu_s: 0, envelope: started };
    const handle = started.result.handle;
    for (;;) {
      const s = JSON.parse(m.step(handle, 1000000));
      if (!s.ok || s.result.done) break;
    }
    out = m.result(handle);
  }
  const used = process.cpuUsage(t0);
  return { cpu_s: (used.user + used.system) * 1e-6, envelope: JSON.parse(out) };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

// One untimed run first: V8 compiles the module's hot functions in tiers
// (Liftoff, then TurboFan), which the first run pays (a page pays it once).
runWasm(JSON.stringify(scenarios[0].scenario), true);

let failed = false;
console.log(`wasm (Node ${process.version}) against native (${native}): CPU seconds, medians of ${rounds}, wasm / native`);
for (const { label, scenario } of scenarios) {
  const file = path.join(dir, 'scenario.json');
  const text = JSON.stringify(scenario);
  writeFileSync(file, text);
  for (const centralOnly of [true, false]) {
    const what = `${label}, ${centralOnly ? 'central' : 'default'}`;
    const first = runWasm(text, centralOnly);
    const natives = [], wasms = [];
    for (let k = 0; k < rounds; ++k) {
      natives.push(runNative(file, centralOnly));
      wasms.push(runWasm(text, centralOnly));
    }
    const bad = [first, ...natives, ...wasms].find(r => !r.envelope.ok);
    if (bad) {
      console.log(`  ${what.padEnd(52)} FAILED: ${JSON.stringify(bad.envelope.error)}`);
      failed = true;
      continue;
    }
    const metrics = JSON.stringify(natives[0].envelope.result.metrics);
    const same = [first, ...natives, ...wasms].every(r => JSON.stringify(r.envelope.result.metrics) === metrics);
    if (!same) failed = true;
    const n = median(natives.map(r => r.cpu_s)), w = median(wasms.map(r => r.cpu_s));
    const events = natives[0].envelope.result.limits?.events ?? 0;
    console.log(`  ${what.padEnd(52)} native ${n.toFixed(3).padStart(6)} s  wasm ${w.toFixed(3).padStart(6)} s  ` +
                `${(w / Math.max(1e-3, n)).toFixed(2)}x  (first ${(first.cpu_s / Math.max(1e-3, n)).toFixed(2)}x)  ` +
                `${events} events  metrics ${same ? 'equal' : 'DIFFER'}`);
  }
}
rmSync(dir, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
