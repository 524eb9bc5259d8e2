// CONTRIBUTING.md walks through adding a serving metric with the whole diff
// (issue 40: "adding a serving metric is a change to one table plus its
// computation; a doc walks through it"). The diff is quoted, not applied, so
// it goes stale when the table moves: this holds each hunk to the tree, at the
// line its header names, and the added row to the typed field it reads.
// Cost: reading files only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (rel) => fs.readFileSync(path.join(repo, rel), 'utf8');

/** The ```diff blocks of a markdown text, each as {file, hunks: [{oldStart, lines}]}. */
export function quotedDiffs(markdown) {
  const out = [];
  for (const m of markdown.matchAll(/```diff\n([^]*?)\n```/g)) {
    const lines = m[1].split('\n');
    const file = /^\+\+\+ b\/(.+)$/m.exec(m[1]);
    const hunks = [];
    for (const line of lines) {
      const h = /^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@/.exec(line);
      if (h) hunks.push({ oldStart: Number(h[1]), lines: [] });
      else if (hunks.length && /^[ +-]/.test(line) && !/^(?:\+\+\+|---) /.test(line)) hunks.at(-1).lines.push(line);
    }
    out.push({ file: file && file[1], hunks });
  }
  return out;
}

test('CONTRIBUTING\'s serving-metric diff applies at the lines it names', () => {
  const diffs = quotedDiffs(read('CONTRIBUTING.md'));
  const table = diffs.find((d) => d.file === 'engine/scenario/serving_metric_table.hpp');
  assert.ok(table, 'CONTRIBUTING.md quotes a diff of engine/scenario/serving_metric_table.hpp');
  const tree = read(table.file).split('\n');
  for (const hunk of table.hunks) {
    // The old side (context and removed lines) must stand in the file from oldStart on.
    const old = hunk.lines.filter((l) => !l.startsWith('+')).map((l) => l.slice(1));
    const at = tree.slice(hunk.oldStart - 1, hunk.oldStart - 1 + old.length);
    const found = tree.findIndex((_, i) => old.every((l, k) => tree[i + k] === l));
    assert.deepEqual(at, old, `the hunk at line ${hunk.oldStart} is stale` +
      (found >= 0 ? `: its lines now start at line ${found + 1} (fix the @@ header)` : ': its lines are no longer in the table'));
  }
});

test('the walkthrough\'s new row reads a field the typed serving metrics have, written at the row\'s pointer', () => {
  const [table] = quotedDiffs(read('CONTRIBUTING.md')).filter((d) => d.file === 'engine/scenario/serving_metric_table.hpp');
  const added = table.hunks.flatMap((h) => h.lines.filter((l) => l.startsWith('+'))).join('\n');
  const row = /SERVING_METRIC\("([a-z_0-9]+)", "[^"]*", "[^"]*", "\/metrics\/([a-z_]+)\/([a-z_]+)"[^]*?m\.([a-z_]+)\.([a-z_]+); \}\)\)/.exec(added);
  assert.ok(row, `the added lines are one SERVING_METRIC row with a getter of m.<block>.<field>:\n${added}`);
  const [, id, block, key, getterBlock, field] = row;
  assert.equal(getterBlock, block, 'the getter reads the block the pointer names');
  assert.match(read('engine/serve/serving_metrics.hpp'), new RegExp(`\\b${field}\\b`), `ServingMetrics has no field ${field}`);
  assert.match(read('engine/serve/serving_metrics.cpp'), new RegExp(`m\\["${block}"\\] = \\{[^;]*\\{"${key}", ${block}\\.${field}\\}`),
    `ServingMetrics::to_json writes ${block}.${field} at /metrics/${block}/${key}`);
  assert.doesNotMatch(read('engine/scenario/serving_metric_table.hpp'), new RegExp(`SERVING_METRIC\\("${id}"`),
    `${id} ships now: the walkthrough should add a metric that does not`);
});
