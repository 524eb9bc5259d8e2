// The Search tab reuses runs as `sightline search` does: its candidates run in
// rounds, and after each the engine (api::search_reuse, from each run's limit
// facts) names the candidates that take the run of a sibling differing only in
// batch limit, proven the same run. With reuse on and off (the form's "Reuse
// runs proven the same") the page gives the same answer and table; on, it
// simulates fewer deployments, as many fewer as the CLI reuses on the same
// question. Needs `bash .ci/build` first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { browserSuite, searchPage, askQuestion, siteDir, cliPath, PAGE_GUARD_MS } from './harness.mjs';

const suite = browserSuite();

/** Notes, in the page, each job its pool is given: whether it runs candidates, and how many runs. */
async function countPoolRuns(page) {
  await page.evaluate(async () => {
    const { EnginePool } = await import('./pool.js');
    window.poolJobs = [];
    const map = EnginePool.prototype.map;
    EnginePool.prototype.map = function (scenarios, options) {
      window.poolJobs.push({ candidate: Boolean(options.candidate), runs: scenarios.length });
      return map.call(this, scenarios, options);
    };
  });
}

/** Runs the question in the form; what the page answered and what it ran. */
async function search(page) {
  await page.evaluate(() => { window.poolJobs = []; });
  await page.click('#search-run');
  await page.waitForSelector('#search-status[data-state="done"], #search-status[data-state="error"]', { timeout: PAGE_GUARD_MS });
  assert.equal(await page.getAttribute('#search-status', 'data-state'), 'done', await page.textContent('#search-error'));
  return page.evaluate(() => ({
    rows: [...document.querySelectorAll('#search-table tbody tr')].map((tr) => tr.textContent),
    answer: document.getElementById('search-answer-text').textContent,
    best: document.getElementById('search-answer').dataset.candidate,
    reused: Number(document.getElementById('search-status').dataset.reused),
    simulated: window.poolJobs.filter((j) => j.candidate).reduce((a, j) => a + j.runs, 0),
    rounds: window.poolJobs.filter((j) => j.candidate).length,
    status: document.getElementById('search-status').textContent,
    ms: window.sightlinePerf.lastSearchMs,
  }));
}

/** The form's question as `sightline search` reads it, and the CLI's answer: its cheapest candidate and how many runs it reused. */
async function cliAnswer(page) {
  await page.click('#search-share');
  const link = await page.inputValue('#search-share-text');
  const { decodeSearchLink } = await import(pathToFileURL(path.join(siteDir, 'share.js')).href);
  const question = decodeSearchLink(link.slice(link.indexOf('#'))).question;
  delete question.workload_from;
  const cli = (format) => spawnSync(cliPath, ['search', '-', '--format', format], { input: JSON.stringify(question), encoding: 'utf8' });
  const json = cli('json');
  assert.equal(json.status, 0, json.stderr);
  const parsed = JSON.parse(json.stdout);
  const result = parsed.ok === true ? parsed.result : parsed;
  const table = cli('table');
  assert.equal(table.status, 0, table.stderr);
  const reused = /^reused: (\d+) of them/m.exec(table.stdout);
  return { best: result.cheapest_meeting_slo, candidates: result.ranked.length, reused: reused ? Number(reused[1]) : 0 };
}

/** The question asked with reuse on, then off: the same answer, the runs the CLI reuses not run. */
async function sameAnswerWithFewerRuns(t, page) {
  await countPoolRuns(page);
  const cli = await cliAnswer(page);
  assert.ok(cli.best, 'the CLI finds a deployment meeting the SLO');
  assert.ok(cli.reused > 0, 'the CLI reuses runs on this question');
  assert.equal(await page.isChecked('#q-reuse'), true, 'reuse is on by default');
  const on = await search(page);
  await page.setChecked('#q-reuse', false);
  const off = await search(page);
  t.diagnostic(`reuse on: ${on.simulated} of ${on.rows.length} deployments simulated in ${on.rounds} rounds, ${Math.round(on.ms)} ms; `
    + `off: ${off.simulated} in ${off.rounds}, ${Math.round(off.ms)} ms; CLI reused ${cli.reused}. ${on.status}`);
  assert.equal(off.reused, 0);
  assert.equal(off.simulated, off.rows.length, 'without reuse every deployment runs');
  assert.equal(on.reused, cli.reused, 'the page reuses the runs the CLI reuses');
  assert.equal(on.simulated, on.rows.length - on.reused, 'a deployment that took a run did not run');
  assert.ok(on.rounds >= 2, 'the largest batch limits first, then the siblings they do not settle');
  assert.match(on.status, new RegExp(`, ${on.reused} of them by the run of a sibling differing only in batch limit`));
  assert.deepEqual(on.rows, off.rows, 'the same ranked table');
  assert.equal(on.answer, off.answer);
  assert.equal(on.best, off.best);
  assert.equal(on.best, String(cli.best.candidate), 'the CLI\'s answer');
  assert.equal(on.rows.length, cli.candidates);
  assert.deepEqual(page.errors, []);
}

test('the canonical question over all its batch limits: the same answer with reuse on and off, fewer runs on', async (t) => {
  const page = await searchPage(t, suite);
  if (!page) return;
  // The canonical question (examples/search-llama3-70b.json) on H200 at TP4 up to 8 GPUs, at its three batch limits.
  await askQuestion(page, {
    choose: { 'q-question': 'rate', 'q-workload': 'I2.3', 'q-model': 'llama-3-70b', 'q-ttft-pct': 'joint', 'q-tpot-pct': 'joint', 'q-chunked': 'on' },
    type: { 'q-rate': '20', 'q-max-gpus': '8', 'q-prompt': '512', 'q-output': '256', 'q-ttft': '1000', 'q-tpot': '50', 'q-attainment': '0.9', 'q-tp': '4', 'q-seqs': '64, 128, 256' },
    gpus: [['h200', '3.8']],
  });
  await sameAnswerWithFewerRuns(t, page);
  await page.close();
});

test('a batch limit that binds: that sibling runs, the others take one run, the answer is the same', async (t) => {
  const page = await searchPage(t, suite);
  if (!page) return;
  // Llama-2-7B at 4 req/s within 2 H100s: 4 sequences at a time is too few (it runs, and misses the SLO); 64 and 256 never bind.
  await askQuestion(page, {
    choose: { 'q-question': 'rate', 'q-workload': 'I2.2', 'q-model': 'llama-2-7b', 'q-chunked': 'off' },
    type: { 'q-rate': '4', 'q-max-gpus': '2', 'q-ttft': '1000', 'q-tpot': '50', 'q-attainment': '0.9', 'q-tp': '1, 2', 'q-seqs': '4, 64, 256' },
    gpus: [['h100-sxm', '3']],
  });
  await sameAnswerWithFewerRuns(t, page);
  await page.close();
});
