// The benchmark readers' shared key rule (tests/layering/bench_key_rule.mjs)
// holds here, and a reader that skips it, or keeps its own list, is found.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { check } from './bench_key_rule.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

test('every benchmark reader passes through the shared unread-key check; one list per format', () => {
  assert.deepEqual(check(repo), []);
});

test('a new reader that skips the check, or keeps its own list, is named', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-key-rule-'));
  const fit = path.join(root, 'engine', 'fit');
  fs.mkdirSync(fit, { recursive: true });
  for (const f of fs.readdirSync(path.join(repo, 'engine', 'fit')).filter((n) => n.startsWith('bench_import')))
    fs.copyFileSync(path.join(repo, 'engine', 'fit', f), path.join(fit, f));
  fs.appendFileSync(path.join(fit, 'bench_import_readers.hpp'), '\nBenchRun read_newtool_file(const std::string& text, const std::string& file);\n');
  fs.writeFileSync(path.join(fit, 'bench_import_newtool.cpp'),
    'struct IgnoredKey { const char* k; };\nBenchRun read_newtool_file(const std::string& text, const std::string& file) {\n  return BenchRun{};\n}\n');
  fs.writeFileSync(path.join(fit, 'bench_import_bypass.cpp'),
    'std::vector<BenchRun> read_again(const json& j) { return {read_vllm_object(j, "f", "")}; }\n');
  const found = check(root);
  assert.ok(found.some((p) => p.startsWith('read_vllm_object: called outside read_object')), found.join('\n'));
  assert.ok(found.some((p) => p.startsWith('read_newtool_file: its runs do not pass')), found.join('\n'));
  assert.ok(found.some((p) => p.startsWith('bench_import_newtool.cpp: a list of keys')), found.join('\n'));
  fs.rmSync(root, { recursive: true, force: true });
});
