#!/usr/bin/env node
// Reads the include graph of engine/ (and wasm/) and fails when a module
// includes a header of a module in its own layer or above it, when the
// modules form a cycle, or when engine/CMakeLists.txt links a module library
// to one that is not below it. The layer order is docs/architecture.md's ("Layers").
//
//   node tests/layering/check_layers.mjs [repo-root]
//
// Prints every offending include as file:line and exits 1; prints a summary and
// exits 0 when the graph only points down.
import fs from 'node:fs';
import path from 'node:path';

// Lowest first; modules on one line are peers and may not include each other.
export const LAYERS = [
  ['core'],
  ['presets'],
  ['model'],
  ['hw', 'mem'],
  ['comm'],
  ['perf'],
  ['scenario'],
  ['run'],
  ['infer', 'serve', 'train'],
  ['jobs'],
  ['search', 'fit'],
  ['api'],
  ['cli', 'wasm'],
];

const layerOf = new Map();
LAYERS.forEach((mods, i) => mods.forEach((m) => layerOf.set(m, i)));

// Every `#include "module/file"` of the sources under `dir`, as edges.
export function includeEdges(root) {
  const edges = [];
  const problems = [];
  const visit = (rel) => {
    const abs = path.join(root, rel);
    for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
      const childRel = path.join(rel, entry.name);
      if (entry.isDirectory()) visit(childRel);
      else if (/\.(cpp|hpp|h)$/.test(entry.name)) {
        const from = rel.split(path.sep)[rel.startsWith('engine') ? 1 : 0];
        const lines = fs.readFileSync(path.join(root, childRel), 'utf8').split('\n');
        lines.forEach((line, i) => {
          const m = /^\s*#\s*include\s+"([^"]+)"/.exec(line);
          if (!m) return;
          const target = m[1];
          const to = target.split('/')[0];
          if (!target.includes('/')) return;  // a header beside the file (none in engine/ today)
          if (!layerOf.has(to)) {
            problems.push(`${childRel}:${i + 1}: includes "${target}" of unknown module '${to}' (add it to LAYERS and docs/architecture.md)`);
            return;
          }
          if (!fs.existsSync(path.join(root, 'engine', target)) && !fs.existsSync(path.join(root, target)))
            problems.push(`${childRel}:${i + 1}: includes "${target}", which does not exist (moved? see docs/architecture.md, "Layers")`);
          edges.push({ from, to, where: `${childRel}:${i + 1}`, target });
        });
      }
    }
  };
  for (const dir of ['engine', 'wasm']) if (fs.existsSync(path.join(root, dir))) visit(dir);
  return { edges, problems };
}

// Strongly connected components of the module graph with more than one module.
export function moduleCycles(edges) {
  const graph = new Map();
  for (const e of edges) {
    if (e.from === e.to) continue;
    if (!graph.has(e.from)) graph.set(e.from, new Set());
    if (!graph.has(e.to)) graph.set(e.to, new Set());
    graph.get(e.from).add(e.to);
  }
  let index = 0;
  const idx = new Map(), low = new Map(), onStack = new Set(), stack = [], cycles = [];
  const strong = (v) => {
    idx.set(v, index); low.set(v, index); index++;
    stack.push(v); onStack.add(v);
    for (const w of graph.get(v)) {
      if (!idx.has(w)) { strong(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do { w = stack.pop(); onStack.delete(w); comp.push(w); } while (w !== v);
      if (comp.length > 1) cycles.push(comp.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!idx.has(v)) strong(v);
  return cycles;
}

// target_link_libraries(sightline_<a> PUBLIC sightline_<b> ...) of engine/CMakeLists.txt.
export function cmakeLinks(root) {
  const text = fs.readFileSync(path.join(root, 'engine', 'CMakeLists.txt'), 'utf8');
  const links = [];
  for (const m of text.matchAll(/target_link_libraries\(\s*sightline_(\w+)\s+(?:PUBLIC|PRIVATE|INTERFACE)([^)]*)\)/g)) {
    for (const dep of m[2].matchAll(/sightline_(\w+)/g)) links.push({ from: m[1], to: dep[1] });
  }
  return links;
}

export function check(root) {
  const { edges, problems } = includeEdges(root);
  const errors = [...problems];
  for (const e of edges) {
    if (e.from === e.to) continue;
    const a = layerOf.get(e.from), b = layerOf.get(e.to);
    if (b > a) errors.push(`${e.where}: upward include: ${e.from} includes "${e.target}" of ${e.to}, a higher layer`);
    else if (b === a) errors.push(`${e.where}: sideways include: ${e.from} includes "${e.target}" of its peer ${e.to}`);
  }
  for (const c of moduleCycles(edges)) errors.push(`cycle between modules: ${c.join(' <-> ')}`);
  for (const l of cmakeLinks(root)) {
    if (l.to === 'engine' || !layerOf.has(l.from)) continue;  // the front ends link the whole engine
    if (!layerOf.has(l.to)) errors.push(`engine/CMakeLists.txt: sightline_${l.from} links unknown sightline_${l.to}`);
    else if (layerOf.get(l.to) >= layerOf.get(l.from))
      errors.push(`engine/CMakeLists.txt: sightline_${l.from} links sightline_${l.to}, which is not below it`);
  }
  return { edges, errors };
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith('check_layers.mjs')) {
  const root = path.resolve(process.argv[2] ?? path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..'));
  const { edges, errors } = check(root);
  const modules = new Set(edges.flatMap((e) => [e.from, e.to]));
  if (errors.length) {
    for (const e of errors) console.error(e);
    console.error(`layering: ${errors.length} problem(s)`);
    process.exit(1);
  }
  const cross = edges.filter((e) => e.from !== e.to).length;
  console.log(`layering: ${edges.length} includes (${cross} between modules) over ${modules.size} modules, all pointing down; no cycle`);
}
