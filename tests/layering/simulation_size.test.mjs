// serve::Simulation stays under 500 lines (issue 40: the event loop and the
// requests' lifecycle; the report, the cluster's construction, the routers'
// loads and the arrivals live in classes of their own). Counted as
// docs/architecture.md counts a class: its declaration in simulation.hpp
// (`class Simulation ... };`) plus each out-of-line `Simulation::` definition
// in engine/serve/, from its first line to its closing brace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const serveDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'engine', 'serve');
const MAX_LINES = 500;

// Lines of a braced body starting at `lines[start]`: up to the line where the
// braces opened since `start` close again.
function bodyLength(lines, start) {
  let depth = 0, opened = false;
  for (let j = start; j < lines.length; j++) {
    for (const ch of lines[j]) {
      if (ch === '{') { depth++; opened = true; } else if (ch === '}') depth--;
    }
    if (opened && depth === 0) return j - start + 1;
  }
  throw new Error(`unbalanced braces from line ${start + 1}`);
}

// Out-of-line definitions of `cls` members in `text`: lines at column 0 that
// name `cls::` and open a body (not a declaration ending in ';').
export function definitionLines(text, cls) {
  const lines = text.split('\n');
  const member = new RegExp(`\\b${cls}::`);
  let total = 0;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (!/^\S/.test(l) || l.startsWith('//') || !member.test(l) || l.trimEnd().endsWith(';')) continue;
    const n = bodyLength(lines, i);
    total += n;
    i += n - 1;
  }
  return total;
}

export function declarationLines(text, cls) {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`class ${cls} `));
  assert.ok(start >= 0, `class ${cls} not found`);
  const end = lines.findIndex((l, i) => i > start && l === '};');
  return end - start + 1;
}

test('the counter counts a declaration and out-of-line bodies, not declarations or other classes', () => {
  const cpp = ['int Other::f() {', '  return 1;', '}', 'int Sim::g() const {', '  if (x) {', '    y();', '  }', '  return 2;', '}',
    'void Sim::h();', '// Sim::comment() {'].join('\n');
  assert.equal(definitionLines(cpp, 'Sim'), 6);
  assert.equal(declarationLines(['namespace a {', 'class Sim final : public B {', ' public:', '  void h();', '};', '}'].join('\n'), 'Sim'), 4);
});

test(`serve::Simulation: its declaration and out-of-line definitions under ${MAX_LINES} lines`, () => {
  let definitions = 0;
  for (const f of readdirSync(serveDir).filter((n) => n.endsWith('.cpp')))
    definitions += definitionLines(readFileSync(path.join(serveDir, f), 'utf8'), 'Simulation');
  const declaration = declarationLines(readFileSync(path.join(serveDir, 'simulation.hpp'), 'utf8'), 'Simulation');
  const total = definitions + declaration;
  assert.ok(definitions > 100, `only ${definitions} lines of definitions found: is the counter still finding them?`);
  assert.ok(total < MAX_LINES, `serve::Simulation is ${total} lines (${declaration} declaration + ${definitions} definitions), ` +
    `over ${MAX_LINES}: move a job out with its data (docs/architecture.md, "The serving simulator's class")`);
});
