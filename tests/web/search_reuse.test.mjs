// The Search tab reuses runs as `sightline search` does: as each run finishes,
// the engine (api::search_reuse, from the runs' limit facts) names the
// candidates that take the run of a sibling differing only in batch limit,
// proven the same run, and each family's next run, which starts at once. With
// reuse on and off (the form's "Reuse runs proven the same") the page gives the
// same answer and table; on, it simulates fewer deployments, as many fewer as
// the CLI reuses on the same question. On the 96-deployment question, the work
// its runs did replayed: the workers' idle time and waits against the rounds'
// (a family's next run after every family's first), and the time left within
// 2x; and a cancel while its candidates run. Needs `bash .ci/build` first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { browserSuite, searchPage, askQuestion, siteDir, cliPath, PAGE_GUARD_MS } from './harness.mjs';
import { ninetySixPage, recordSearchWork, recordedSearch, searchWork, familiesOf } from './search_work.mjs';
import { replay, centralRuns } from './search_replay.mjs';

const suite = browserSuite();

/** Runs the question in the form; what the page answered and what it ran. */
async function search(page) {
  await recordedSearch(page);
  return page.evaluate(() => ({
    rows: [...document.querySelectorAll('#search-table tbody tr')].map((tr) => tr.textContent),
    answer: document.getElementById('search-answer-text').textContent,
    best: document.getElementById('search-answer').dataset.candidate,
    reused: Number(document.getElementById('search-status').dataset.reused),
    simulated: window.searchWork.jobs.filter((j) => j.candidate).reduce((a, j) => a + j.order.length, 0),
    jobs: window.searchWork.jobs.filter((j) => j.candidate),
    plan: window.searchWork.plan,
    status: document.getElementById('search-status').textContent,
    ms: window.sightlinePerf.lastSearchMs,
  }));
}

