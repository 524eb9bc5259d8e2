// Golden scenarios: tests/golden/<name>.json is a scenario, <name>.expected.json
// the metrics the real CLI produced when the golden was last reviewed.
// tests/golden/<name>.search.json is a search question (deployment or
// training), and its <name>.search.expected.json the answer: the ranking in
// order with each candidate's key metrics, the Pareto front and the space.
// Regenerate after an intended model change with:
//   SIGHTLINE_REGENERATE=1 node --test tests/cli/golden.test.mjs
// and review the diff before committing it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

const goldenDir = path.join(repoRoot, 'tests', 'golden');
const relTolerance = 1e-9;
const regenerate = process.env.SIGHTLINE_REGENERATE === '1';

// Latency goldens hold the metrics and memory; serving and training goldens also
// hold the ordered key metrics with their 80% intervals, and training ones the
// step breakdown, communication, per-layer figures and compare variants, so a
// change in how results are written is caught as well as a change in the model.
function pick(result) {
  const picked = { metrics: result.metrics, memory_per_gpu: result.memory_per_gpu, cost_tier: result.cost_tier };
  if (result.kind === 'serving_simulation' || result.kind === 'training') picked.key_metrics = result.key_metrics;
  if (result.kind === 'training') {
    for (const key of ['step_breakdown_ms', 'communication', 'per_layer', 'compare']) picked[key] = result[key];
  }
  return picked;
}

function compare(actual, expected, where) {
  if (typeof expected === 'number') {
    const tol = relTolerance * Math.max(1, Math.abs(expected));
    assert.ok(Math.abs(actual - expected) <= tol, `${where}: ${actual} != ${expected}`);
  } else if (expected && typeof expected === 'object') {
    assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), `${where}: keys differ`);
    for (const k of Object.keys(expected)) compare(actual[k], expected[k], `${where}.${k}`);
  } else {
    assert.equal(actual, expected, where);
  }
}

// A search's answer: what `sightline search` ranks, in its order.
function pickSearch(result) {
  const name = (c) => c.deployment ?? c.configuration;
  return {
    kind: result.kind ?? 'deployment_search',
    space: result.space,
    key_metrics: result.key_metrics,
    ranked: result.ranked.map((c) => ({ name: name(c), key_metrics: c.key_metrics ?? null })),
    pareto_front: result.pareto_front.map(name),
  };
}

const isExpected = (f) => f.endsWith('.expected.json');
const cases = readdirSync(goldenDir).filter((f) => f.endsWith('.json') && !isExpected(f) && !f.endsWith('.search.json'));
const searches = readdirSync(goldenDir).filter((f) => f.endsWith('.search.json'));

test('there are golden scenarios, and a golden answer of each search', () => {
  assert.ok(cases.length >= 5);
  const kinds = searches.map((f) => JSON.parse(readFileSync(path.join(goldenDir, f), 'utf8')).kind ?? 'deployment_search');
  assert.deepEqual([...new Set(kinds)].sort(), ['deployment_search', 'training_search']);
});

for (const file of searches) {
  test(`golden search ${file}`, () => {
    const out = execFileSync(cliPath, ['search', path.join(goldenDir, file), '--format', 'json'], { cwd: repoRoot });
    const actual = pickSearch(JSON.parse(out.toString()));
    assert.ok(actual.ranked.length >= 2, 'the question ranks several candidates');
    const expectedPath = path.join(goldenDir, file.replace(/\.json$/, '.expected.json'));
    if (regenerate) {
      writeFileSync(expectedPath, JSON.stringify(actual, null, 2) + '\n');
      return;
    }
    compare(actual, JSON.parse(readFileSync(expectedPath, 'utf8')), file);
  });
}

for (const file of cases) {
  test(`golden ${file}`, () => {
    const out = execFileSync(cliPath, ['run', path.join(goldenDir, file), '--format', 'json'], { cwd: repoRoot });
    const actual = pick(JSON.parse(out.toString()).result);
    const expectedPath = path.join(goldenDir, file.replace(/\.json$/, '.expected.json'));
    if (regenerate) {
      writeFileSync(expectedPath, JSON.stringify(actual, null, 2) + '\n');
      return;
    }
    compare(actual, JSON.parse(readFileSync(expectedPath, 'utf8')), file);
  });
}
