// The serving deployment search through the real CLI, on a question small
// enough for CI: the answer meets the SLO, --jobs changes nothing, and
// --confirm re-runs the answer as an ordinary longer simulation whose verdict
// follows from its own attainment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

function cli(args) {
  const r = spawnSync(cliPath, args, { cwd: repoRoot, encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function smallQuestion() {
  const q = JSON.parse(fs.readFileSync(path.join(repoRoot, 'examples/search-llama3-70b.json'), 'utf8'));
  q.target_qps = 2;
  q.max_gpus = 16;
  q.gpus = [q.gpus[0]];
  q.tp = [8];
  q.max_num_seqs = [64];
  q.chunked_prefill = [true];
  q.requests = 600;
  q.max_requests = 3000;
  q.replica_options = 1;
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'search-')), 'q.json');
  fs.writeFileSync(file, JSON.stringify(q));
  return file;
}

test('deployment search: the answer, the same on 1 and 2 threads, confirmed by a longer run', () => {
  const q = smallQuestion();
  const one = cli(['search', q, '--format', 'json', '--jobs', '1', '--confirm', '2000']);
  assert.equal(one.code, 0, one.err);
  const two = cli(['search', q, '--format', 'json', '--jobs', '2', '--confirm', '2000']);
  assert.equal(two.out, one.out, '--jobs changes nothing in the output');
  const r = JSON.parse(one.out);
  const best = r.cheapest_meeting_slo;
  assert.ok(best && best.meets_slo, 'a deployment meets the SLO');
  const c = r.confirmation;
  assert.equal(c.deployment, best.deployment);
  assert.ok(c.requests >= Math.max(2000, 2 * best.requests));
  assert.equal(c.completed, c.requests);
  assert.equal(c.meets_slo, c.slo_attainment >= c.required_attainment);
  assert.equal(c.meets_slo, true, JSON.stringify(c));
  const table = cli(['search', q, '--confirm', '2000']);
  assert.match(table.out, /confirmation run \(\d+ requests, no steady-state sizing\): .*meets the SLO/);
});

test('deployment search: a bad --confirm is a usage error', () => {
  const r = cli(['search', 'examples/search-llama3-70b.json', '--confirm', 'lots']);
  assert.notEqual(r.code, 0);
  assert.match(r.err, /--confirm takes a number of requests/);
});
