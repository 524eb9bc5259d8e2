// One rule chooses the GPU that cross-generation transfer starts from
// (perf/calibration.cpp, nearest_by_spec): the product and report-accuracy's
// leave-one-GPU-out both call it. A second argmin over spec_distance elsewhere
// would drift from it (the report once broke ties by id, the product by sweep
// size), so spec_distance is called only where the rule lives, and where a
// kernel family asks whether two spec sheets are equal (== 0).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const allowed = new Map([
  ['engine/perf/calibration.cpp', 'the rule itself'],
  ['engine/perf/kernel_family.cpp', 'an equality test of two spec sheets'],
]);

function sources(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (/\.(cpp|hpp)$/.test(e.name)) out.push(p);
  }
  return out;
}

export function strayCalls(root) {
  const found = [];
  for (const dir of ['engine', 'wasm']) {
    if (!fs.existsSync(path.join(root, dir))) continue;
    for (const file of sources(path.join(root, dir))) {
      const rel = path.relative(root, file).split(path.sep).join('/');
      if (allowed.has(rel) || rel.endsWith('.hpp')) continue;
      fs.readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
        const code = line.replace(/\/\/.*$/, '');
        if (/\bspec_distance\s*\(/.test(code)) found.push(`${rel}:${i + 1}`);
      });
    }
  }
  return found;
}

test('spec_distance is called only by the transfer-source rule (and an equality test)', () => {
  assert.deepEqual(strayCalls(repo), []);
});

test('a second argmin over spec_distance is found with its file and line', () => {
  const root = fs.mkdtempSync(path.join(repo, 'build', 'transfer-source-'));
  try {
    fs.mkdirSync(path.join(root, 'engine', 'cli'), { recursive: true });
    fs.writeFileSync(path.join(root, 'engine', 'cli', 'report.cpp'),
      '// spec_distance( in a comment is fine\nconst double d = spec_distance(a, b);\n');
    assert.deepEqual(strayCalls(root), ['engine/cli/report.cpp:2']);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
