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

// The shapes of a printed line, finest first: its words with each figure
// standing alone as "#" ("2x(tp4)" and "h200" kept, so a table's rows keep
// their deployments), then with every number as "#" ("P99" now "P90" in a
// header); runs of spaces as one. A line and its regenerated self share a
// shape; quoted lines follow the printed order, so among printed lines of the
// same shape the first after the previous quoted line is the one meant.
const NUMBER = String.raw`[-+]?[0-9][0-9,]*(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?`;
const SHAPES = [
  (line) => line.replace(new RegExp(String.raw`(^|[\s\[(])${NUMBER}(?=$|[\s,;)\]%])`, 'g'), '$1#').replace(/\s+/g, ' ').trim(),
  (line) => line.replace(new RegExp(NUMBER, 'g'), '#').replace(/\s+/g, ' ').trim(),
];

/** The index in `printed` of quoted `line`: itself, else its finest shape, at or after `from` first; -1 if none. */
function printedIndex(printed, line, from) {
  const find = (same) => {
    const after = printed.findIndex((p, i) => i >= from && same(p));
    return after >= 0 ? after : printed.findIndex(same);
  };
  for (const same of [(p) => p === line, ...SHAPES.map((shape) => (p) => shape(p) === shape(line))]) {
    const k = find(same);
    if (k >= 0) return k;
  }
  return -1;
}

/**
 * A quoted output `block` held to the lines the CLI `printed`: `lines`, the
 * block with each stale line replaced by the printed line it stands for (the
 * regenerated block), and `misses`, a sentence for each stale line.
 */
export function requoted(block, printed) {
  const misses = [];
  let from = 0;
  const lines = block.split('\n').map((line) => {
    if (line.trim() === '...' || line.trim().endsWith('...')) return line;
    const k = printedIndex(printed, line, from);
    if (k >= 0) from = k + 1;
    if (k >= 0 && printed[k] === line) return line;
    misses.push(`"${line}" — the CLI prints ${k >= 0 ? `"${printed[k]}"` : 'no line of that shape'}`);
    return k >= 0 ? printed[k] : line;
  });
  return { lines, misses };
}

/**
 * Runs every quoted example of the file `rel` (relative to the repository) and
 * returns the quoted lines the CLI no longer prints, each with the printed line
 * of the same shape. With SIGHTLINE_REGENERATE=1 it rewrites those lines in the
 * file instead (and returns none). `examples` is what `quotedExamples` found.
 */
export function staleQuotes(rel, examples) {
  const file = path.join(repoDir, rel);
  let text = fs.readFileSync(file, 'utf8');
  const regenerate = process.env.SIGHTLINE_REGENERATE === '1';
  const stale = [];
  for (const ex of [...examples].reverse()) {  // from the end, so offsets stay valid while rewriting
    const printed = execFileSync(cliPath, ex.args, { cwd: repoDir, encoding: 'utf8' }).split('\n');
    const { lines, misses } = requoted(ex.block, printed);
    stale.push(...misses.map((m) => `${ex.args.join(' ')}: ${m}`));
    if (regenerate) text = text.slice(0, ex.start) + lines.join('\n') + text.slice(ex.start + ex.block.length);
  }
  if (!regenerate) return stale;
  fs.writeFileSync(file, text);
  return [];
}
