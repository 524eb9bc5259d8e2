// The page's modules (web/src) import each other without a cycle: every
// static `import ... from './x.js'` (and `export ... from`) edge is read from
// the sources, and a depth-first search fails on the first cycle it finds,
// naming it. A cycle makes module evaluation order depend on which file is
// loaded first (an import read before its module ran is undefined).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const src = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'web', 'src');

function jsFiles(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...jsFiles(p));
    else if (e.name.endsWith('.js')) out.push(p);
  }
  return out;
}

// Relative module specifiers of static imports and re-exports.
function edges(file) {
  const text = fs.readFileSync(file, 'utf8');
  const out = [];
  const re = /^\s*(?:import|export)\b[^'"]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/gm;
  for (const m of text.matchAll(re)) out.push(path.resolve(path.dirname(file), m[1] || m[2]));
  return out;
}

export function findCycle(graph) {
  const state = new Map();  // file -> 'open' | 'done'
  const stack = [];
  const visit = (f) => {
    state.set(f, 'open');
    stack.push(f);
    for (const g of graph.get(f) || []) {
      if (state.get(g) === 'open') return [...stack.slice(stack.indexOf(g)), g];
      if (!state.has(g)) {
        const c = visit(g);
        if (c) return c;
      }
    }
    stack.pop();
    state.set(f, 'done');
    return null;
  };
  for (const f of [...graph.keys()].sort()) {
    if (state.has(f)) continue;
    const c = visit(f);
    if (c) return c;
  }
  return null;
}

test('the cycle finder finds a planted cycle and passes a tree', () => {
  assert.deepEqual(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]])), ['a', 'b', 'c', 'a']);
  assert.equal(findCycle(new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []]])), null);
});

test('web/src has no import cycle, and every relative import of our own names a file that exists', () => {
  const files = jsFiles(src);
  assert.ok(files.length > 20, `found the page's modules (${files.length})`);
  const graph = new Map();
  for (const f of files) {
    // vendor/ holds the third-party bundles web/build.mjs copies in, and sightline.mjs is the
    // Emscripten glue web/build.mjs writes beside the page: neither is in web/src, and they import
    // nothing of ours.
    const to = edges(f).filter((t) => !path.relative(src, t).startsWith(`vendor${path.sep}`) &&
                                      path.relative(src, t) !== 'sightline.mjs');
    for (const t of to) assert.ok(fs.existsSync(t), `${path.relative(src, f)} imports ${path.relative(src, t)}, which does not exist`);
    graph.set(f, to);
  }
  const cycle = findCycle(graph);
  assert.equal(cycle, null, cycle ? `import cycle: ${cycle.map((f) => path.relative(src, f)).join(' -> ')}` : '');
});
