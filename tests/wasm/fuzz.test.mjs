// The seeded fuzzer in CI (tests/fuzz/fuzz.mjs): mutated scenario presets
// (text: truncation, invalid UTF-8, lone surrogates, huge numbers, duplicate
// keys, deep nesting; structure: deleted, retyped, duplicated, grown values)
// through the real API in the wasm module and natively (build/fuzz_driver),
// plus full runs under a tight work budget. Every case must give a result or
// a located error, byte-identical in both builds: no crash, trap or hang.
// The long run is `node tests/fuzz/fuzz.mjs --cases 200000 --runs 5000`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fuzz, repoRoot } from '../fuzz/fuzz.mjs';

const VALIDATIONS = Number(process.env.SIGHTLINE_FUZZ_CASES || 20000);
const RUNS = Number(process.env.SIGHTLINE_FUZZ_RUNS || 300);

test(`fuzz: ${VALIDATIONS} mutated scenarios and ${RUNS} budgeted runs, wasm and native`, async () => {
  const counts = await fuzz({
    seed: 1, validations: VALIDATIONS, runs: RUNS, wasm: true,
    native: path.join(repoRoot, 'build', 'fuzz_driver'), nativeCpuSeconds: 300,
  });
  console.log(`fuzz counts: ${JSON.stringify({ ...counts, examples: undefined })}`);
  const detail = JSON.stringify(counts.examples, null, 1);
  assert.equal(counts.crashes, 0, detail);
  assert.equal(counts.hangs, 0, detail);
  assert.equal(counts.unlocated, 0, detail);
  assert.equal(counts.mismatches, 0, detail);
  assert.ok(counts.ok > 0 && counts.errors > 0, 'the cases cover results and errors');
});
