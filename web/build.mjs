#!/usr/bin/env node
// Assembles the static page: web/src (host/ at the site's root, client/, worker/
// and shared/ as folders of their own: web/src/README.md), the wasm module
// (build-wasm/wasm/sightline.{js,wasm}), the engine's catalogue files (from
// that module, with the parameters' words from the native CLI, build/sightline)
// and the npm libraries the page uses (copied from web/node_modules into
// vendor/, with their licences; no CDN, so the page works offline) into the
// output directory argv[2].
// Usage: node web/build.mjs build/web
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { bundleScript, bundleWorker, staticGraph } from './bundle.mjs';
import { withParameterWords } from './catalogue-words.mjs';

const webDir = path.dirname(fileURLToPath(import.meta.url));
const repoDir = path.dirname(webDir);
const srcDir = path.join(webDir, 'src');
const wasmDir = path.join(repoDir, 'build-wasm', 'wasm');
// The native CLI, whose `registries` carries the parameters' words (the wasm module leaves them out).
const cliPath = process.env.SIGHTLINE_CLI || path.join(repoDir, 'build', 'sightline');
// The page's module, and the Calibrate tab's (loaded on demand: wasm/CMakeLists.txt).
const WASM_MODULES = ['sightline', 'sightline-calibrate'];
const wasmFiles = WASM_MODULES.flatMap((m) => [`${m}.js`, `${m}.wasm`]);
const modulesDir = path.join(webDir, 'node_modules');
const HOST_DIR = 'host';  // web/src/host: the site's root
// The preset kinds the page lists (presets.json below; engine-start.js reads them).
const { PRESET_KINDS, CATALOGUE_FILES } = await import('./src/shared/protocol.js');
// [package, file in the package, name under vendor/, licence file in the package,
//  names to export when the file is a UMD bundle served as an ES module]
// fflate's minified UMD build is 12.6 KB gzip against 22.1 KB for its
// unminified ESM one: wrapped as a module, it keeps page + wasm under 1 MB.
const vendorFiles = [
  ['chart.js', 'dist/chart.umd.min.js', 'chart.umd.min.js', 'LICENSE.md'],
  ['fflate', 'umd/index.js', 'fflate.js', 'LICENSE', ['deflateSync', 'Inflate', 'strToU8', 'strFromU8']],
  ['svgcanvas', 'dist/svgcanvas.esm.js', 'svgcanvas.js', 'LICENSE'],
];

function fail(message) {
  console.error(`web/build.mjs: ${message}`);
  process.exit(1);
}

const posix = (p) => p.split(path.sep).join('/');
const outArg = process.argv[2];
if (!outArg) fail('usage: node web/build.mjs <output-dir>');
const outDir = path.resolve(outArg);

// The output directory is wiped first so removed sources do not linger; refuse
// anything that contains the sources or the repository itself.
for (const protectedDir of [repoDir, webDir, srcDir, wasmDir]) {
  const rel = path.relative(outDir, protectedDir);
  if (rel === '' || !rel.startsWith('..')) fail(`refusing to use ${outDir} as output (it contains ${protectedDir})`);
}

for (const f of wasmFiles) {
  if (!fs.existsSync(path.join(wasmDir, f))) {
    fail(`missing ${path.join(wasmDir, f)}; build the wasm module first (bash .ci/build)`);
  }
}
if (!fs.existsSync(cliPath)) fail(`missing ${cliPath}; build the native CLI first (bash .ci/build)`);

// esbuild (a devDependency) bundles the page's main script and the engine's worker (web/bundle.mjs).
for (const [pkg, file] of [...vendorFiles, ['esbuild', 'package.json']]) {
  if (!fs.existsSync(path.join(modulesDir, pkg, file))) {
    fail(`missing ${path.join(modulesDir, pkg, file)}; install the page's packages first (cd web && npm ci)`);
  }
}

fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });
// host/ is what the site serves at its root (the HTML pages, the stylesheet, the service
// worker, whose scope is its folder, and embed.js, whose address is public); the other
// folders keep their names, so a module's relative imports name the same file built.
for (const entry of fs.readdirSync(srcDir, { withFileTypes: true })) {
  if (!entry.isDirectory()) continue;  // README.md: the folder rule, not a file of the site
  const from = path.join(srcDir, entry.name);
  fs.cpSync(from, entry.name === HOST_DIR ? outDir : path.join(outDir, entry.name), { recursive: true });
}
// The engine worker is a module worker: the Emscripten glue (a classic script that
// defines createSightline) is served as an ES module exporting it.
for (const m of WASM_MODULES) {
  fs.copyFileSync(path.join(wasmDir, `${m}.wasm`), path.join(outDir, `${m}.wasm`));
  fs.writeFileSync(path.join(outDir, `${m}.mjs`),
    `${fs.readFileSync(path.join(wasmDir, `${m}.js`), 'utf8')}\nexport default createSightline;\n`);
}

