#!/usr/bin/env node
// Writes web/src/measured-errors.json: the end-to-end errors the engine's own
// check measures (`sightline report-e2e --check metric`, the presets/validation
// rows against published runs), by result kind and cost tier, and by kind and
// deployment class. The page's accuracy badge shows the entry of the result's
// kind and tier (its kind and class when the run is not a dense one), so the figure
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
/** {kind: {group: summary}} with the medians rounded to 0.01. */
function rounded(byKind) {
  const out = {};
  for (const [mode, groups] of Object.entries(byKind)) {
    out[mode] = {};
    for (const [group, s] of Object.entries(groups)) {
      out[mode][group] = {
        rows: s.rows,
        median_abs_error_pct: round2(s.median_abs_error_pct),
        median_signed_error_pct: round2(s.median_signed_error_pct),
      };
    }
  }
  return out;
}
const out = {
  source: 'sightline report-e2e --format json --check metric: presets/validation rows against published measurements, by result kind and cost tier, and by kind and deployment class (written by node web/measured-errors.mjs)',
  signed_error_definition: report.signed_error_definition,
  by_mode: rounded(report.summary.by_mode),
  // By kind and deployment class (dense, moe, moe_expert_parallel, moe_wide_ep,
  // disaggregated; every tier): the badge of a run that is not a dense one.
  by_layout: rounded(report.summary.by_mode_layout),
};
fs.writeFileSync(path.join(repoDir, 'web', 'src', 'measured-errors.json'), `${JSON.stringify(out, null, 1)}\n`);
