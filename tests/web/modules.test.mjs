// The page's module graph (web/src, as written): no import cycle, every
// relative import names a file that exists, no two modules export the same
// name for two different things (two unrelated `linkFor`s were one; modules read
// as namespaces, form.fill beside custom.fill, may share a role's name), and the
// Search tab does not reach into the sweep; the worker and its client share one protocol module. Reads the sources only: no build, no browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const srcDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'web', 'src');

/** {file: [imported files]} and {file: [exported names]} of every .js module under web/src. */
function moduleGraph() {
  const imports = new Map();
  const exports = new Map();
  const namespaced = new Set();  // modules only ever read as \`import * as form\`: form.fill and custom.fill cannot be confused
  for (const file of fs.readdirSync(srcDir, { recursive: true }).filter((f) => f.endsWith('.js')).map((f) => path.normalize(f))) {
    const text = fs.readFileSync(path.join(srcDir, file), 'utf8');
    const deps = [...text.matchAll(/^\s*(?:import|export)\s[^;]*?\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/gm)]
      .map((m) => path.normalize(path.join(path.dirname(file), m[1])));
    imports.set(file, deps);
    for (const m of text.matchAll(/^\s*import\s+\*\s+as\s+\w+\s+from\s+['"](\.{1,2}\/[^'"]+)['"]/gm)) {
      namespaced.add(path.normalize(path.join(path.dirname(file), m[1])));
    }
    exports.set(file, [...text.matchAll(/^export\s+(?:async\s+)?(?:function\*?|class|const|let)\s+([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]));
  }
  return { imports, exports, namespaced };
}

/** Every cycle of the graph, each as the list of files around it. */
function cycles(graph) {
  const found = [];
  const state = new Map();  // file -> 'open' | 'done'
  const stack = [];
  const visit = (f) => {
    state.set(f, 'open');
    stack.push(f);
    for (const d of graph.get(f) || []) {
      if (state.get(d) === 'open') found.push([...stack.slice(stack.indexOf(d)), d]);
      else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return found;
}

test('web/src: no import cycle, no import of a missing file, no name exported twice, search does not import the sweep', () => {
  const { imports, exports, namespaced } = moduleGraph();
  assert.ok(imports.size > 20, `${imports.size} modules`);
  assert.deepEqual(cycles(imports).map((c) => c.join(' -> ')), []);
  // vendor/ and sightline.mjs (the engine's glue as a module) are written by web/build.mjs.
  const built = (d) => d.startsWith(`vendor${path.sep}`) || d === 'sightline.mjs';
  const missing = [...imports].flatMap(([f, deps]) => deps.filter((d) => !imports.has(d) && !built(d)).map((d) => `${f} imports ${d}`));
  assert.deepEqual(missing, []);
  const byName = new Map();
  for (const [f, names] of exports) for (const n of names) byName.set(n, [...(byName.get(n) || []), f]);
  // A view module's `view` is the same kind of thing in each (the kinds registry takes them all); modules
  // read as namespaces (form.fill, custom.fill) may share a role's name.
  const twice = [...byName].filter(([n, files]) => files.length > 1 && n !== 'view' && !files.every((f) => namespaced.has(f)))
    .map(([n, files]) => `${n}: ${files.join(', ')}`);
  assert.deepEqual(twice, []);
  assert.ok(!imports.get('search.js').includes('sweep.js'), 'search.js imports sweep.js');
  // One protocol: the worker and its client both take the message types from shared/protocol.js.
  const protocol = path.join('shared', 'protocol.js');
  for (const f of [path.join('worker', 'worker.js'), 'engine-client.js']) assert.ok(imports.get(f).includes(protocol), `${f} imports ${protocol}`);
  // The checker itself: it finds a cycle where there is one.
  assert.equal(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]])).length, 1);
});