// The engine's catalogue (listRegistries: metrics, policies, parameter schema),
// written once here, so the page reads a static file instead of asking its
// worker (which re-reads every scenario preset to record the schema, ~0.1-0.2 s
// of wasm) before its first result. It is the very wasm module's catalogue
// plus the parameters' words (label, unit, help: the form's), which the page
// reads only here: the module leaves them out so that they ship once
// (scenario/parameter_catalogue.hpp), and the native CLI, built from the same
// sources, gives them. The two must agree on everything else.
// tests/wasm/catalogue_file.test.mjs checks the file against both.
{
  const require = createRequire(import.meta.url);
  const createSightline = require(path.join(wasmDir, 'sightline.js'));
  const engine = await createSightline({ wasmBinary: fs.readFileSync(path.join(wasmDir, 'sightline.wasm')) });
  const envelope = JSON.parse(engine.listRegistries());
  if (!envelope.ok) fail(`listRegistries failed: ${JSON.stringify(envelope.error)}`);
  const cli = spawnSync(cliPath, ['registries'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (cli.status !== 0) fail(`${cliPath} registries failed: ${cli.stderr}`);
  let registries;
  try {
    registries = withParameterWords(envelope.result, JSON.parse(cli.stdout));
  } catch (e) {
    fail(`the wasm module and ${cliPath} disagree: ${e.message}; rebuild both (bash .ci/build)`);
  }
  fs.writeFileSync(path.join(outDir, CATALOGUE_FILES.registries), JSON.stringify(registries));
  // The preset lists likewise (presets.json, {kind: [records]}): listing them is
  // ~0.4 s of wasm, which kept the page's form, and its first run, waiting for
  // the engine; read from this file the form is built while the engine compiles.
  // tests/wasm/catalogue_file.test.mjs checks it too.
  const presets = {};
  for (const kind of PRESET_KINDS) {
    const listed = JSON.parse(engine.listPresets(kind));
    if (!listed.ok) fail(`listPresets(${kind}) failed: ${JSON.stringify(listed.error)}`);
    presets[kind] = listed.result;
  }
  fs.writeFileSync(path.join(outDir, CATALOGUE_FILES.presets), JSON.stringify(presets));
}
const vendorDir = path.join(outDir, 'vendor');
fs.mkdirSync(vendorDir, { recursive: true });
const notices = [];
for (const [pkg, file, name, licence, umdExports] of vendorFiles) {
  if (umdExports) {
    // The UMD bundle sets module.exports when `module` and `exports` exist.
    const umd = fs.readFileSync(path.join(modulesDir, pkg, file), 'utf8');
    fs.writeFileSync(path.join(vendorDir, name),
      `const module = { exports: {} };\n(function (module, exports) {\n${umd}\n})(module, module.exports);\n` +
      `export const { ${umdExports.join(', ')} } = module.exports;\n`);
  } else {
    fs.copyFileSync(path.join(modulesDir, pkg, file), path.join(vendorDir, name));
  }
  const meta = JSON.parse(fs.readFileSync(path.join(modulesDir, pkg, 'package.json'), 'utf8'));
  const licenceText = fs.readFileSync(path.join(modulesDir, pkg, licence), 'utf8').trim();
  notices.push(`${name}: ${meta.name} ${meta.version} (${meta.license})\n\n${licenceText}\n`);
}
fs.writeFileSync(path.join(vendorDir, 'LICENSES.txt'), notices.join('\n----------------------------------------\n\n'));
// app.js and the modules it imports come as one bundle (web/bundle.mjs): thirty
// modules six levels deep arrived one after another over HTTP/1.1's six connections.
// The earlier scripts' modules (engine-start.js and its three imports, which start
// the engine) stay files of their own, imported by the bundle.
// index.html then names every module of the first load (the static imports of its
// scripts, transitively) as a modulepreload, so the browser fetches them all at
// once instead of discovering them one import level at a time; modules loaded on
// demand (dynamic import()) are not named. Each script's modules are named right
// after it, in the scripts' order, so the first script (engine-start.js, which
// starts the engine) and its few imports are asked for before app.js's bundle;
// that comes at low priority (fetchpriority), so that it does not hold up the
// engine's own requests (the worker's scripts, presets.json) queued after it.
{
  const indexPath = path.join(outDir, 'index.html');
  let html = fs.readFileSync(indexPath, 'utf8');
  const scriptTag = /<script type="module" src="([^"]+)"(?: async)?><\/script>\n/g;
  const entries = [...html.matchAll(scriptTag)].map((m) => m[1]);
  if (!entries.length) fail('index.html has no module script to put the module preloads after');
  const kept = new Set(entries.slice(0, -1).flatMap((e) => [...staticGraph(outDir, e)]));
  const bundle = await bundleScript(outDir, entries[entries.length - 1], kept).catch((e) => fail(`bundling ${entries[entries.length - 1]}: ${e.message}`));
  // The bundle's files are minified: their imports come from esbuild's own record.
  const importsOf = (rel) => bundle.imports[rel] || [...staticGraph(outDir, rel)].filter((f) => f !== rel);
  const seen = new Set(entries);
  const visit = (rel, found) => {
    for (const dep of importsOf(rel)) {
      if (seen.has(dep)) continue;
      seen.add(dep);
      found.push(dep);
      visit(dep, found);
    }
  };
  let later = '';  // the first script's modules at the browser's priority, the others' low
  html = html.replace(scriptTag, (tag, entry) => {
    const found = [];
    visit(entry, found);
    const links = found.sort().map((f) => `  <link rel="modulepreload" href="${f}"${later}>\n`).join('');
    later = ' fetchpriority="low"';
    return tag + links;
  });
  fs.writeFileSync(indexPath, html);
}
// The engine's worker comes as one file likewise (web/bundle.mjs): its glue, the
// protocol and its replies inlined, so it starts after one request, not two rounds.
// The glue is then no file of its own: only that worker imported it.
const ENGINE_WORKER = 'worker/worker.js';  // engine-start.js's workerUrl, from the site's root
{
  const inlined = await bundleWorker(outDir, ENGINE_WORKER).catch((e) => fail(`bundling ${ENGINE_WORKER}: ${e.message}`));
  if (!inlined.includes('sightline.mjs')) fail(`${ENGINE_WORKER} no longer imports sightline.mjs; see web/bundle.mjs`);
  fs.rmSync(path.join(outDir, 'sightline.mjs'));
}
// The boot script: a few bytes inline in index.html that start the engine's worker
// and the wasm module's compile while the HTML is parsed, before engine-start.js (a
// module with three imports) has arrived and run, which was after the page's first
// layout (0.4-0.9 s at load); engine-start.js takes both (self.sightlineBoot) and
// hands the worker its compiled module. It also reads the catalogue files
// (registries.json, presets.json, preloaded): parsed as they arrive, while the page's
// thread waits for its modules, rather than in the tasks after app.js's evaluation,
// so engine-start.js asks for the default run as soon as it runs itself.
// Allowed by its hash in the page's CSP, which stays without
// 'unsafe-inline'. Where it cannot start one, engine-start.js does as before.
{
  const indexPath = path.join(outDir, 'index.html');
  let html = fs.readFileSync(indexPath, 'utf8');
  const { WORKER_OPTIONS, MODULE_FROM_PAGE } = await import('./src/shared/protocol.js');
  const options = JSON.stringify({ ...WORKER_OPTIONS, name: MODULE_FROM_PAGE });
  const json = Object.values(CATALOGUE_FILES).map((f) => `${JSON.stringify(f)}:j(${JSON.stringify(f)})`).join(',');
  const boot = 'try{(function(){var j=function(u){return fetch(u).then(function(r){return r.ok?r.json():null}).catch(function(){return null})};' +
    `self.sightlineBoot={startedMs:performance.now(),url:new URL('${ENGINE_WORKER}',document.baseURI).href,` +
    `module:WebAssembly.compileStreaming(fetch('sightline.wasm')).catch(function(){return null}),json:{${json}}};` +
    `self.sightlineBoot.worker=new Worker('${ENGINE_WORKER}',${options})})()}catch(e){self.sightlineBoot=null}`;
  const sha = crypto.createHash('sha256').update(boot).digest('base64');
  const first = html.indexOf('<script type="module" src="client/engine-start.js"');
  const csp = /(<meta http-equiv="Content-Security-Policy"\s+content="[^"]*script-src 'self')/;
  if (first < 0 || !csp.test(html)) fail('index.html has no engine-start.js script or no script-src \'self\' to put the boot script beside');
  html = `${html.slice(0, first)}<script>${boot}</script>\n  ${html.slice(first)}`.replace(csp, `$1 'sha256-${sha}'`);
  fs.writeFileSync(indexPath, html);
}

// The service worker's file list and version: every file written (the site's own
// address './' stands for index.html), versioned by a hash of their bytes.
const SW = 'sw.js';
const siteFiles = fs.readdirSync(outDir, { recursive: true })
  .filter((f) => f !== SW && fs.statSync(path.join(outDir, f)).isFile())
  .map((f) => f.split(path.sep).join('/'))
  .sort();
const hash = crypto.createHash('sha256');
for (const f of siteFiles) hash.update(f).update('\0').update(fs.readFileSync(path.join(outDir, f)));
const version = hash.digest('hex').slice(0, 16);
const swPath = path.join(outDir, SW);
fs.writeFileSync(swPath, fs.readFileSync(swPath, 'utf8')
  .replace("'__SIGHTLINE_VERSION__'", JSON.stringify(version))
  .replace("['__SIGHTLINE_FILES__']", JSON.stringify(['./', ...siteFiles])));

const count = fs.readdirSync(outDir, { recursive: true }).length;
console.log(`web/build.mjs: wrote ${count} files to ${path.relative(process.cwd(), outDir) || '.'} (version ${version})`);
