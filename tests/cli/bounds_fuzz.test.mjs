// The bounds fuzzer (tests/fuzz/bounds_fuzz.mjs) in CI, native side: every
// parameter of the exported schema at and past its bounds (validated, and a
// share run in full at the real default budget with their numbers checked),
// and every CLI command with flag values at and past their bounds. Prints the
// counts; any crash, hang, unlocated error or lying number fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fuzzEngine, fuzzCli } from '../fuzz/bounds_fuzz.mjs';

const strip = ({ examples, ...counts }) => counts;

test('bounds fuzzer, engine: schema bounds validated natively, accepted cases run at the default budget', async () => {
  const c = await fuzzEngine({ seed: 11, count: 4000, runs: 24 });
  console.log('bounds fuzz (engine, native):', JSON.stringify(strip(c)));
  assert.ok(c.runs > 0 && c.accepted > 0, 'the fuzzer must reach full runs');
  assert.deepEqual({ crashes: c.crashes, hangs: c.hangs, unlocated: c.unlocated, lies: c.lies },
    { crashes: 0, hangs: 0, unlocated: 0, lies: 0 }, JSON.stringify(c.examples, null, 1));
});

test('bounds fuzzer, CLI: every command with flag values at and past their bounds', () => {
  const c = fuzzCli({ seed: 12, count: 600 });
  console.log('bounds fuzz (CLI):', JSON.stringify(strip(c)));
  assert.ok(c.ok > 0 && c.usage > 0 && c.errors > 0, 'the fuzzer must reach successes, usage errors and engine errors');
  assert.deepEqual({ crashes: c.crashes, hangs: c.hangs, unlocated: c.unlocated, lies: c.lies },
    { crashes: 0, hangs: 0, unlocated: 0, lies: 0 }, JSON.stringify(c.examples, null, 1));
});
