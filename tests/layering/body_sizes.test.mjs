// engine/'s function and file sizes against the guide's limits (120 lines per
// function, 600 per file): every offender must be on body_sizes_allowed.json
// with a reason. An entry that is no longer an offender is reported (not
// failed: another branch may shrink a listed file meanwhile). The scanner
// itself is checked on a small text so that a blind scanner cannot pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { check, functionsOf } from './body_sizes.mjs';

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

test('no function over 120 lines and no file over 600 in engine/, except the listed ones', (t) => {
  const { unexpected, stale } = check(root);
  for (const s of stale) t.diagnostic(`no longer over its limit, remove from tests/layering/body_sizes_allowed.json: ${s}`);
  assert.deepEqual(unexpected, [], 'split these, or list them with a reason in tests/layering/body_sizes_allowed.json');
});
