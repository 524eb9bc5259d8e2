// engine/'s and web/src's function and file sizes against the guide's limits
// (120 lines per function, 600 per file): every offender must be on
// body_sizes_allowed.json with a reason. An entry that is no longer an offender is reported (not
// failed: another branch may shrink a listed file meanwhile). The scanner
// itself is checked on a small text so that a blind scanner cannot pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, functionsOf, FILE_LIMIT } from './body_sizes.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

test('the scanner finds functions, not namespaces, classes or initializers', () => {
  const text = [
    'namespace a {',
    'struct S { int f() const { return 1; } };',
    'const int t[] = {1, 2};',
    'int g(int x) {',
    '  const char* s = "}{";  // }',
    '  auto l = [&] { return x; };',
    '  return l();',
    '}',
    'S::S(int v) : v_(v) {',
    '}',
    '}  // namespace a',
  ].join('\n');
  const fns = functionsOf(text);
  assert.deepEqual(fns.map((f) => [f.name, f.line, f.lines]), [['f', 2, 1], ['g', 4, 5], ['S::S', 9, 2]]);
});

test('the JavaScript scanner finds functions, methods and arrows, not statements, objects or literals', () => {
  const text = [
    'const re = /[{(]/g;',                                   // 1: a regular expression holding a brace
    'export function f({ a = 1 } = {}, b) {',                 // 2: destructured parameters
    '  const s = `}${a ? `{` : "}"}{`;  // }',                // 3: template literals, nested
    '  return s.replace(/"/g, \'"\') + b / 2;',                // 4: a regex with a quote, a division
    '}',                                                      // 5
    'if (re.test("x")) {',                                    // 6: a statement, not a function
    '  console.log(1);',
    '}',                                                      // 8
    'class C {',                                              // 9
    '  constructor({ onDone = () => {} }) {',                 // 10: a method with an arrow default
    '    this.onDone = onDone;',
    '  }',                                                    // 12
    '  async run() {',                                        // 13
    '    for (let i = 0; i < 2; i++) { await this.step(i); }',
    '  }',                                                    // 15
    '}',
    'const g = (x) => {',                                     // 17: an arrow
    '  const o = { k: 1, m() { return 2; } };',
    '  return o;',
    '};',                                                     // 20
    'onEvent((e) => {',                                       // 21: an arrow passed at the top level
    '  return e;',
    '});',                                                    // 23
  ].join('\n');
  const fns = functionsOf(text, { js: true });
  assert.deepEqual(fns.map((f) => [f.name, f.line, f.lines]),
    [['f', 2, 4], ['constructor', 10, 3], ['run', 13, 3], ['g', 17, 4], ['onEvent', 21, 3]]);
});

test('a web/src module over 600 lines is an offender, and one at the limit is not', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'body-sizes-'));
  try {
    fs.mkdirSync(path.join(root, 'web', 'src', 'views'), { recursive: true });
    const lines = (n) => `${Array.from({ length: n }, (_, i) => `export const x${i} = ${i};`).join('\n')}\n`;
    fs.writeFileSync(path.join(root, 'web', 'src', 'at-limit.js'), lines(FILE_LIMIT));
    fs.writeFileSync(path.join(root, 'web', 'src', 'views', 'big.js'), lines(FILE_LIMIT + 1));
    const none = { functions: [], files: [] };
    assert.deepEqual(check(root, none).unexpected, [`web/src/views/big.js is ${FILE_LIMIT + 1} lines (limit ${FILE_LIMIT})`]);
    // Listed with a reason, it passes (and the list is the only way to).
    assert.deepEqual(check(root, { functions: [], files: [{ file: 'web/src/views/big.js', why: 'test' }] }).unexpected, []);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('no function over 120 lines and no file over 600 in engine/ and web/src, except the listed ones', (t) => {
  const { unexpected, stale } = check(root);
  for (const s of stale) t.diagnostic(`no longer over its limit, remove from tests/layering/body_sizes_allowed.json: ${s}`);
  assert.deepEqual(unexpected, [], 'split these, or list them with a reason in tests/layering/body_sizes_allowed.json');
});
