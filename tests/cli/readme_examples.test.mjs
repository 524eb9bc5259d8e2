// The README quotes what the CLI prints (issue 40, "signposts"): every line of
// an output block that follows a ```sh block running `./build/sightline run
// --preset ID` or `./build/sightline search examples/FILE` is a line the CLI
// prints for it today ("..." lines stand for the rest). A model change that moves a quoted figure fails here; regenerate
// the quoted lines with SIGHTLINE_REGENERATE=1 node --test tests/cli/readme_examples.test.mjs
// (each quoted line is replaced by the printed line with the same label).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const cliPath = path.join(repoDir, 'build', 'sightline');
const readmePath = path.join(repoDir, 'README.md');

/** Each quoted example: the CLI's arguments and the output block's lines, with their offsets. */
export function runExamples(text) {
  const out = [];
  const re = /```sh\n\.\/build\/sightline (run --preset [A-Za-z0-9.\-]+|search examples\/[A-Za-z0-9.\-]+\.json)\n```\s*\n```\n([^]*?)\n```/g;
  for (const m of text.matchAll(re)) {
    const start = m.index + m[0].length - '\n```'.length - m[2].length;  // the block ends just before the last fence
    out.push({ args: m[1].split(' '), block: m[2], start });
  }
  return out;
}

// The label of a printed line: its text before the first number, plus its unit
// (the last word, after the numbers): "Time to train" in hours and in days differ.
const label = (line) => {
  const name = line.replace(/\s+[-+]?[0-9][^]*$/, '').trimEnd();
  const unit = /[0-9.]\s+([^\s0-9.]+)\s*$/.exec(line);
  return name === '' ? '' : `${name}|${unit ? unit[1] : ''}`;
};

test('README: every quoted line of a `run --preset` or `search` example is a line the CLI prints for it', () => {
  let text = fs.readFileSync(readmePath, 'utf8');
  const examples = runExamples(text);
  assert.ok(examples.filter((ex) => ex.args[0] === 'run').length >= 3, `found ${examples.length} examples`);
  assert.ok(examples.some((ex) => ex.args[0] === 'search'), 'the README quotes a deployment search');
  const regenerate = process.env.SIGHTLINE_REGENERATE === '1';
  const stale = [];
  for (const ex of examples.reverse()) {  // from the end, so offsets stay valid while rewriting
    const printed = execFileSync(cliPath, ex.args, { cwd: repoDir, encoding: 'utf8' }).split('\n');
    const lines = ex.block.split('\n').map((line) => {
      if (line.trim() === '...' || line.trim().endsWith('...') || printed.includes(line)) return line;
      const same = printed.filter((p) => label(p) === label(line) && label(line) !== '');
      stale.push(`${ex.args.join(' ')}: "${line}" — the CLI prints ${same.length ? `"${same[0]}"` : 'no line with that label'}`);
      return same.length ? same[0] : line;  // the first section that prints it (the key metrics)
    });
    if (regenerate) text = text.slice(0, ex.start) + lines.join('\n') + text.slice(ex.start + ex.block.length);
  }
  if (regenerate) fs.writeFileSync(readmePath, text);
  else assert.deepEqual(stale, [], 'README quotes stale output (SIGHTLINE_REGENERATE=1 rewrites it)');
});

// The prose under the search example repeats two of its counts ("19 here, 6 of
// them reused"); the block holds to the CLI above, the prose holds to the block.
test('README: the counts the search example\'s prose repeats are the quoted block\'s', () => {
  const text = fs.readFileSync(readmePath, 'utf8');
  const search = runExamples(text).find((ex) => ex.args[0] === 'search');
  assert.ok(search, 'the README quotes a deployment search');
  const simulated = /(\d+) deployments simulated/.exec(search.block);
  const reused = /reused: (\d+) of them/.exec(search.block);
  assert.ok(simulated && reused, `the quoted search block names its simulated and reused counts:\n${search.block}`);
  const prose = /: (\d+) here, (\d+) of them reused/.exec(text.slice(search.start + search.block.length));
  assert.ok(prose, 'the prose after the search example says how many it simulated and reused');
  assert.deepEqual([prose[1], prose[2]], [simulated[1], reused[1]], 'the prose repeats other counts than the quoted output');
});
