// The page's module graph (web/src, as written; tests/layering/web_imports.test.mjs
// checks it has no cycle and no import of a missing file): no two modules export the same
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

test('web/src: no name exported by two modules for two things; no Search module imports the sweep; one worker protocol', () => {
  const { imports, exports, namespaced } = moduleGraph();
  assert.ok(imports.size > 20, `${imports.size} modules`);
  const byName = new Map();
  for (const [f, names] of exports) for (const n of names) byName.set(n, [...(byName.get(n) || []), f]);
  // A view module's `view` is the same kind of thing in each (the kinds registry takes them all); modules
  // read as namespaces (form.fill, custom.fill) may share a role's name.
  const twice = [...byName].filter(([n, files]) => files.length > 1 && n !== 'view' && !files.every((f) => namespaced.has(f)))
    .map(([n, files]) => `${n}: ${files.join(', ')}`);
  assert.deepEqual(twice, []);
  // The Search tab is search.js and its views (search-*.js): none reaches into the sweep.
  const client = (f) => path.join('client', f);
  const searchModules = [...imports.keys()].filter((f) => /^search(-[\w-]+)?\.js$/.test(path.basename(f)));
  assert.ok(searchModules.includes(client('search.js')) && searchModules.length > 1, searchModules.join(', '));
  for (const f of searchModules) assert.ok(!imports.get(f).includes(client('sweep.js')), `${f} imports sweep.js`);
  // One protocol: the worker and its client both take the message types from shared/protocol.js.
  const protocol = path.join('shared', 'protocol.js');
  for (const f of [path.join('worker', 'worker.js'), client('engine-client.js')]) assert.ok(imports.get(f).includes(protocol), `${f} imports ${protocol}`);
});
