// A search candidate opened as a serving simulation (web/src/client/search.js asFormScenario:
// a one-pool candidate written as serving.parallelism, so TP and PP show in the form)
// runs to the same figures as the candidate itself, for every candidate of the
// canonical search (examples/search-llama3-70b.json, planned by the wasm module's
// searchPlan, as the page plans it). Both run natively (`sightline batch
// --central-only`), shortened alike to 200 requests without the steady-state growth
// (the same change to both, so equal results stay equal and the test stays short).
// Needs build/web (node web/build.mjs build/web), build-wasm and build/sightline; no browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { repoDir, siteDir, cliPath } from './harness.mjs';

const needs = [path.join(siteDir, 'client', 'search.js'), path.join(repoDir, 'build-wasm', 'wasm', 'sightline.js'), cliPath];
const missing = needs.filter((f) => !fs.existsSync(f));

/** The same short run of a candidate or its form scenario: 200 requests, no steady-state growth. */
function shortened(scenario) {
  const s = structuredClone(scenario);
  s.serving.workload.num_requests = 200;
  delete s.serving.steady_state;
  return s;
}

/**
 * A result as compared: all but the scenario it echoes (written in the form's own spelling) and the
 * name of its one pool (the plan names it "main", serving.parallelism's pool is "replicas"), which
 * the result repeats beside its figures.
 */
function figures(line) {
  const r = JSON.parse(line);
  const res = r.ok === true && r.result ? r.result : r;
  assert.ok(!r.error && res.metrics, `a run failed: ${line.slice(0, 300)}`);
  const { scenario, ...rest } = res;
  for (const p of (rest.deployment && rest.deployment.pools) || []) delete p.name;
  for (const m of Array.isArray(rest.memory_per_gpu) ? rest.memory_per_gpu : []) delete m.pool;
  return rest;
}

test('every candidate of the canonical search runs to the same figures as its form scenario', { skip: missing.length ? `needs ${missing.join(', ')}` : false }, async () => {
  const { asFormScenario, planScenarios } = await import(pathToFileURL(path.join(siteDir, 'client', 'search.js')).href);
  const { loadWasm } = await import(pathToFileURL(path.join(repoDir, 'tests', 'wasm', 'wasm_module.mjs')).href);
  const m = await loadWasm();
  const question = JSON.parse(fs.readFileSync(path.join(repoDir, 'examples', 'search-llama3-70b.json'), 'utf8'));
  const plan = JSON.parse(m.searchPlan(JSON.stringify(question)));
  assert.equal(plan.ok, true, JSON.stringify(plan.error));
  const candidates = planScenarios(plan.result);
  assert.ok(candidates.length >= 20, `${candidates.length} candidates`);
  const forms = candidates.map((c) => asFormScenario(c, null));
  // Most candidates are one pool of identical replicas: those must show as TP and PP in the form.
  const plain = forms.filter((f) => f.serving.parallelism && !(f.serving.cluster && f.serving.cluster.pools));
  assert.ok(plain.length >= candidates.length / 2, `${plain.length} of ${candidates.length} written as serving.parallelism`);
  forms.forEach((f, i) => {
    if (!f.serving.parallelism) return;
    const [pool] = candidates[i].serving.cluster.pools;
    assert.deepEqual([f.serving.parallelism.tp, f.serving.parallelism.pp], [pool.tp ?? 1, pool.pp ?? 1], `candidate ${i}`);
  });
  const input = [...candidates, ...forms].map((s) => JSON.stringify(shortened(s))).join('\n');
  const r = spawnSync(cliPath, ['batch', '-', '--central-only', '--jobs', '1'], { input, encoding: 'utf8', maxBuffer: 1 << 30 });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.split('\n').filter(Boolean);
  assert.equal(lines.length, 2 * candidates.length);
  const n = candidates.length;
  const differ = [];
  for (let i = 0; i < n; i += 1) {
    if (JSON.stringify(figures(lines[i])) !== JSON.stringify(figures(lines[n + i]))) differ.push(i);
  }
  assert.deepEqual(differ, [], `candidates whose form scenario runs to other figures (of ${n})`);
});
