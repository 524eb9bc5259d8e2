// Whether a text names a numeric format is one question with one answer,
// is_dtype_name (engine/core/dtype.hpp). Three readers had each walked
// dtype_names() with a loop or a std::find of their own (the kernel CSV, the
// kernel families, the calibration file); a new copy beside them would drift
// when a format is added. This test fails on such a walk outside core/dtype.cpp.
// The scanner is checked on a small text first, so that a blind scanner
// cannot pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sources } from './source_files.mjs';
import { lineFindings } from './line_scan.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// A membership walk of the names: a range-for over dtype_names(), a
// std::find over them, or the names bound by reference (to be searched by
// hand). A copy handed on as a list of choices (a flag's, a reader's) is no walk.
const walk = /for\s*\([^)]*:\s*dtype_names\s*\(\)|std::find\s*\([^;]*dtype_names\s*\(\)|auto\s*&\s*\w+\s*=\s*dtype_names\s*\(\)/;

const findings = (file, text) => lineFindings(file, text, walk);

test('the scanner finds a walk over the format names, not their use as a list of choices', () => {
  const text = [
    'for (const auto& n : dtype_names()) known = known || n == text;',
    'const auto& names = dtype_names();',
    'p.weights = parse_dtype(r.choice("weights", dtype_names(), "bf16"));',
    'if (!is_dtype_name(text)) fail(code, at, "unknown dtype");',
    '{"dtypes", dtype_names()},',
    'std::vector<std::string> dtypes = dtype_names();',
    'ok = std::find(dtype_names().begin(), dtype_names().end(), t) != dtype_names().end();',
  ].join('\n');
  assert.deepEqual(findings('t', text).map((f) => f.split(':')[1]), ['1', '2', '7']);
});

test('no engine file but core/dtype.cpp walks dtype_names() to check a name', () => {
  const found = [];
  for (const file of sources(repo, 'engine'))
    if (file !== path.join('engine', 'core', 'dtype.cpp'))
      found.push(...findings(file, fs.readFileSync(path.join(repo, file), 'utf8')));
  assert.deepEqual(found, [], 'call is_dtype_name (engine/core/dtype.hpp)');
});
