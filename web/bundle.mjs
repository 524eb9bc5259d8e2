// The page's main script and the modules it imports, served as two files
// instead of thirty (web/build.mjs calls bundleScript on the built site).
//
// Why: app.js imported ~30 modules, six levels deep; over HTTP/1.1's six
// connections they came one after another, and the page's first result waited
// for the last (docs/page.md, start-up). esbuild bundles them at build time;
// web/src keeps its modules as written (tests/web/modules.test.mjs and
// tests/layering/web_imports.test.mjs read those).
//
// What stays one instance: the Sweep, Compare, Search and Calibrate tabs and the
// views loaded on demand import form.js, catalogue.js, charts/registry.js and the
// rest by file, and the page tests do too (in the page and in Node). So every
// bundled module's file is rewritten to re-export its names from the bundle
// (`export { fill$form as fill } from './app-modules.js'`): whoever imports it
// gets the bundle's own instance, never a second copy. Two entries, split:
//   - app.js: the main script's own code, importing the shared chunk;
//   - app-modules.js: every bundled module's exports, each under a name of its
//     own (form.fill and custom.fill are two things), for those re-exporting files;
//   - app-chunk.js: the modules themselves (esbuild's shared chunk).
// The entry's own parts (app-state.js, app-results.js, ...: named after it, beside
// it) are its code split by job: bundled into app.js itself, their files removed,
// and no other module may import them. The code is minified (identifiers
// included; exported names are kept). Modules of
// the scripts that run before it (engine-start.js and its imports)
// stay files of their own, imported by the bundle as before, and so do the
// modules loaded on demand (dynamic import()).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const STATIC_IMPORT = /^\s*(?:import|export)\b[^'"]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/gm;
/** The bundle of the bundled modules' exports (lazy modules and tests reach them here). */
export const MODULES_FILE = 'app-modules.js';
const CHUNK_NAME = 'app-chunk';

const posix = (p) => p.split(path.sep).join('/');

/** The site's modules `entry` imports statically, transitively (itself included), as site-relative paths. */
export function staticGraph(siteDir, entry) {
  const seen = new Set([entry]);
  const todo = [entry];
  while (todo.length) {
    const rel = todo.pop();
    const file = path.join(siteDir, rel);
    if (!fs.existsSync(file)) continue;
    for (const m of fs.readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      const dep = path.posix.normalize(path.posix.join(path.posix.dirname(rel), m[1] || m[2]));
      if (!seen.has(dep)) {
        seen.add(dep);
        todo.push(dep);
      }
    }
  }
  return seen;
}

/** A name of its own for module `rel`'s export `name` in app-modules.js. */
const aliasOf = (rel, name) => `${name}$${rel.replace(/\.js$/, '').replace(/[^A-Za-z0-9_$]/g, '_')}`;

/** {module: [its export names]}, read by esbuild (no bundling). */
async function exportsOf(esbuild, siteDir, modules) {
  const built = await esbuild.build({
    entryPoints: modules.map((rel) => path.join(siteDir, rel)), bundle: false, format: 'esm',
    write: false, metafile: true, outdir: siteDir, outbase: siteDir, logLevel: 'silent',
  });
  const names = new Map();
  for (const out of Object.values(built.metafile.outputs)) {
    const rel = posix(path.relative(siteDir, path.resolve(out.entryPoint)));
    if (out.exports.includes('default')) throw new Error(`${rel} has a default export; the bundle re-exports names only`);
    names.set(rel, out.exports);
  }
  return names;
}

/**
 * An esbuild plugin: imports of the kept modules and every dynamic import stay
 * imports of the site's files, their paths rewritten from the importing module's
 * folder to the entry's folder `base` (site-relative), where the bundle is written.
 */
function keepFiles(siteDir, kept, base) {
  return {
    name: 'sightline-keep-files',
    setup(build) {
      build.onResolve({ filter: /^\.{1,2}\// }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        const rel = posix(path.relative(siteDir, path.resolve(args.resolveDir, args.path)));
        const fromBase = path.posix.relative(base, rel);
        if (args.kind === 'dynamic-import' || kept.has(rel)) return { path: fromBase.startsWith('.') ? fromBase : `./${fromBase}`, external: true };
        return undefined;
      });
    },
  };
}

/**
 * Whether module `rel` is one of the entry's own parts: named after it, beside it
 * (app.js's app-state.js, app-results.js, ...). They hold the page's state and
 * wiring (location, window, the engine's start-up) and run only as the entry's
 * code, so they are bundled into the entry's file, not the shared chunk that the
 * lazily loaded modules and the tests (in Node too) import by file.
 */
function isPartOf(rel, entry) {
  const stem = path.posix.basename(entry, '.js');
  return path.posix.dirname(rel) === path.posix.dirname(entry) && path.posix.basename(rel).startsWith(`${stem}-`)
    && rel !== path.posix.join(path.posix.dirname(entry), MODULES_FILE);
}

/** Refuses a bundled module that imports one of the entry's parts: those are the entry's own. */
function checkParts(siteDir, parts, modules) {
  for (const rel of modules) {
    const text = fs.readFileSync(path.join(siteDir, rel), 'utf8');
    for (const m of text.matchAll(STATIC_IMPORT)) {
      const dep = path.posix.normalize(path.posix.join(path.posix.dirname(rel), m[1] || m[2]));
      if (parts.includes(dep)) throw new Error(`${rel} imports ${dep}, a part of the page's main script; only the script and its parts may`);
    }
  }
}

