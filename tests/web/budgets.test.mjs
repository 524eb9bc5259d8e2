// The page's budgets, measured by web/budgets.mjs (the benchmark command that
// holds the timings to their budgets: `node web/budgets.mjs`). Here the size
// budget is asserted exactly (compressed bytes do not depend on load); the
// timings are benchmark figures, printed as test diagnostics and never judged
// here: CI runs on busy machines, where the wall clock says nothing about the
// page (issue 34). Needs `bash .ci/build`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkBuilt, repoDir } from './harness.mjs';

test('budgets: size; first result and 10-point sweeps measured and reported', async (t) => {
  checkBuilt();
  const { measure, report, BUDGETS, ON_DEMAND } = await import(pathToFileURL(path.join(repoDir, 'web', 'budgets.mjs')).href);
  const m = await measure({ runs: 3 });
  for (const line of report(m).split('\n').slice(-7)) t.diagnostic(line);
  // The first result asks for nothing the on-demand list names, and no request fails (no 404).
  assert.deepEqual(m.onDemandRequested, []);
  assert.deepEqual(m.failedRequests, []);
  assert.ok(m.size.totalGzip <= BUDGETS.gzipBytes, `compressed page + wasm ${m.size.totalGzip} B > ${BUDGETS.gzipBytes} B`);
  assert.ok(m.size.rows.some((r) => r.file === 'sightline.wasm') && m.size.rows.some((r) => r.file.startsWith('vendor/')));
  // The on-demand set names files the build writes (a renamed file would slip into neither list).
  assert.deepEqual(m.size.onDemand.map((r) => r.file).sort(), [...ON_DEMAND].sort());
  assert.ok(Number.isFinite(m.firstResultMedianMs) && m.firstResultMedianMs > 0);
  assert.equal(m.sweep.points, 10);
  assert.equal(m.servingSweep.points, 10);
});
