// The one-reader / one-number-parser rule (tests/layering/one_parser.mjs): it
// holds on this repository, and it finds each kind of stray parse call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { allowList, check } from './one_parser.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

test('no JSON or number parsing outside the reader, the number parser and the boundary', () => {
  assert.deepEqual(check(repo), []);
});

test('the allow-list names only files that still need it', () => {
  // Each allowed file must still hold a call, so the list shrinks as they are fixed.
  for (const f of allowList) {
    if (!fs.existsSync(path.join(repo, f))) continue;
    const alone = check(repo, { allowed: allowList.filter((a) => a !== f) }).filter((x) => x.startsWith(f + ':'));
    assert.ok(alone.length > 0, `${f} no longer needs the allow-list`);
  }
});

test('each kind of stray call is found with its file and line', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'one-parser-'));
  fs.mkdirSync(path.join(root, 'engine', 'cli'), { recursive: true });
  fs.mkdirSync(path.join(root, 'wasm'), { recursive: true });
  fs.writeFileSync(path.join(root, 'engine', 'cli', 'a.cpp'), [
    'json j = json::parse(text);',
    'int n = std::stoi(cell);  // a comment with std::stod( is not code',
    'double d = strtod(p, &end);',
    'auto x = nlohmann::json::parse(t);',
    'CsvTable t(text, f);',
    'auto v = cols.at(key);',
    'const char* s = "// json::parse( in a string"; double e = std::stod(s);',
  ].join('\n'));
  fs.writeFileSync(path.join(root, 'wasm', 'b.cpp'), 'int k = atoi(s);\n');
  const found = check(root);
  assert.deepEqual(found.map((f) => f.split(': ')[0]), [
    'engine/cli/a.cpp:1', 'engine/cli/a.cpp:2', 'engine/cli/a.cpp:3', 'engine/cli/a.cpp:4', 'engine/cli/a.cpp:6',
    'engine/cli/a.cpp:7', 'engine/cli/a.cpp:7', 'wasm/b.cpp:1',
  ]);
});
