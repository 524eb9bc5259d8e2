// The node size the page proposes for a GPU comes from one piece
// (web/src/client/gpu-links.js): the GPU's node_gpus, no more than its link joins. An
// H100 NVL server holds 8 GPUs in bridged pairs, so a node of one NVLink domain
// is 2 (the engine refuses 8 on nvlink4-bridge-2); the Search tab and the
// sweep once took 8. Reads the sources and presets only: no build, no browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const srcDir = path.join(repo, 'web', 'src');
const presets = (kind) => fs.readdirSync(path.join(repo, 'presets', kind)).filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(fs.readFileSync(path.join(repo, 'presets', kind, f), 'utf8')));

test('the proposed node size of every GPU preset fits its own link domain', async () => {
  const { ownNodeGpus } = await import(pathToFileURL(path.join(srcDir, 'client', 'gpu-links.js')).href);
  const links = presets('interconnects');
  let capped = 0;
  for (const gpu of presets('gpus')) {
    const n = ownNodeGpus(gpu, links);
    const link = links.find((l) => l.id === gpu.default_intra_node);
    assert.ok(Number.isInteger(n) && n >= 1, `${gpu.id}: ${n}`);
    if (link && link.domain_gpus > 0) assert.ok(n <= link.domain_gpus, `${gpu.id}: ${n} on ${link.id} (domain ${link.domain_gpus})`);
    if (n < gpu.node_gpus) capped += 1;
  }
  assert.ok(capped >= 2, 'the bridged parts (H100 NVL, H200 NVL) are capped by their bridges');
});

test('page code takes a node size from the GPU with its link, never from the GPU alone', () => {
  const bare = [];
  for (const file of fs.readdirSync(srcDir, { recursive: true }).filter((f) => f.endsWith('.js') && f !== path.join('client', 'gpu-links.js'))) {
    const text = fs.readFileSync(path.join(srcDir, file), 'utf8');
    // nodeGpus(gpu) without a link (one argument) is the GPU's server, not its link domain.
    for (const m of text.matchAll(/\bnodeGpus\(/g)) {
      let depth = 1, commas = 0, i = m.index + m[0].length;
      for (; i < text.length && depth > 0; i += 1) {
        if (text[i] === '(') depth += 1;
        else if (text[i] === ')') depth -= 1;
        else if (text[i] === ',' && depth === 1) commas += 1;
      }
      if (commas === 0) bare.push(`${file}: ${text.slice(m.index, i)}`);
    }
  }
  assert.deepEqual(bare, []);
});
