// What the README and the docs quote of the CLI, and the one rule that holds a
// quote to the CLI (issue 40, "signposts": a stale figure fails a test). A
// quote is a ```sh block running one `./build/sightline run --preset ID` or
// `./build/sightline search examples/FILE.json [--flag value ...]` followed by
// an output block; every line of that block is a line the CLI prints for the
// command today ("..." lines, or lines ending in "...", stand for the rest).
// Used by readme_examples.test.mjs and search_docs.test.mjs.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const cliPath = path.join(repoDir, 'build', 'sightline');

/** Each quoted example: the CLI's arguments and the output block's lines, with their offset in `text`. */
export function quotedExamples(text) {
  const out = [];
  const command = String.raw`(run --preset [A-Za-z0-9.\-]+|search examples\/[A-Za-z0-9.\-]+\.json(?: --[a-z\-]+(?: [0-9]+)?)*)`;
  const re = new RegExp('```sh\\n\\./build/sightline ' + command + '\\n```\\s*\\n```\\n([^]*?)\\n```', 'g');
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

/**
 * Runs every quoted example of the file `rel` (relative to the repository) and
 * returns the quoted lines the CLI no longer prints, each with the printed line
 * of the same label. With SIGHTLINE_REGENERATE=1 it rewrites those lines in the
 * file instead (and returns none). `examples` is what `quotedExamples` found.
 */
export function staleQuotes(rel, examples) {
  const file = path.join(repoDir, rel);
  let text = fs.readFileSync(file, 'utf8');
  const regenerate = process.env.SIGHTLINE_REGENERATE === '1';
  const stale = [];
  for (const ex of [...examples].reverse()) {  // from the end, so offsets stay valid while rewriting
    const printed = execFileSync(cliPath, ex.args, { cwd: repoDir, encoding: 'utf8' }).split('\n');
    const lines = ex.block.split('\n').map((line) => {
      if (line.trim() === '...' || line.trim().endsWith('...') || printed.includes(line)) return line;
      const same = printed.filter((p) => label(p) === label(line) && label(line) !== '');
      stale.push(`${ex.args.join(' ')}: "${line}" — the CLI prints ${same.length ? `"${same[0]}"` : 'no line with that label'}`);
      return same.length ? same[0] : line;  // the first section that prints it (the key metrics)
    });
    if (regenerate) text = text.slice(0, ex.start) + lines.join('\n') + text.slice(ex.start + ex.block.length);
  }
  if (!regenerate) return stale;
  fs.writeFileSync(file, text);
  return [];
}
