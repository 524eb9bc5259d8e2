// The layering check itself: it passes on this repository and fails on a
// tree with an upward include, a peer include, a cycle or an upward link.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { check } from './check_layers.mjs';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

function tree(files) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'layers-'));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

const cmake = 'target_link_libraries(sightline_perf PUBLIC sightline_comm sightline_core)\n';

test('the engine only includes downward', () => {
  const { edges, errors } = check(repo);
  assert.deepEqual(errors, []);
  assert.ok(edges.length > 100, `read ${edges.length} includes`);
});

test('an upward include is reported with its file and line', () => {
  const root = tree({
    'engine/CMakeLists.txt': cmake,
    'engine/perf/a.cpp': '#include "core/error.hpp"\n#include "serve/simulation.hpp"\n',
    'engine/core/error.hpp': '',
    'engine/serve/simulation.hpp': '',
  });
  const { errors } = check(root);
  assert.equal(errors.length, 1);
  assert.match(errors[0], /^engine\/perf\/a\.cpp:2: upward include: perf includes "serve\/simulation\.hpp"/);
});

test('a peer include and a cycle are reported', () => {
  const root = tree({
    'engine/CMakeLists.txt': cmake,
    'engine/hw/a.hpp': '#include "mem/b.hpp"\n',
    'engine/mem/b.hpp': '#include "hw/a.hpp"\n',
  });
  const { errors } = check(root);
  assert.ok(errors.some((e) => /sideways include: hw includes "mem\/b\.hpp"/.test(e)), errors.join('\n'));
  assert.ok(errors.some((e) => e === 'cycle between modules: hw <-> mem'), errors.join('\n'));
});

test('an include of a header that does not exist is reported', () => {
  const root = tree({ 'engine/CMakeLists.txt': cmake, 'engine/serve/a.cpp': '#include "serve/sim_spec.hpp"\n' });
  const { errors } = check(root);
  assert.deepEqual(errors, ['engine/serve/a.cpp:1: includes "serve/sim_spec.hpp", which does not exist (moved? see docs/architecture.md, "Layers")']);
});

test('a library linked to a higher one is reported', () => {
  const root = tree({
    'engine/CMakeLists.txt': 'target_link_libraries(sightline_comm PUBLIC sightline_perf sightline_core)\n',
    'engine/comm/a.cpp': '#include "core/error.hpp"\n',
    'engine/core/error.hpp': '',
  });
  const { errors } = check(root);
  assert.deepEqual(errors, ['engine/CMakeLists.txt: sightline_comm links sightline_perf, which is not below it']);
});

// Issue 40, "a thin API": the jobs sit in jobs/ (above the simulators, below
// the searches), the benchmark importers and the fit in fit/ (above jobs), and
// api/ holds only the envelopes. The upward-include rule keeps the direction:
// a job or fit file that includes api/ (or a job that includes fit/ or search/)
// fails, on this repository's own LAYERS.
test('jobs/ and fit/ do not include api/, and jobs/ does not include the layers that call it', () => {
  const root = tree({
    'engine/CMakeLists.txt': cmake,
    'engine/jobs/make_job.cpp': '#include "api/api.hpp"\n#include "fit/calibration_fit.hpp"\n#include "search/explorer.hpp"\n',
    'engine/fit/calibration_fit.cpp': '#include "api/api.hpp"\n#include "search/explorer.hpp"\n',
    'engine/api/api.hpp': '',
    'engine/fit/calibration_fit.hpp': '',
    'engine/search/explorer.hpp': '',
  });
  const { errors } = check(root);
  assert.deepEqual(errors.sort(), [
    'engine/jobs/make_job.cpp:1: upward include: jobs includes "api/api.hpp" of api, a higher layer',
    'engine/jobs/make_job.cpp:2: upward include: jobs includes "fit/calibration_fit.hpp" of fit, a higher layer',
    'engine/jobs/make_job.cpp:3: upward include: jobs includes "search/explorer.hpp" of search, a higher layer',
    'engine/fit/calibration_fit.cpp:1: upward include: fit includes "api/api.hpp" of api, a higher layer',
    'engine/fit/calibration_fit.cpp:2: sideways include: fit includes "search/explorer.hpp" of its peer search',
  ].sort());
});

// What api/ may hold: the string API's envelopes and the handles they answer
// with. A job, an importer or a fit put back here fails, even one that only
// api.cpp calls (which the include rule cannot see): a job belongs in jobs/,
// a benchmark reader or the fit in fit/ (docs/architecture.md, "Layers").
const API_FILES = {
  'api.hpp': "the string API: a document's text in, an envelope's text out",
  'api.cpp': 'its envelopes: each call guarded, dispatched to jobs/, search/ or fit/, its answer written',
  'inspect_model.hpp': "the inspect call's answer: a model summarised as the engine reads it",
  'inspect_model.cpp': "the inspect call's answer: a model summarised as the engine reads it",
};

test('api/ holds only the envelopes and their handles', () => {
  const files = fs.readdirSync(path.join(repo, 'engine', 'api')).sort();
  const extra = files.filter((f) => !(f in API_FILES));
  assert.deepEqual(extra, [], 'a job goes in engine/jobs/, a benchmark reader or the fit in engine/fit/');
  assert.deepEqual(Object.keys(API_FILES).filter((f) => !files.includes(f)), [], 'API_FILES names a file api/ no longer has');
});