/** Refuses a bundled module outside the entry's folder `base` that reads import.meta (its URL would change). */
function checkImportMeta(siteDir, modules, base) {
  for (const rel of modules) {
    if (path.posix.dirname(rel) !== base && /\bimport\.meta\b/.test(fs.readFileSync(path.join(siteDir, rel), 'utf8'))) {
      throw new Error(`${rel} reads import.meta, which the bundle in ${base}/ would change`);
    }
  }
}

/**
 * Bundles `entry` (a module script of index.html) and the modules it imports,
 * except those in `kept` (the earlier scripts' modules), in `siteDir`, in place.
 * Returns {files: the bundle's three files, modules: the files now re-exporting from it,
 * imports: {bundle file: [the site files it imports statically]}}.
 */
export async function bundleScript(siteDir, entry, kept) {
  const esbuild = require('esbuild');
  // The bundle is written in the entry's folder (client/), beside the modules it holds.
  const base = path.posix.dirname(entry);
  const modulesFile = path.posix.join(base, MODULES_FILE);
  const alias = (rel, n) => aliasOf(path.posix.relative(base, rel), n);  // named from the bundle's folder
  const graph = [...staticGraph(siteDir, entry)].filter((rel) => rel !== entry && !kept.has(rel));
  const parts = graph.filter((rel) => isPartOf(rel, entry)).sort();
  const modules = graph.filter((rel) => !parts.includes(rel)).sort();
  checkParts(siteDir, parts, modules);
  checkImportMeta(siteDir, [entry, ...parts, ...modules], base);
  const names = await exportsOf(esbuild, siteDir, modules);
  const lines = modules.map((rel) => `export { ${names.get(rel).map((n) => `${n} as ${alias(rel, n)}`).join(', ')} } from './${rel}';`);
  const built = await esbuild.build({
    entryPoints: [{ in: path.join(siteDir, entry), out: path.posix.basename(entry, '.js') }, { in: 'sightline:modules', out: MODULES_FILE.replace(/\.js$/, '') }],
    bundle: true, splitting: true, format: 'esm', minify: true, chunkNames: CHUNK_NAME,
    outdir: path.join(siteDir, base), write: false, metafile: true, logLevel: 'warning',
    plugins: [keepFiles(siteDir, kept, base), {
      name: 'sightline-modules-entry',
      setup(build) {
        build.onResolve({ filter: /^sightline:modules$/ }, () => ({ path: 'modules', namespace: 'sightline' }));
        build.onLoad({ filter: /.*/, namespace: 'sightline' }, () => ({ contents: lines.join('\n'), resolveDir: siteDir, loader: 'js' }));
      },
    }],
  });
  const outputs = Object.keys(built.metafile.outputs).map((o) => posix(path.relative(siteDir, path.resolve(o))));
  if (outputs.length !== 3) throw new Error(`the bundle of ${entry} came out as ${outputs.length} files (${outputs.join(', ')}), not 3`);
  for (const f of built.outputFiles) fs.writeFileSync(f.path, f.text);
  for (const rel of parts) fs.rmSync(path.join(siteDir, rel));  // inside the entry's file now
  for (const rel of modules) {
    const from = path.posix.relative(path.posix.dirname(rel), modulesFile);
    const list = names.get(rel).map((n) => `${alias(rel, n)} as ${n}`).join(', ');
    fs.writeFileSync(path.join(siteDir, rel),
      `// Bundled into ${entry} (web/bundle.mjs): its names, the bundle's one instance.\nexport { ${list} } from '${from.startsWith('.') ? from : `./${from}`}';\n`);
  }
  const imports = {};
  for (const [o, meta] of Object.entries(built.metafile.outputs)) {
    imports[posix(path.relative(siteDir, path.resolve(o)))] = meta.imports.filter((i) => i.kind === 'import-statement')
      .map((i) => posix(path.relative(siteDir, i.external ? path.resolve(siteDir, base, i.path) : path.resolve(i.path))));
  }
  return { files: outputs, modules, imports };
}

/**
 * Bundles the module worker `entry` (site-relative) with everything it imports,
 * in place: the engine's worker imported the Emscripten glue (sightline.mjs),
 * the protocol and its replies, two levels deep, and the page's first result
 * waited for its engine behind those requests. A worker is a realm of its own,
 * so its copies of the shared modules are never a second instance of the page's.
 * The worker stays where it was, so its import.meta.url (from which it finds the
 * wasm module) is unchanged. Returns the site files it inlined.
 */
export async function bundleWorker(siteDir, entry) {
  const esbuild = require('esbuild');
  const built = await esbuild.build({
    // Whitespace and syntax minified, names kept: the worker's code reads as written
    // (tests/web/catalogue.test.mjs patches its `engine.listRegistries()`).
    entryPoints: [path.join(siteDir, entry)], bundle: true, format: 'esm', minifyWhitespace: true, minifySyntax: true,
    outfile: path.join(siteDir, entry), allowOverwrite: true, write: false, metafile: true, logLevel: 'warning',
    // The Emscripten glue's Node branch (never taken in a worker) requires Node's
    // modules and tests for CommonJS's module and exports: left as they are.
    external: ['fs', 'path'], logOverride: { 'commonjs-variable-in-esm': 'silent' },
  });
  const [out] = built.outputFiles;
  fs.writeFileSync(out.path, out.text);
  const inputs = Object.values(built.metafile.outputs)[0].inputs;
  return Object.keys(inputs).map((f) => posix(path.relative(siteDir, path.resolve(f)))).filter((f) => f !== entry);
}
