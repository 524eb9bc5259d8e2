// The shipped calibrations are reproducible from the data they are fitted on
// (the accuracy report's bounds are in accuracy_report.test.mjs: a file of
// its own, so that the two longest CLI tests run side by side in CI). Needs
// the shared data next to the repository (../shared/data), as CI has it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cliPath, repoRoot } from '../wasm/wasm_module.mjs';

const dataDir = path.resolve(repoRoot, '..', 'shared', 'data');
const skip = existsSync(dataDir) ? false : `shared data not found at ${dataDir}`;

function regenerated(script) {
  const out = mkdtempSync(path.join(tmpdir(), 'sightline-cal-'));
  execFileSync('bash', [path.join(repoRoot, script), cliPath, ...(script.includes('comm') ? [] : [dataDir]), out]);
  return out;
}

test('kernel calibrations regenerate byte for byte from the shipped data', { skip }, () => {
  const out = regenerated('presets/calibrations/regenerate.sh');
  const dir = path.join(repoRoot, 'presets', 'calibrations');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  assert.ok(files.length >= 5);
  for (const f of files) assert.equal(readFileSync(path.join(out, f), 'utf8'), readFileSync(path.join(dir, f), 'utf8'), f);
});

test('collective calibrations regenerate byte for byte', { skip }, () => {
  const out = regenerated('presets/comm_calibrations/regenerate.sh');
  const dir = path.join(repoRoot, 'presets', 'comm_calibrations');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  assert.ok(files.length >= 4);
  for (const f of files) assert.equal(readFileSync(path.join(out, f), 'utf8'), readFileSync(path.join(dir, f), 'utf8'), f);
});

test('the collective transfer error regenerates byte for byte from the collective CSVs', () => {
  const out = mkdtempSync(path.join(tmpdir(), 'sightline-cal-'));
  const data = path.join(repoRoot, 'presets', 'calibrations', 'data');
  const file = path.join(out, 'collectives.json');
  execFileSync(cliPath, ['calibrate-comm', '--csv', path.join(data, 'published_collectives.csv'),
    '--csv', path.join(data, 'vidur_a100_dgx_all_reduce.csv'), '--transfer-errors-out', file]);
  const shipped = path.join(repoRoot, 'presets', 'transfer_errors', 'collectives.json');
  assert.equal(readFileSync(file, 'utf8'), readFileSync(shipped, 'utf8'));
  const band = JSON.parse(readFileSync(shipped, 'utf8'));
  assert.ok(band.samples >= 50 && band.log_q10 < 0 && band.log_q90 > 0);
});
