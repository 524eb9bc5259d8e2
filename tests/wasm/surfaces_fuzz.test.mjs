// The aimed fuzzer in CI (tests/fuzz/surfaces.mjs, seed 1): real benchmark
// files of every format, calibration files, published HF configs of each
// family and custom hardware (GPUs, pools, wide EP, switch domains), mutated
// with structure (keys removed, types changed, "42abc" / "inf" / "1e400" /
// hex numbers, seconds under _ms keys, TTFT above E2E, nothing completed, deep
// nesting, duplicate keys, size), each case natively (build/fuzz_driver) and
// in the wasm module, byte for byte. Every case must be a result that does not
// lie or an error located in the user's own document: no crash, no hang (CPU
// time), nothing unlocated. The counts per surface and verdict are printed
// (t.diagnostic). A long run: `node tests/fuzz/surfaces.mjs --surface bench
// --cases 100000 --seed 1` (docs/testing.md records one per surface).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fuzzSurface, problems, summary } from '../fuzz/surfaces.mjs';
import { repoRoot } from '../fuzz/surface_seeds.mjs';

// Cases per surface: together about 55 s of CPU on one core (native and wasm;
// the 600 bench cases take about 14 s in the wasm readers, 2 s natively).
// fit: most mutated files are refused before the fit (as they should be), so
// 12 cases held a fitted one only by the draw: a real file added to the seeds
// (tests/data/bench/real) left all 12 refused. 36 hold 2 fitted ones today (6 before nine
// more real files joined the seeds on 2026-11-30, second round).
const CASES = { bench: 600, fit: 36, calibration: 1500, hf: 1500, hardware: 1000 };
// Surfaces run natively only, with the reason. The benchmark readers are
// fuzzed in the Calibrate tab's on-demand module (sightline-calibrate.wasm),
// where the page runs them; the fit there takes the page's request (the form's
// scenario and the files), not the driver's, and tests/web/calibrate.test.mjs
// and tests/wasm/calibrate_module.test.mjs compare it with `sightline fit`.
const NATIVE_ONLY = { fit: 'the wasm fit takes the page\'s request; calibrate_module.test.mjs compares it with native' };
const scale = Number(process.env.SIGHTLINE_SURFACE_FUZZ_SCALE || 1);
const driver = path.join(repoRoot, 'build', 'fuzz_driver');

for (const [surface, n] of Object.entries(CASES)) {
  const cases = Math.max(1, Math.round(n * scale));
  test(`aimed fuzz: ${cases} mutated ${surface} cases, native${NATIVE_ONLY[surface] ? ` (${NATIVE_ONLY[surface]})` : ' and wasm'}`, async (t) => {
    const counts = await fuzzSurface({ surface, seed: 1, cases, native: driver, wasm: true });
    t.diagnostic(`${surface}: ${JSON.stringify(summary(counts))}`);
    const detail = JSON.stringify(counts.examples, null, 1);
    assert.equal(problems(counts), 0, detail);
    assert.equal(counts.cases, cases);
    if (!NATIVE_ONLY[surface]) assert.ok(counts.wasm, 'the wasm module has the entry for this surface');
    // The mutations reach both sides: some results, some located errors.
    assert.ok(counts.ok > 0 && counts.errors > 0, `results and errors: ${JSON.stringify(summary(counts))}`);
  });
}
