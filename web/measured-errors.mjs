#!/usr/bin/env node
// Writes web/src/measured-errors.json: the end-to-end errors the engine's own
// check measures (`sightline report-e2e --check metric`, the presets/validation
// rows against published runs), by result kind and cost tier. The page's
// accuracy badge shows the entry of the result's kind and tier, so the figure
// it shows is one the engine computed, never a typed one. tests/cli/e2e.test.mjs
// fails when the file no longer matches the engine: after a model change, run
//   node web/measured-errors.mjs            (uses build/sightline)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const cli = process.argv[2] || path.join(repoDir, 'build', 'sightline');
let text;
try {
  text = execFileSync(cli, ['report-e2e', '--format', 'json', '--check', 'metric'], { maxBuffer: 64 << 20 }).toString();
} catch (e) {
  // report-e2e exits 1 when a row fails; its JSON still says which.
  text = e.stdout ? e.stdout.toString() : '';
}
const report = JSON.parse(text);
if (report.failed && report.failed.length) {
  console.error(`web/measured-errors.mjs: rows failed: ${JSON.stringify(report.failed)}`);
  process.exit(1);
}
const round2 = (x) => Math.round(x * 100) / 100;
const byMode = {};
for (const [mode, tiers] of Object.entries(report.summary.by_mode)) {
  byMode[mode] = {};
  for (const [tier, s] of Object.entries(tiers)) {
    byMode[mode][tier] = {
      rows: s.rows,
      median_abs_error_pct: round2(s.median_abs_error_pct),
      median_signed_error_pct: round2(s.median_signed_error_pct),
    };
  }
}
const out = {
  source: 'sightline report-e2e --format json --check metric: presets/validation rows against published measurements, by result kind and cost tier (written by node web/measured-errors.mjs)',
  signed_error_definition: report.signed_error_definition,
  by_mode: byMode,
};
fs.writeFileSync(path.join(repoDir, 'web', 'src', 'measured-errors.json'), `${JSON.stringify(out, null, 1)}\n`);
