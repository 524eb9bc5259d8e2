// The page reads the engine's catalogue from build/web/registries.json, which
// web/build.mjs writes from the wasm module it ships and the native CLI. The
// file must be the engine's own answer: the native CLI's `sightline registries`,
// and the wasm module's listRegistries() but for the parameters' words, which
// ship in this file only (the module leaves them out).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { cliPath, loadWasm, repoRoot } from './wasm_module.mjs';
import { withoutParameterWords, WORD_KEYS } from '../../web/catalogue-words.mjs';

test('registries.json equals the CLI catalogue, and the wasm module\'s but for the words, which the module leaves out', async () => {
  const file = path.join(repoRoot, 'build', 'web', 'registries.json');
  assert.ok(fs.existsSync(file), `${file} is missing: run bash .ci/build`);
  const fromFile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const engine = await loadWasm();
  const envelope = JSON.parse(engine.listRegistries());
  assert.equal(envelope.ok, true);
  assert.deepEqual(withoutParameterWords(fromFile), envelope.result);
  assert.deepEqual(envelope.result.parameters.filter((p) => WORD_KEYS.some((k) => k in p)), [], 'the wasm module carries words');
  assert.ok(fromFile.parameters.filter((p) => p.label && p.help).length > 100, 'the file carries the words');
  const cli = spawnSync(cliPath, ['registries'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(cli.status, 0, cli.stderr);
  assert.deepEqual(fromFile, JSON.parse(cli.stdout));
  assert.ok(fromFile.metrics.length > 100 && fromFile.parameters.length > 100);
});

// presets.json, written the same way, gives the page its preset lists before its
// engine has loaded: it must be the engine's own lists, kind by kind.
test('presets.json equals the wasm module\'s preset lists', async () => {
  const file = path.join(repoRoot, 'build', 'web', 'presets.json');
  assert.ok(fs.existsSync(file), `${file} is missing: run bash .ci/build`);
  const fromFile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const { PRESET_KINDS } = await import(path.join(repoRoot, 'web', 'src', 'shared', 'protocol.js'));
  assert.deepEqual(Object.keys(fromFile), [...PRESET_KINDS]);
  const engine = await loadWasm();
  for (const kind of PRESET_KINDS) {
    const envelope = JSON.parse(engine.listPresets(kind));
    assert.equal(envelope.ok, true, kind);
    assert.deepEqual(fromFile[kind], envelope.result, kind);
    assert.ok(fromFile[kind].length > 0, kind);
  }
});
