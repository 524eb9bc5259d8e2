// The page's budgets, measured by web/budgets.mjs (the benchmark command that
// holds the timings to their budgets: `node web/budgets.mjs`). Here the size
// budget is asserted exactly (compressed bytes do not depend on load), and the
// timings only against SANITY_FACTOR x their budget: CI runs on busy machines,
// and a timing is a benchmark figure, not a correctness test. The figures are
// printed as test diagnostics. Needs `bash .ci/build`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkBuilt, repoDir } from './harness.mjs';

test('budgets: size, and first result and 10-point sweeps within a sanity bound', async (t) => {
  checkBuilt();
  const { measure, report, BUDGETS, SANITY_FACTOR } = await import(pathToFileURL(path.join(repoDir, 'web', 'budgets.mjs')).href);
  const m = await measure({ runs: 3 });
  for (const line of report(m).split('\n').slice(-4)) t.diagnostic(line);
  assert.ok(m.size.totalGzip <= BUDGETS.gzipBytes, `compressed page + wasm ${m.size.totalGzip} B > ${BUDGETS.gzipBytes} B`);
  assert.ok(m.size.rows.some((r) => r.file === 'sightline.wasm') && m.size.rows.some((r) => r.file.startsWith('vendor/')));
  assert.ok(m.firstResultMedianMs <= SANITY_FACTOR * BUDGETS.firstResultMs, `first result after ${m.firstResultMedianMs} ms`);
  assert.equal(m.sweep.points, 10);
  assert.ok(m.sweep.ms <= SANITY_FACTOR * BUDGETS.sweepMs, `10-point sweep took ${m.sweep.ms} ms`);
  assert.equal(m.servingSweep.points, 10);
  assert.ok(m.servingSweep.ms <= SANITY_FACTOR * BUDGETS.servingSweepMs, `10-point serving sweep took ${m.servingSweep.ms} ms`);
});
