#!/usr/bin/env node
// Assembles the static page: web/src/* plus the wasm module
// (build-wasm/wasm/sightline.{js,wasm}) into the output directory argv[2].
// Usage: node web/build.mjs build/web
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const webDir = path.dirname(fileURLToPath(import.meta.url));
const repoDir = path.dirname(webDir);
const srcDir = path.join(webDir, 'src');
const wasmDir = path.join(repoDir, 'build-wasm', 'wasm');
const wasmFiles = ['sightline.js', 'sightline.wasm'];

function fail(message) {
  console.error(`web/build.mjs: ${message}`);
  process.exit(1);
}

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

fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });
fs.cpSync(srcDir, outDir, { recursive: true });
for (const f of wasmFiles) fs.copyFileSync(path.join(wasmDir, f), path.join(outDir, f));

const count = fs.readdirSync(outDir, { recursive: true }).length;
console.log(`web/build.mjs: wrote ${count} files to ${path.relative(process.cwd(), outDir) || '.'}`);
