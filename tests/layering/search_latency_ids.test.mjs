// A deployment search's latencies are quoted at the question's percentile, by
// ids the engine spells once (engine/search/deployment_search.hpp latency_id,
// written in the plan and the answer as `question_latencies`). The page's
// search modules read those ids and words; one spelled in the page (a literal
// 'ttft_p99_ms', or `${metric}_${pct}_ms`) would drift from the engine's the
// day its rule changes, and once quoted P99 figures in a P90 question's share
// link. This test fails on such a spelling in web/src/client/search*.js. The
// scanner is checked on a small text first, so that a blind scanner cannot pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { lineFindings } from './line_scan.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const clientDir = path.join(repo, 'web/src/client');

// 'ttft_p90_ms' / "tpot_p99_ms" as a literal, or a template that builds a `..._ms` id from parts.
const spelledId = /['"`](ttft|tpot|e2e|itl)_p\d+_ms['"`]|`[^`]*\$\{[^}]+\}_\$\{[^}]+\}_ms`/;

// Comments may name an id ('ttft_p90_ms') to explain one: they are skipped.
const findings = (file, text) => lineFindings(file, text, spelledId, { docComments: true });

test('the scanner finds spelled latency ids, not the engine-named ones', () => {
  const text = [
    "const key = axes[1] || 'ttft_p99_ms';",
    'return { id: `${metric}_${pct}_ms` };',
    'summary.tpot_p90_ms = b["tpot_p90_ms"];',
    "const key = axes[1] || this.questionLatency('ttft').id;",
    '// the engine id, e.g. \'ttft_p90_ms\'',
    " * ('tpot_p90_ms') and its words",
    'for (const { id } of Object.values(a.question_latencies)) summary[id] = b[id];',
  ].join('\n');
  assert.deepEqual(findings('x.js', text).map((f) => f.split(':')[1]), ['1', '2', '3']);
});

test("the page's search modules spell no latency id: they read the engine's question_latencies", () => {
  const files = fs.readdirSync(clientDir).filter((f) => /^search[\w-]*\.js$/.test(f));
  assert.ok(files.length >= 4, `scanned ${files.join(', ')}`);
  const found = files.flatMap((f) => findings(`web/src/client/${f}`, fs.readFileSync(path.join(clientDir, f), 'utf8')));
  assert.deepEqual(found, []);
});
