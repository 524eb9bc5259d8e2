// Speed of the serving simulator in wasm under Node: the same scenario as
// bench_serving (10,000 requests of Llama-3-8B on one H100 at QPS 20),
// through the module's runScenario. Target: under 1 s.
// Usage: node tests/bench/bench_serving_wasm.mjs [wasm-dir] [repetitions]
//   wasm-dir defaults to $SIGHTLINE_WASM_DIR or build-wasm/wasm.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const wasmDir = path.resolve(process.argv[2] || process.env.SIGHTLINE_WASM_DIR || path.join(repoRoot, 'build-wasm', 'wasm'));
const reps = Math.max(1, Number(process.argv[3] || 5));
const scenario = readFileSync(path.join(repoRoot, 'tests', 'bench', 'bench_scenario.json'), 'utf8');

const require = createRequire(import.meta.url);
const createSightline = require(path.join(wasmDir, 'sightline.js'));
const m = await createSightline({ wasmBinary: readFileSync(path.join(wasmDir, 'sightline.wasm')) });

const times = [];
let result = null;
for (let i = 0; i < reps; i++) {
  const t0 = performance.now();
  const out = m.runScenario(scenario);
  times.push(performance.now() - t0);
  if (i === 0) {
    const envelope = JSON.parse(out);
    if (!envelope.ok) {
      console.error('run failed:', JSON.stringify(envelope.error));
      process.exit(1);
    }
    result = envelope.result;
  }
}
times.sort((a, b) => a - b);
const best = times[0];
const median = times[Math.floor(times.length / 2)];
const events = result.limits.events;
console.log(`serving simulator benchmark (wasm, Node ${process.version}): ${result.scenario.title}`);
console.log(`  requests      ${result.metrics.requests.completed} completed of ${result.metrics.requests.total}`);
console.log(`  events        ${events}`);
console.log(`  wall time     best ${best.toFixed(1)} ms, median ${median.toFixed(1)} ms over ${reps} runs (runScenario, JSON in and out)`);
console.log(`  events/s      ${(events / (best / 1000)).toPrecision(3)} (best run)`);
const pass = best < 1000;
console.log(`  target        < 1000 ms in wasm: ${pass ? 'met' : 'NOT met'}`);
process.exit(pass ? 0 : 2);
