// The page loads sightline.wasm first and sightline-calibrate.wasm only when a
// user gives the Calibrate tab a benchmark file (wasm/CMakeLists.txt): the
// benchmark readers belong to the second module. Code the first never calls is
// left out by the linker, except what a static constructor keeps: a table at
// namespace scope built at start-up (a std::vector of the readers' keys) links
// the whole table into every module. That put the page over its 1 MB budget
// once (2026-11-30). Here: none of the readers' lists of keys not read
// (engine/fit/bench_import_ignored.cpp, each entry's reason) is in the page's
// module, and they are in the calibrate module (so this test can fail).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { repoRoot } from './wasm_module.mjs';

// The reasons of the lists: the second string of each {"path", "why"} entry,
// and the named reasons (constexpr const char* kName = "...").
function listReasons() {
  const text = fs.readFileSync(path.join(repoRoot, 'engine', 'fit', 'bench_import_ignored.cpp'), 'utf8');
  const entries = [...text.matchAll(/\{"[^"]*",\s*"((?:[^"\\]|\\.){24,})"\}/g)].map((m) => m[1]);
  const named = [...text.matchAll(/constexpr const char\* k\w+ = "((?:[^"\\]|\\.){24,})";/g)].map((m) => m[1]);
  return [...new Set([...entries, ...named])].filter((s) => !s.includes('\\'));
}

test('the benchmark readers\' lists are in the calibrate module only, not the page\'s', () => {
  const web = path.join(repoRoot, 'build', 'web');
  const page = path.join(web, 'sightline.wasm');
  const calibrate = path.join(web, 'sightline-calibrate.wasm');
  for (const f of [page, calibrate]) assert.ok(fs.existsSync(f), `${f} is missing: run bash .ci/build`);
  const pageBytes = fs.readFileSync(page);
  const calibrateBytes = fs.readFileSync(calibrate);
  const reasons = listReasons();
  assert.ok(reasons.length > 50, `only ${reasons.length} reasons found in bench_import_ignored.cpp`);
  const inCalibrate = reasons.filter((r) => calibrateBytes.includes(Buffer.from(r)));
  assert.ok(inCalibrate.length > 50, `the calibrate module holds ${inCalibrate.length} of ${reasons.length} reasons`);
  const inPage = reasons.filter((r) => pageBytes.includes(Buffer.from(r)));
  assert.deepEqual(inPage, [], 'the page\'s module holds the benchmark readers\' lists (a static constructor?)');
});
