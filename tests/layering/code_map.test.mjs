// docs/architecture.md's code map against the tree (issue 40, "signposts": the
// map missed the newest files). Every engine module has a row in "Files per
// module" that names each of its files (by stem, `name` for name.hpp +
// name.cpp, or a pattern such as `cmd_*.cpp`), and every file a row names
// exists; the page's paragraph does the same for web/src. A new file fails
// here until the map says where it sits. Cost: reading files only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const doc = fs.readFileSync(path.join(repo, 'docs', 'architecture.md'), 'utf8');

const ticked = (text) => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
const stem = (name) => name.replace(/\.(cpp|hpp)$/, '');
const globRe = (pattern) => new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`);

/** The first backticked name of each item of a cell's top-level list (outside parentheses). */
export function leadingNames(cell) {
  const out = [];
  let depth = 0;
  let item = '';
  const flush = () => {
    const m = /`([^`]+)`/.exec(item);
    if (m) out.push(m[1]);
    item = '';
  };
  for (const c of cell) {
    if (c === '(') depth += 1;
    else if (c === ')') depth = Math.max(0, depth - 1);
    if ((c === ',' || c === '.' || c === ';') && depth === 0) flush();
    else if (depth === 0) item += c;
  }
  flush();
  return out;
}

/** "Files per module": module -> the row's text. */
function moduleRows() {
  const section = doc.slice(doc.indexOf('### Files per module'));
  return new Map([...section.matchAll(/^\| `([a-z]+)` \| (.*) \|$/gm)].map((m) => [m[1], m[2]]));
}

test('every engine module\'s files are named in its row of the code map, and every named file exists', () => {
  const rows = moduleRows();
  const modules = fs.readdirSync(path.join(repo, 'engine'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
  const problems = [];
  for (const mod of modules) {
    const cell = rows.get(mod);
    if (!cell) {
      problems.push(`engine/${mod}: no row in docs/architecture.md's "Files per module"`);
      continue;
    }
    const files = fs.readdirSync(path.join(repo, 'engine', mod)).filter((f) => /\.(cpp|hpp)$/.test(f));
    const stems = new Set(files.map(stem));
    const names = ticked(cell).map((n) => n.replace(new RegExp(`^${mod}/`), ''));
    const patterns = names.filter((n) => n.includes('*')).map(globRe);
    for (const f of files) {
      if (!names.includes(f) && !names.includes(stem(f)) && !patterns.some((re) => re.test(f)))
        problems.push(`engine/${mod}/${f}: not named in the code map's ${mod} row`);
    }
    // A name with its extension anywhere in the row, and the head of every item of the row's list, is a file.
    const fileNames = new Set([...names.filter((n) => /^[a-z_0-9]+\.(cpp|hpp)$/.test(n)), ...leadingNames(cell).filter((n) => !n.includes('*'))]);
    for (const n of fileNames)
      if (!stems.has(stem(n)) && !files.includes(n)) problems.push(`code map's ${mod} row names \`${n}\`, which is not a file of engine/${mod}`);
  }
  for (const mod of rows.keys())
    if (!modules.includes(mod)) problems.push(`code map has a row for ${mod}, which is not a module of engine/`);
  assert.deepEqual(problems, [], 'docs/architecture.md\'s code map differs from the tree');
  assert.ok(rows.size >= 12, `read ${rows.size} rows`);
});

test('every page source is named in the code map\'s page paragraph, and every named one exists', () => {
  const start = doc.indexOf('The page (`web/src`');
  assert.ok(start >= 0, 'docs/architecture.md has the page paragraph');
  const para = doc.slice(start, doc.indexOf('\n\n', start));
  const names = ticked(para);
  const dir = path.join(repo, 'web', 'src');
  const files = fs.readdirSync(dir, { recursive: true }).map((f) => f.split(path.sep).join('/')).filter((f) => /\.(js|html)$/.test(f));
  const folders = names.filter((n) => n.endsWith('/'));
  // A file is named by its path, by its folder, or by its name alone where no other file has it
  // (the paragraph says which folder it describes: web/src/README.md's folder rule).
  const byName = new Map();
  for (const f of files) byName.set(path.basename(f), [...(byName.get(path.basename(f)) || []), f]);
  const unique = (n) => (byName.get(n) || []).length === 1;
  const problems = [];
  for (const f of files) {
    const named = names.includes(f) || folders.some((d) => f.startsWith(d)) || (unique(path.basename(f)) && names.includes(path.basename(f)));
    if (!named) problems.push(`web/src/${f}: not named in the page paragraph`);
  }
  for (const n of names.filter((x) => /^[\w./-]+\.(js|html)$/.test(x)))
    if (!files.includes(n) && !(!n.includes('/') && unique(n))) problems.push(`the page paragraph names \`${n}\`, which is not a file of web/src`);
  for (const d of folders)
    if (!fs.existsSync(path.join(dir, d))) problems.push(`the page paragraph names \`${d}\`, which is not a folder of web/src`);
  assert.deepEqual(problems, [], 'docs/architecture.md\'s page paragraph differs from web/src');
});
