// The README quotes what the CLI prints (issue 40, "signposts"): every line of
// an output block that follows a ```sh block running `./build/sightline run
// --preset ID` is a line the CLI prints for it today ("..." lines stand for
// the rest). A model change that moves a quoted figure fails here; regenerate
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

/** Each quoted `run --preset` example: its preset id and the output block's lines, with their offsets. */
export function runExamples(text) {
  const out = [];
  const re = /```sh\n\.\/build\/sightline run --preset ([A-Za-z0-9.\-]+)\n```\s*\n```\n([^]*?)\n```/g;
  for (const m of text.matchAll(re)) {
    const start = m.index + m[0].length - '\n```'.length - m[2].length;  // the block ends just before the last fence
    out.push({ preset: m[1], block: m[2], start });
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

test('README: every quoted line of a `run --preset` example is a line the CLI prints for it', () => {
  let text = fs.readFileSync(readmePath, 'utf8');
  const examples = runExamples(text);
  assert.ok(examples.length >= 3, `found ${examples.length} examples`);
  const regenerate = process.env.SIGHTLINE_REGENERATE === '1';
  const stale = [];
  for (const ex of examples.reverse()) {  // from the end, so offsets stay valid while rewriting
    const printed = execFileSync(cliPath, ['run', '--preset', ex.preset], { encoding: 'utf8' }).split('\n');
    const lines = ex.block.split('\n').map((line) => {
      if (line.trim() === '...' || line.trim().endsWith('...') || printed.includes(line)) return line;
      const same = printed.filter((p) => label(p) === label(line) && label(line) !== '');
      stale.push(`${ex.preset}: "${line}" — the CLI prints ${same.length ? `"${same[0]}"` : 'no line with that label'}`);
      return same.length ? same[0] : line;  // the first section that prints it (the key metrics)
    });
    if (regenerate) text = text.slice(0, ex.start) + lines.join('\n') + text.slice(ex.start + ex.block.length);
  }
  if (regenerate) fs.writeFileSync(readmePath, text);
  else assert.deepEqual(stale, [], 'README quotes stale output (SIGHTLINE_REGENERATE=1 rewrites it)');
});
