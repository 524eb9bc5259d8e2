// The bounds fuzzer (tests/fuzz/bounds_fuzz.mjs) in CI, wasm side: the same
// schema-bounds cases validated in the wasm module, and the full runs compared
// byte for byte with the native ones. Prints the counts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fuzzEngine } from '../fuzz/bounds_fuzz.mjs';

test('bounds fuzzer, engine in wasm: no crash, no unlocated error, runs identical to native', async () => {
  const { examples, ...c } = await fuzzEngine({ seed: 13, count: 1500, runs: 8, wasm: true });
  console.log('bounds fuzz (engine, native + wasm):', JSON.stringify(c));
  assert.deepEqual({ crashes: c.crashes, hangs: c.hangs, unlocated: c.unlocated, lies: c.lies, mismatches: c.mismatches },
    { crashes: 0, hangs: 0, unlocated: 0, lies: 0, mismatches: 0 }, JSON.stringify(examples, null, 1));
});
