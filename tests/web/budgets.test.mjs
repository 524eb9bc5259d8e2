// The page's budgets, measured by web/budgets.mjs: compressed page + wasm
// ≤ 1.5 MB, first result of the default scenario ≤ 2 s after navigation, and a
// 10-point sweep, and a 10-point sweep of 1,000-request serving runs ≤ 5 s. The figures are printed as test diagnostics. Needs `bash .ci/build`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkBuilt, repoDir } from './harness.mjs';

test('budgets: size, first result, 10-point sweeps (latency and 1,000-request serving)', async (t) => {
  checkBuilt();
  const { measure, report, BUDGETS } = await import(pathToFileURL(path.join(repoDir, 'web', 'budgets.mjs')).href);
  const m = await measure({ runs: 3 });
  for (const line of report(m).split('\n').slice(-4)) t.diagnostic(line);
  assert.ok(m.size.totalGzip <= BUDGETS.gzipBytes, `compressed page + wasm ${m.size.totalGzip} B > ${BUDGETS.gzipBytes} B`);
  assert.ok(m.size.rows.some((r) => r.file === 'sightline.wasm') && m.size.rows.some((r) => r.file.startsWith('vendor/')));
  assert.ok(m.firstResultMedianMs <= BUDGETS.firstResultMs, `first result after ${m.firstResultMedianMs} ms`);
  assert.equal(m.sweep.points, 10);
  assert.ok(m.sweep.ms <= BUDGETS.sweepMs, `10-point sweep took ${m.sweep.ms} ms`);
  assert.equal(m.servingSweep.points, 10);
  assert.ok(m.servingSweep.ms <= BUDGETS.servingSweepMs, `10-point serving sweep took ${m.servingSweep.ms} ms`);
});
