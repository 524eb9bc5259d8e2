// The docs quote what the CLI prints (issue 40, "signposts"): the quoted
// outputs that no other test checks are held here to the engine's output, or
// to the stored record of a run too long for CI, so that a stale figure fails.
// (Checked elsewhere: README run and search blocks, tests/cli/readme_examples.test.mjs;
// the hardware examples' tables, blocks and docs/presets.md's NVL72 paragraph, hardware_examples.test.mjs;
// docs/training.md's explain-train-step block, explain_train_step.test.mjs;
// docs/training.md's report-training table, training_report.test.mjs;
// docs/calibrate-from-benchmarks.md's fit table, fit_real_sweeps.test.mjs;
// docs/accuracy.md's kernel table, accuracy_report.test.mjs; docs/serving.md's
// speculative acceptance table, tests/unit/test_spec_acceptance.cpp;
// docs/accuracy.md's report-e2e summary and interval tables, e2e.test.mjs;
// docs/search.md's blocks and figures, search_docs.test.mjs:
// each beside the run its file already makes.)
// Cost: reading files, and `sightline --help` (no run).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

const read = (name) => fs.readFileSync(path.join(repoRoot, name), 'utf8');

// The markdown table that starts with `header` in `text`, as its lines.
function tableAt(text, header) {
  const lines = text.split('\n');
  const i = lines.indexOf(header);
  if (i < 0) return null;
  let j = i;
  while (j < lines.length && lines[j].startsWith('|')) ++j;
  return lines.slice(i, j);
}

test('README and docs/capacity.md quote the capacity record check-capacity --all wrote (its markdown)', () => {
  // The brute force takes minutes of CPU: tests/cli/capacity.test.mjs holds
  // the record to the shipped presets, and the docs hold to the record.
  const record = JSON.parse(read('tests/cli/capacity-brute-force.json'));
  const md = record.markdown.trim().split('\n');
  for (const doc of ['README.md', 'docs/capacity.md']) {
    const table = tableAt(read(doc), md[0]);
    assert.ok(table, `${doc} has the capacity table`);
    assert.deepEqual(table, md, `${doc}'s capacity table is not the record's (copy tests/cli/capacity-brute-force.json's markdown)`);
  }
});

test('docs/cli.md opens with the usage the CLI prints', () => {
  const usage = execFileSync(cliPath, ['--help'], { encoding: 'utf8' }).trimEnd();
  const block = /^# The CLI\n\n```\n([^]*?)\n```/.exec(read('docs/cli.md'));
  assert.ok(block, 'docs/cli.md opens with a fenced block');
  assert.equal(block[1], usage, 'docs/cli.md\'s usage block is not what `sightline --help` prints (paste it)');
});