/** The form's question as `sightline search` reads it, and the CLI's answer: its cheapest candidate and how many runs it reused. */
async function cliAnswer(page) {
  await page.click('#search-share');
  const link = await page.inputValue('#search-share-text');
  const { decodeSearchLink } = await import(pathToFileURL(path.join(siteDir, 'client', 'share.js')).href);
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
  await recordSearchWork(page);
  const cli = await cliAnswer(page);
  assert.ok(cli.best, 'the CLI finds a deployment meeting the SLO');
  assert.ok(cli.reused > 0, 'the CLI reuses runs on this question');
  assert.equal(await page.isChecked('#q-reuse'), true, 'reuse is on by default');
  const on = await search(page);
  await page.setChecked('#q-reuse', false);
  const off = await search(page);
  t.diagnostic(`reuse on: ${on.simulated} of ${on.rows.length} deployments simulated, ${Math.round(on.ms)} ms; `
    + `off: ${off.simulated}, ${Math.round(off.ms)} ms; CLI reused ${cli.reused}. ${on.status}`);
  assert.equal(off.reused, 0);
  assert.equal(off.simulated, off.rows.length, 'without reuse every deployment runs');
  assert.equal(on.reused, cli.reused, 'the page reuses the runs the CLI reuses');
  assert.equal(on.simulated, on.rows.length - on.reused, 'a deployment that took a run did not run');
  assert.equal(on.jobs.length, 1, 'one job, its runs handed to it as the engine names them');
  const firsts = on.jobs[0].finishedAtAdd.filter((f) => f === 0).length;
  assert.equal(firsts, familiesOf(on.plan).length, 'each family\'s largest batch limit first');
  assert.ok(firsts < on.simulated, 'then the siblings they do not settle');
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

// The figure of issue 41's page reuse: the work each run did (its events) on the 96-deployment
// question, replayed on 2 to 4 workers as the page now hands runs out (a family's next run once
// its own previous one finished) and as the rounds did (once every family's had): worker time
// idle and the waits (a worker finding nothing to take while runs were still to be named).
test('the 96-deployment question with reuse: runs handed out per family, fewer waits than rounds, the time left within 2x', async (t) => {
  const page = await ninetySixPage(t, suite);
  if (!page) return;
  assert.equal(await page.isChecked('#q-reuse'), true);
  const rec = await recordedSearch(page);
  const { work, central, reuse } = searchWork(rec);
  const n = work.candidates.length;
  assert.equal(n, 96);
  const ran = central.order.length;
  const took = reuse.reusedFrom.filter((f) => f >= 0).length;
  assert.equal(ran + took, n, 'every deployment ran or took a run');
  assert.ok(took > 0, 'some take a run');
  // On the page: a family's next run was handed out while first runs were still to finish.
  const firsts = reuse.families.length;
  assert.equal(central.finishedAtAdd.slice(0, firsts).filter((f) => f === 0).length, firsts, 'each family\'s first run first');
  assert.ok(central.finishedAtAdd.slice(firsts).some((f) => f < firsts), 'a family\'s next run before every family\'s first finished');
  t.diagnostic(`the engine asked ${rec.asks.length} times which runs are settled and which run next (the rounds: once a round), `
    + `${Math.round(rec.asks.reduce((a, b) => a + b, 0))} ms in all on the page's clock, beside the runs`);
  const words = await import(pathToFileURL(path.join(siteDir, 'client', 'search-words.js')).href);
  const order = words.spreadOrder(reuse.families.length);
  const runMs = work.candidates.map((c) => c.run_ms);
  for (const workers of [2, 3, 4]) {
    const rounds = centralRuns({ ...reuse, runMs }, { workers, order, perFamily: false });
    const perFamily = centralRuns({ ...reuse, runMs }, { workers, order, perFamily: true });
    t.diagnostic(`${workers} workers, ${ran} runs of ${n}: idle ${Math.round(rounds.idle)} units (${(rounds.idle / (workers * rounds.end) * 100).toFixed(1)}%) and ${rounds.waits} waits in rounds, `
      + `${Math.round(perFamily.idle)} (${(perFamily.idle / (workers * perFamily.end) * 100).toFixed(1)}%) and ${perFamily.waits} per family; central runs end at ${Math.round(perFamily.end)} against ${Math.round(rounds.end)}`);
    assert.ok(perFamily.waits < rounds.waits, 'fewer waits than the rounds');
    for (const fraction of [0.1, 0.25, 0.5]) {
      const r = replay(words, work, { workers, order, fraction, reuse });
      // As before: the rounds, and the share of those waited that ran from the finished ones only.
      const finishedOnly = (p, d, o) => words.timeLeft(p, d, { ...o, waitedNamed: 0 });
      const before = replay(words, work, { workers, order, fraction, reuse, estimator: finishedOnly, perFamily: false });
      const ratio = r.estimateMs / r.actualMs;
      t.diagnostic(`  after ${r.finished} of ${n} done: ${Math.round(r.estimateMs)} units left estimated, ${Math.round(r.actualMs)} left (ratio ${ratio.toFixed(2)}; `
        + `per family with the share from finished ones only ${(replay(words, work, { workers, order, fraction, reuse, estimator: finishedOnly }).estimateMs / r.actualMs).toFixed(2)}; `
        + `before, in rounds, after ${before.finished}: ${(before.estimateMs / before.actualMs).toFixed(2)})`);
      assert.ok(ratio >= 0.5 && ratio <= 2, `${workers} workers, after ${r.finished} of ${n}: estimated ${Math.round(r.estimateMs)} units left, ${Math.round(r.actualMs)} were`);
    }
  }
  assert.deepEqual(page.errors, []);
  await page.close();
});

test('with reuse, a cancel while the candidates run stops the search; an ask out at the cancel changes nothing', async (t) => {
  const page = await ninetySixPage(t, suite);
  if (!page) return;
  await page.click('#search-run');
  // Past the first runs, so that the engine has been asked again and siblings may be on the pool.
  await page.waitForFunction(() => Number(document.getElementById('search-estimate').dataset.pointsDone) >= 6, null, { timeout: PAGE_GUARD_MS });
  await page.click('#search-cancel');
  await page.waitForSelector('#search-status[data-state="cancelled"]');
  const done = await page.evaluate(() => document.getElementById('search-estimate').dataset.pointsDone);
  // An ask out at the cancel returns within this (asks took 60-90 ms here): it settles, starts and shows nothing.
  await page.waitForTimeout(1000);
  assert.equal(await page.getAttribute('#search-status', 'data-state'), 'cancelled');
  assert.equal(await page.evaluate(() => document.getElementById('search-estimate').dataset.pointsDone), done);
  assert.deepEqual(page.errors, []);
  await page.close();
});
