// The serving simulator rebuilds and prices a step's operator list every
// simulated step, millions of times in a capacity search. Code on that path
// branches on an operator's family and role (model/operators.hpp OpRole, set
// where the operator is built), never on its name: a name compare there costs
// string work per operator per step and breaks silently when a name changes.
// This test fails on a name compare in the files of that path. The scanner is
// checked on a small text first, so that a blind scanner cannot pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sources } from './source_files.mjs';
import { lineFindings } from './line_scan.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// The step's path: the simulator (every file of engine/serve), the builder,
// the operator constructors, the pricing setup and the cost model.
// The builder's files are found by name, so that a split of the builder
// (operators.cpp into step_builder*, 2026-11-29) cannot drop one from the scan.
const builderFiles = sources(repo, 'engine/model').filter((f) => /\/(operators?|operator_kinds|step_builder\w*)\.(cpp|hpp)$/.test(f));
const hotFiles = [
  ...builderFiles,
  'engine/perf/cost_setup.cpp',
  'engine/perf/calibrated_cost.cpp',
  'engine/perf/host_overhead.cpp',
];

// `x.name == ...`, `... != y.name`, `x.name.rfind(`, `starts_with(x.name, ...)`,
// `std::string_view v = x.name` (a view taken to compare), on any object.
const nameCompare =
  /\.name\s*[!=]=|[!=]=\s*[\w\[\]()]+(\.|->)name\b|(\.|->)name\.(rfind|find|compare|substr|starts_with|ends_with)\s*\(|starts_with\s*\([^,]*\bname\b|string_view\s+\w+\s*=\s*\w+(\.|->)name\b/;

const findings = (file, text) => lineFindings(file, text, nameCompare);

test('the scanner finds name compares, not roles or name assignments', () => {
  const text = [
    'if (op.name == "attn_pre_proj") x();',
    'const bool e = p.family == OpFamily::Gemm && starts_with(p.name, "moe_expert");',
    'if ("lm_head" != ops[i].name) y();',
    'if (op.name.rfind("lora_", 0) == 0) z();',
    'std::string_view base = op.name;',
    'if (op.role == OpRole::ExpertGemm) w();',
    'op.name = std::move(name);',
    'shrink.name = "lora_shrink";  // op.name == "x" in a comment',
  ].join('\n');
  assert.deepEqual(findings('t', text).map((f) => f.split(':')[1]), ['1', '2', '3', '4', '5']);
});

test('no operator name compare on the serving step path', () => {
  const files = [...sources(repo, 'engine/serve'), ...hotFiles];
  const found = [];
  for (const file of files) found.push(...findings(file, fs.readFileSync(path.join(repo, file), 'utf8')));
  assert.deepEqual(found, [], 'branch on Operator::role (model/operators.hpp OpRole), set where the operator is built');
});

// The values of `enumName` (model/operators.hpp), but Other, each as the
// builders or the simulator write it (`written(value)`: a pattern's source).
function checkEveryValueSet(enumName, least, written) {
  const header = fs.readFileSync(path.join(repo, 'engine/model/operators.hpp'), 'utf8');
  const values = [...header.match(new RegExp(`enum class ${enumName}[^{]*\\{([^}]*)\\}`))[1].matchAll(/^\s*(\w+)\s*,/gm)].map((m) => m[1]);
  assert.ok(values.length >= least, `${enumName} values read from the header: ${values}`);
  const builders = [...builderFiles, ...sources(repo, 'engine/serve')]
    .map((f) => fs.readFileSync(path.join(repo, f), 'utf8'))
    .join('\n');
  for (const v of values.filter((v) => v !== 'Other'))
    assert.match(builders, new RegExp(written(v)), `${enumName}::${v} is never set`);
}

test('every operator role is set where operators are built', () => {
  checkEveryValueSet('OpRole', 5, (r) => `role = OpRole::${r}\\b`);
});

// Two-batch overlap reads each operator's part of a layer (OpStage), set by
// the builder as it adds the operators: every part must be set somewhere.
test('every part of a layer an operator runs in is set where operators are built', () => {
  checkEveryValueSet('OpStage', 7, (st) => `OpStage::${st}\\b`);
});
