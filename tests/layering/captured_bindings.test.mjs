// A structured binding (`auto [a, b] = ...`, `for (auto& [a, b] : ...)`) named
// inside doctest's CAPTURE, INFO or a *_MESSAGE macro is captured by the
// macro's lambda, which C++17 does not allow: g++ accepts it, clang (CI's
// native and sanitizer builds) refuses it, so a test written and run with g++
// breaks CI's build. This test finds every such use in tests/unit/ with its
// file and line. The scanner is checked on a small text first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sources } from './source_files.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MACROS = /\b(CAPTURE|INFO|MESSAGE|[A-Z_]+_MESSAGE)\s*\(/g;

// The text of the block that starts at line `i` (the binding's own line), up
// to the brace that closes it, or to the end of the enclosing block for a
// binding declared as a statement.
function scopeAfter(lines, i) {
  let depth = 0;
  const out = [];
  for (let j = i; j < lines.length; j++) {
    out.push(lines[j]);
    for (const ch of lines[j]) {
      if (ch === '{') depth++;
      else if (ch === '}') depth--;
    }
    if (depth < 0 || (j > i && depth === 0 && /for\s*\(/.test(lines[i]))) break;
  }
  return out;
}

// The macro's argument text from `start` (just past its opening parenthesis).
function macroArgs(text, start) {
  let depth = 1;
  let j = start;
  for (; j < text.length && depth > 0; j++) {
    if (text[j] === '(') depth++;
    else if (text[j] === ')') depth--;
  }
  return text.slice(start, j - 1);
}

export function capturedBindings(file, text) {
  const lines = text.split('\n');
  const found = [];
  lines.forEach((line, i) => {
    const m = line.match(/auto\s*&{0,2}\s*\[([^\]]+)\]/);
    if (!m) return;
    const names = m[1].split(',').map((n) => n.trim());
    const scope = scopeAfter(lines, i).slice(1).join('\n');
    for (const call of scope.matchAll(MACROS)) {
      // String literals blanked: a word inside a message is not a name.
      const args = macroArgs(scope, call.index + call[0].length).replace(/"(?:[^"\\]|\\.)*"/g, '""');
      for (const n of names)
        if (new RegExp(`\\b${n}\\b`).test(args)) found.push(`${file}:${i + 1}: '${n}' inside ${call[1]}`);
    }
  });
  return found;
}

test('the scanner finds a binding inside CAPTURE and INFO, and not a named member', () => {
  const bad = 'for (const auto& [file, key] : cases) {\n  CAPTURE(file);\n  INFO("file " << key);\n}\n';
  assert.deepEqual(capturedBindings('t.cpp', bad), ["t.cpp:1: 'file' inside CAPTURE", "t.cpp:1: 'key' inside INFO"]);
  const good = 'for (const auto& c : cases) {\n  const std::string& file = c.first;\n  CAPTURE(file);\n}\n';
  assert.deepEqual(capturedBindings('t.cpp', good), []);
  const stmt = '{\n  const auto [low, high] = f();\n  INFO(low);\n}\n';
  assert.deepEqual(capturedBindings('t.cpp', stmt), ["t.cpp:2: 'low' inside INFO"]);
});

test('no structured binding is named inside a doctest capture (clang refuses it)', () => {
  const found = [];
  for (const file of sources(repo, 'tests/unit')) found.push(...capturedBindings(file, fs.readFileSync(path.join(repo, file), 'utf8')));
  assert.deepEqual(found, [], 'name the members instead (CONTRIBUTING.md, "Build")');
});
