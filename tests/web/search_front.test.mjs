// The Search tab's Pareto chart draws the engine's front at the question's percentile (issue 39:
// "a P90 search shows P90"). The answer is the CLI's to a P90 question whose P90 front is not its
// P99 front (examples/search-llama3-70b-mixed-pools.json, 2.7 s of CPU natively); the page's
// answer view (web/src/client/search-answer.js) draws it in headless Chromium, and the red front must be
// the deployments that no other one meeting the SLO beats on $/Mtok and P90 TTFT.
// Needs `bash .ci/build` first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { browserSuite, searchPage, repoDir, cliPath } from './harness.mjs';

const suite = browserSuite();

/** The candidates of `rows` meeting the SLO that no other meeting one beats on $/Mtok and `key`, sorted. */
function frontOn(rows, key) {
  const ok = rows.filter((r) => r.meets_slo);
  const beats = (b, a) => b.usd_per_million_tokens <= a.usd_per_million_tokens && b[key] <= a[key]
    && (b.usd_per_million_tokens < a.usd_per_million_tokens || b[key] < a[key]);
  return ok.filter((a) => !ok.some((b) => beats(b, a))).map((r) => r.candidate).sort((x, y) => x - y);
}

test('a P90 question\'s chart draws the engine\'s P90 front, not the P99 one', async (t) => {
  const question = path.join(repoDir, 'examples', 'search-llama3-70b-mixed-pools.json');
  const cli = spawnSync(cliPath, ['search', question, '--format', 'json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.equal(cli.status, 0, cli.stderr);
  const out = JSON.parse(cli.stdout);
  const answer = out.ok === true ? out.result : out;
  assert.deepEqual(answer.question_percentiles, { ttft: 'p90', tpot: 'p90' });
  assert.equal(answer.pareto_axes[1], 'ttft_p90_ms');
  const p90 = frontOn(answer.ranked, 'ttft_p90_ms');
  const p99 = frontOn(answer.ranked, 'ttft_p99_ms');
  assert.notDeepEqual(p90, p99, 'the question tells the two fronts apart');
  assert.deepEqual(answer.ranked.filter((r) => r.pareto).map((r) => r.candidate).sort((x, y) => x - y), p90, 'the engine ranks its front on P90');

  const page = await searchPage(t, suite);
  if (!page) return;
  await page.click('#mode-search');
  await page.waitForSelector('#panel-search:not([hidden]) #chart-search-pareto', { state: 'attached' });
  const { base } = JSON.parse(fs.readFileSync(question, 'utf8'));
  const drawn = await page.evaluate(async ({ answer, base }) => {
    const { SearchAnswer } = await import('./client/search-answer.js');
    // The tab's state the chart reads: the question (its SLO bounds the axis) and the engine's answer.
    const view = new SearchAnswer({ answer, question: { base }, outcomes: null, scenarios: [] });
    view.drawChart(answer.ranked);
    const el = document.getElementById('chart-search-pareto');
    // The chart library loads on demand: wait for the chart, 20 s at the most (an empty chart draws none).
    const drawnChart = () => globalThis.Chart && el.querySelector('canvas') && globalThis.Chart.getChart(el.querySelector('canvas'));
    for (let waited = 0; !drawnChart() && waited < 20000; waited += 50) await new Promise((resolve) => { setTimeout(resolve, 50); });
    const chart = drawnChart();
    if (!chart) return { axis: el.dataset.axis, empty: el.dataset.empty, text: el.textContent };
    const front = chart.data.datasets.find((d) => /^Pareto front/.test(d.label));
    return {
      axis: el.dataset.axis,
      title: document.getElementById('search-pareto-title').textContent,
      xTitle: chart.options.scales.x.title.text,
      front: front.data.map((p) => [p.candidate, p.x]),
      intervals: Number(el.dataset.xIntervals),
      note: document.getElementById('search-pareto-note').textContent,
    };
  }, { answer, base });
  assert.equal(drawn.axis, 'ttft_p90_ms');
  assert.ok(drawn.front, `the chart was drawn: ${JSON.stringify(drawn)}`);
  assert.equal(drawn.title, '$ per million tokens vs P90 TTFT');
  assert.equal(drawn.xTitle, 'P90 TTFT (ms)');
  assert.deepEqual(drawn.front.map(([c]) => c).sort((x, y) => x - y), p90, `drawn front ${JSON.stringify(drawn.front)}`);
  for (const [c, x] of drawn.front) assert.equal(x, answer.ranked.find((r) => r.candidate === c).ttft_p90_ms, `candidate ${c} at its P90 TTFT`);
  assert.equal(drawn.intervals, p90.length, 'each front point carries the engine\'s 80% interval of its P90 TTFT');
  assert.match(drawn.note, /The engine ranks its front on the question's P90 TTFT/);
  assert.deepEqual(page.errors, []);
  await page.close();
});
