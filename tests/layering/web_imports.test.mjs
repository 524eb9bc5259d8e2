// The page's modules (web/src) import each other without a cycle: every
// static `import ... from './x.js'` (and `export ... from`) edge is read from
// the sources, and a depth-first search fails on the first cycle it finds,
// naming it. A cycle makes module evaluation order depend on which file is
// loaded first (an import read before its module ran is undefined). Every
// import, static or dynamic, also keeps web/src's folder rule (web/src/README.md):
// client/ and worker/ import their own folder and shared/, shared/ only itself,
// host/ nothing of ours.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const src = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'web', 'src');

function jsFiles(dir) {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...jsFiles(p));
    else if (e.name.endsWith('.js')) out.push(p);
  }
  return out;
}

// Relative module specifiers of static imports and re-exports.
function edges(file) {
  const text = fs.readFileSync(file, 'utf8');
  const out = [];
  const re = /^\s*(?:import|export)\b[^'"]*?\bfrom\s*['"](\.{1,2}\/[^'"]+)['"]|^\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/gm;
  for (const m of text.matchAll(re)) out.push(path.resolve(path.dirname(file), m[1] || m[2]));
  return out;
}

// Relative specifiers of dynamic imports (a tab's module, a view, a library loaded on demand).
function dynamicEdges(file) {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g)].map((m) => path.resolve(path.dirname(file), m[1]));
}

// web/src's folder rule (web/src/README.md): the folders each folder's modules may import.
// Files the build writes beside the page (vendor/, the wasm glue) are not web/src's and not ruled here.
export const FOLDER_RULE = { client: ['client', 'shared'], worker: ['worker', 'shared'], shared: ['shared'], host: [] };

/**
 * The imports of `graph` (web/src-relative file -> [web/src-relative files it imports]) that break the
 * folder rule, and the modules outside the four folders, as 'from -> to' lines.
 */
export function ruleBreaks(graph) {
  const folderOf = (f) => f.split(/[\\/]/)[0];
  const out = [];
  for (const [from, tos] of graph) {
    const allowed = FOLDER_RULE[folderOf(from)];
    if (!allowed) {
      out.push(`${from}: not in one of ${Object.keys(FOLDER_RULE).join(', ')}`);
      continue;
    }
    for (const to of tos) if (!allowed.includes(folderOf(to))) out.push(`${from} -> ${to}`);
  }
  return out;
}

export function findCycle(graph) {
  const state = new Map();  // file -> 'open' | 'done'
  const stack = [];
  const visit = (f) => {
    state.set(f, 'open');
    stack.push(f);
    for (const g of graph.get(f) || []) {
      if (state.get(g) === 'open') return [...stack.slice(stack.indexOf(g)), g];
      if (!state.has(g)) {
        const c = visit(g);
        if (c) return c;
      }
    }
    stack.pop();
    state.set(f, 'done');
    return null;
  };
  for (const f of [...graph.keys()].sort()) {
    if (state.has(f)) continue;
    const c = visit(f);
    if (c) return c;
  }
  return null;
}

test('the cycle finder finds a planted cycle and passes a tree', () => {
  assert.deepEqual(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]])), ['a', 'b', 'c', 'a']);
  assert.equal(findCycle(new Map([['a', ['b', 'c']], ['b', ['c']], ['c', []]])), null);
});

test('web/src has no import cycle, and every relative import of our own names a file that exists', () => {
  const files = jsFiles(src);
  assert.ok(files.length > 20, `found the page's modules (${files.length})`);
  const graph = new Map();
  for (const f of files) {
    // vendor/ holds the third-party bundles web/build.mjs copies in, and sightline.mjs and
    // sightline-calibrate.mjs are the Emscripten glue web/build.mjs writes beside the page: none
    // is in web/src, and they import nothing of ours.
    const glue = new Set(['sightline.mjs', 'sightline-calibrate.mjs']);
    const to = edges(f).filter((t) => !path.relative(src, t).startsWith(`vendor${path.sep}`) &&
                                      !glue.has(path.relative(src, t)));
    for (const t of to) assert.ok(fs.existsSync(t), `${path.relative(src, f)} imports ${path.relative(src, t)}, which does not exist`);
    graph.set(f, to);
  }
  const cycle = findCycle(graph);
  assert.equal(cycle, null, cycle ? `import cycle: ${cycle.map((f) => path.relative(src, f)).join(' -> ')}` : '');
});