// Results are typed until they are written (docs/architecture.md, "Layers"):
// the engine does not read its own output back by JSON pointer. These are the
// files that may use a JSON pointer, each an input reader or a writer; a new
// one fails here until it is a typed read or is listed with its reason.
const JSON_POINTER_USERS = {
  'engine/jobs/interval_job.cpp': 'writer: places _low/_high beside the figure a key metric names',
  'engine/cli/cmd_sweep.cpp': 'input: sets a sweep value in the input scenario',
  'engine/cli/table_serving.cpp': 'writer: the CLI table formats a finished result',
  'engine/scenario/metric_catalogue.cpp': 'writer: metric_value, used only by the CLI table writer',
  'engine/scenario/read_simulation.cpp': 'input: reads a compare patch',
  'engine/search/deployment_search.cpp': "input: read_candidate_outcome, search_rank's input results",
};

/** Every C++ source of engine/ as [path from the repository root, text]. */
function engineSources() {
  const out = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(cpp|hpp)$/.test(e.name)) out.push([path.relative(repo, p).split(path.sep).join('/'), fs.readFileSync(p, 'utf8')]);
    }
  };
  walk(path.join(repo, 'engine'));
  return out;
}

test('engine/ uses a JSON pointer only in its input readers and writers', () => {
  const found = new Set(engineSources().filter(([, text]) => text.includes('json_pointer')).map(([f]) => f));
  const unexpected = [...found].filter((f) => !(f in JSON_POINTER_USERS)).sort();
  assert.deepEqual(unexpected, [], 'a JSON-pointer read of the engine\'s own result: read the typed field instead');
  assert.ok(found.has('engine/search/deployment_search.cpp'), 'the scan finds the known input reader');
});

// The same rule without the word json_pointer: a read of a result's figure
// sections by key (r.contains("metrics"), r["metrics"] bound or read,
// .at/.value/.find/.count("metrics")), or the engine's envelope parsed back
// (read_engine_envelope), is a read of the engine's own output. The sections
// are those holding computed figures; a subscript followed by `=` writes. The
// files listed read a document of their own that has a key of that name (the
// scenario, a benchmark tool's report, the candidates' results a caller sends
// back), each with why; any other file fails.
const RESULT_SECTIONS = ['metrics', 'key_metrics', 'headline_metrics', 'intervals_80', 'interval_band', 'headline',
  'steady_state', 'max_qps', 'capacity', 'memory_per_gpu', 'breakdown', 'time_series', 'interval_runs', 'training_run'];
const SECTION_READERS = {
  'engine/fit/bench_import_tools.cpp': "input: a GuideLLM report's own \"metrics\"",
  'engine/scenario/read_simulation.cpp': 'input: the scenario\'s serving.key_metrics and serving.steady_state',
  'engine/scenario/read_training.cpp': 'input: the scenario\'s training.key_metrics',
  'engine/search/deployment_search.cpp': "input: read_candidate_outcome, search_rank's input results",
};

/** `file:line: text` of each read of a result section in a C++ source (comments blanked). */
export function sectionReads(rel, text) {
  const code = text.replace(/\/\/[^\n]*/g, '');
  const out = [];
  const lineOf = (i) => code.slice(0, i).split('\n').length;
  for (const k of RESULT_SECTIONS) {
    const call = new RegExp(`\\.(?:contains|at|value|find|count)\\("${k}"`, 'g');
    const subscript = new RegExp(`\\["${k}"\\](?!\\s*(?:\\[[^\\]]*\\]\\s*)*=(?!=))`, 'g');
    for (const re of [call, subscript]) for (const m of code.matchAll(re)) out.push(`${rel}:${lineOf(m.index)}: ${m[0]}`);
  }
  for (const m of code.matchAll(/\bread_engine_envelope\s*\(/g)) out.push(`${rel}:${lineOf(m.index)}: ${m[0]}`);
  return out;
}

test('no engine module below the CLI reads a result\'s figures back by key', () => {
  const reads = engineSources()
    .filter(([f]) => !f.startsWith('engine/cli/') && !f.startsWith('engine/core/json_text.'))
    .flatMap(([f, text]) => sectionReads(f, text));
  const unexpected = reads.filter((r) => !(r.split(':')[0] in SECTION_READERS));
  assert.deepEqual(unexpected, [], 'a read of the engine\'s own result: read the typed field (Job::figure, the typed result) instead');
  assert.ok(reads.some((r) => r.startsWith('engine/search/deployment_search.cpp:')), 'the scan finds the known input reader');
});

test('the section scan finds a read-back and passes a write', () => {
  const reads = sectionReads('engine/api/x.cpp', [
    'json r = job.result();',
    'if (r.contains("metrics")) use(r["metrics"]["ttft_ms"]["p50"].get<double>());',
    'const json& m = r["steady_state"];',
    'r["metrics"] = o.metrics.to_json();  // a write',
    'r["compare"][i]["key_metrics"] = km;',
    'json e = read_engine_envelope(text);',
  ].join('\n'));
  assert.deepEqual(reads, ['engine/api/x.cpp:2: .contains("metrics"', 'engine/api/x.cpp:2: ["metrics"]',
    'engine/api/x.cpp:3: ["steady_state"]', 'engine/api/x.cpp:6: read_engine_envelope(']);
});

// Issue 40: "fit calls jobs and reads fields, never JSON text". The string API
// (api/api.hpp: a scenario's text in, an envelope's text out) is for the front
// ends (the CLI, the wasm bindings); an engine module that calls it reads the
// engine's own output back as text. Typed runs go through jobs/run_job.hpp and
// Job::figure instead.
test('no engine module below the CLI calls the string API', () => {
  const callers = engineSources().filter(([, text]) => /#include "api\/api\.hpp"/.test(text)).map(([f]) => f);
  const below = callers.filter((f) => !f.startsWith('engine/cli/') && f !== 'engine/api/api.cpp').sort();
  assert.deepEqual(below, [], 'read a typed job (jobs/run_job.hpp, Job::figure) instead of the string API\'s JSON');
  assert.ok(callers.includes('engine/cli/cmd_run.cpp'), 'the scan finds a front end\'s use');
});
