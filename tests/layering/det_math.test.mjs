// Native and wasm must compute the same bits (DESIGN: same scenario and seed,
// same result). The C library's exp/log/pow are not the same everywhere: glibc
// picks FMA variants at run time that differ from its plain ones (and from
// Emscripten's musl) in the last bit now and then. Every engine path that runs
// in wasm uses core/det_math instead; this test fails on a libm call elsewhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sources } from './source_files.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// Native-only maintainer fits (calibrate, calibrate-comm, fit): they write
// calibration files on one machine and never run in the page.
const nativeOnly = new Set(['engine/perf/calibrate.cpp', 'engine/comm/comm_fit.cpp', 'engine/fit/calibration_fit.cpp']);
const libm = /\bstd::(exp|exp2|expm1|log|log2|log10|log1p|pow|cbrt|sin|cos|tan|asin|acos|atan|atan2|sinh|cosh|tanh|erf|erfc|lgamma|tgamma)\s*\(/;

test('no libm transcendental outside core/det_math on the paths that run in wasm', () => {
  const findings = [];
  for (const file of [...sources(repo, 'engine'), ...sources(repo, 'wasm')]) {
    if (file.startsWith('engine/core/det_math') || nativeOnly.has(file)) continue;
    fs.readFileSync(path.join(repo, file), 'utf8').split('\n').forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, '');
      if (libm.test(code)) findings.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(findings, []);
  // Each native-only file still needs its exception (or the list shrinks).
  for (const f of nativeOnly) assert.ok(libm.test(fs.readFileSync(path.join(repo, f), 'utf8')), `${f} no longer calls libm: drop it from the list`);
});