test('the folder rule finder names an import across the rule and a module outside the folders', () => {
  const graph = new Map([
    ['client/app.js', ['client/form.js', 'shared/protocol.js']],
    ['worker/worker.js', ['shared/protocol.js', 'client/format.js']],
    ['shared/protocol.js', ['worker/replies.js']],
    ['host/sw.js', ['shared/protocol.js']],
    ['stray.js', []],
  ]);
  assert.deepEqual(ruleBreaks(graph), ['worker/worker.js -> client/format.js', 'shared/protocol.js -> worker/replies.js',
    'host/sw.js -> shared/protocol.js', 'stray.js: not in one of client, worker, shared, host']);
  assert.deepEqual(ruleBreaks(new Map([['client/a.js', ['client/charts/b.js', 'shared/c.js']], ['worker/d.js', ['shared/c.js']]])), []);
});

test('web/src keeps its folder rule: client/ and worker/ import their own folder and shared/, shared/ itself, host/ nothing', () => {
  const glue = new Set(['sightline.mjs', 'sightline-calibrate.mjs']);
  const graph = new Map();
  for (const f of jsFiles(src)) {
    const to = [...edges(f), ...dynamicEdges(f)].map((t) => path.relative(src, t))
      .filter((t) => !t.startsWith(`vendor${path.sep}`) && !glue.has(t));
    graph.set(path.relative(src, f), to);
  }
  assert.ok([...graph.keys()].some((f) => f.startsWith(`client${path.sep}`)) && [...graph.keys()].some((f) => f.startsWith(`worker${path.sep}`)),
    `read the folders (${graph.size} modules)`);
  assert.deepEqual(ruleBreaks(graph), [], 'imports across web/src\'s folder rule (web/src/README.md)');
});

// The engine alone chooses a result's headline cards (scenario/metric_catalogue's
// headline_metrics, written into every result as "headline_metrics"); the page
// draws them from the result. A list of two or more of those ids in a page module
// (an array literal), or a headline number in the static markup, is a copy of
// the engine's rule: this fails on it.
const repo = path.join(src, '..', '..');

/** The ids of the engine's headline table, read from its source. */
function engineHeadlineIds() {
  const text = fs.readFileSync(path.join(repo, 'engine', 'scenario', 'metric_catalogue.cpp'), 'utf8');
  const start = text.indexOf('std::vector<std::string> headline_metrics(');
  const end = text.indexOf('json headline_metrics_json(', start);
  assert.ok(start >= 0 && end > start, 'found headline_metrics in engine/scenario/metric_catalogue.cpp');
  // Every card id, and each card's steady-window counterpart (the third field).
  return new Set([...text.slice(start, end).matchAll(/"([a-z0-9_]+)"/g)].map((m) => m[1]));
}

/** Array literals of `text` (innermost) naming two or more distinct `ids`, as [ids named]. */
export function headlineLists(text, ids) {
  const out = [];
  for (const m of text.matchAll(/\[([^[\]]*)\]/g)) {
    const named = [...new Set([...m[1].matchAll(/['"`]([a-z0-9_]+)['"`]/g)].map((s) => s[1]).filter((s) => ids.has(s)))];
    if (named.length >= 2) out.push(named);
  }
  return out;
}

test('the headline-list finder finds a planted list and passes single ids', () => {
  const ids = new Set(['ttft_p50_ms', 'tpot_p50_ms', 'max_qps']);
  assert.deepEqual(headlineLists("const HEADLINE = ['ttft_p50_ms', 'tpot_p50_ms'];\nconst x = [...HEADLINE, 'max_qps'];", ids),
    [['ttft_p50_ms', 'tpot_p50_ms']]);
  assert.deepEqual(headlineLists("const CDFS = [['cdf-ttft', 'ttft_p50_ms'], ['cdf-tpot', 'tpot_ms']];", ids), []);
});

test('web/src keeps no headline list of its own: the cards come from result.headline_metrics', () => {
  const ids = engineHeadlineIds();
  assert.ok(ids.size >= 15, `read the engine's headline ids (${[...ids].join(', ')})`);
  // sweep.js prefers some metrics as its pickers' first choice (a plotting default
  // among every numeric metric of the result, not the result's headline cards).
  const exempt = new Set([path.join('client', 'sweep.js')]);
  for (const f of jsFiles(src).filter((p) => !exempt.has(path.relative(src, p)))) {
    const lists = headlineLists(fs.readFileSync(f, 'utf8'), ids);
    assert.deepEqual(lists, [], `${path.relative(src, f)} lists headline metrics the engine chooses: ${JSON.stringify(lists)}`);
  }
  const html = fs.readFileSync(path.join(src, 'host', 'index.html'), 'utf8');
  const fixed = [...html.matchAll(/data-metric="(?:serve\.|train\.)?([a-z0-9_]+)"/g)].map((m) => m[1]).filter((id) => ids.has(id));
  assert.deepEqual(fixed, [], 'index.html draws no headline number in its static markup');
});
