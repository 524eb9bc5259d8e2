// The README quotes what the CLI prints (issue 40, "signposts"): every line of
// an output block that follows a ```sh block running `./build/sightline run
// --preset ID` or `./build/sightline search examples/FILE` is a line the CLI
// prints for it today ("..." lines stand for the rest; the rule is
// quoted_outputs.mjs's, which docs/search.md's test shares). A model change
// that moves a quoted figure fails here; regenerate the quoted lines with SIGHTLINE_REGENERATE=1 node --test tests/cli/readme_examples.test.mjs
// (each quoted line is replaced by the printed line with the same label).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { quotedExamples, repoDir, staleQuotes } from './quoted_outputs.mjs';

const readmePath = path.join(repoDir, 'README.md');

test('README: every quoted line of a `run --preset` or `search` example is a line the CLI prints for it', () => {
  const examples = quotedExamples(fs.readFileSync(readmePath, 'utf8'));
  assert.ok(examples.filter((ex) => ex.args[0] === 'run').length >= 3, `found ${examples.length} examples`);
  assert.ok(examples.some((ex) => ex.args[0] === 'search'), 'the README quotes a deployment search');
  assert.deepEqual(staleQuotes('README.md', examples), [], 'README quotes stale output (SIGHTLINE_REGENERATE=1 rewrites it)');
});

// The prose under the search example repeats two of its counts ("19 here, 6 of
// them reused"); the block holds to the CLI above, the prose holds to the block.
test('README: the counts the search example\'s prose repeats are the quoted block\'s', () => {
  const text = fs.readFileSync(readmePath, 'utf8');
  const search = quotedExamples(text).find((ex) => ex.args[0] === 'search');
  assert.ok(search, 'the README quotes a deployment search');
  const simulated = /(\d+) deployments simulated/.exec(search.block);
  const reused = /reused: (\d+) of them/.exec(search.block);
  assert.ok(simulated && reused, `the quoted search block names its simulated and reused counts:\n${search.block}`);
  const prose = /: (\d+) here, (\d+) of them reused/.exec(text.slice(search.start + search.block.length));
  assert.ok(prose, 'the prose after the search example says how many it simulated and reused');
  assert.deepEqual([prose[1], prose[2]], [simulated[1], reused[1]], 'the prose repeats other counts than the quoted output');
});

// The wider search is too long for CI (README: 162 candidates); its answer is
// checked on the answer's own layout, whose quoted block holds to the CLI above.
// The prose names that answer; it must be the one the block prints.
test('README: the wider search\'s answer named in the prose is the answer the narrowed question prints', () => {
  const text = fs.readFileSync(readmePath, 'utf8');
  const narrowed = quotedExamples(text).find((ex) => ex.args[1] === 'examples/search-llama3-70b-h200-tp2.json');
  assert.ok(narrowed, 'the README quotes the wider search\'s answer on its own layout');
  const printed = /cheapest meeting the SLO: (.+?) \(\d+ GPUs\)/.exec(narrowed.block);
  const prose = /162\s+candidates\)[^]*?answers ([^.]+?)\. /.exec(text);
  assert.ok(printed && prose, 'the prose names the wider search\'s answer and the block prints one');
  assert.equal(prose[1].replace(/\s+/g, ' '), printed[1]);
});
