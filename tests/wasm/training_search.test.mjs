// The training configuration search in the real wasm module (trainingSearch):
// the same answer, byte for byte once parsed, as the native CLI's
// `search QUESTION --format json`, and located errors for bad questions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { loadWasm, repoRoot, cliPath } from './wasm_module.mjs';

test('trainingSearch gives the native answer; bad questions get located errors', async () => {
  const m = await loadWasm();
  const file = path.join(repoRoot, 'examples', 'search-training-llama3-8b.json');
  const question = JSON.parse(readFileSync(file, 'utf8'));
  const r = JSON.parse(m.trainingSearch(JSON.stringify(question)));
  assert.equal(r.ok, true, JSON.stringify(r.error));
  assert.equal(r.result.kind, 'training_search');
  const native = spawnSync(cliPath, ['search', file, '--format', 'json', '--jobs', '2'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(native.status, 0, native.stderr);
  assert.deepEqual(r.result, JSON.parse(native.stdout), 'native == wasm');
  question.zero_stage = [1, 4];
  const bad = JSON.parse(m.trainingSearch(JSON.stringify(question)));
  assert.equal(bad.ok, false);
  assert.equal(bad.error.path, '/zero_stage/1');
});
