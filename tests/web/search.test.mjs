// The Search tab (deployment search in the page's worker pool): the question's
// share link round-trips; a page worker's central-only run equals the CLI's
// `run --central-only` byte for byte; and, with the engine's search API in the
// wasm module, a real search runs in headless Chromium, draws the Pareto chart
// and the ranked table, a clicked point opens as the current serving scenario,
// and the shared link (question + answer) reruns to the same answer.
// Needs `bash .ci/build` first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { browserSuite, newPage, waitDone, siteDir, cliPath, scenarioPreset } from './harness.mjs';

const suite = browserSuite();
const load = (file) => import(pathToFileURL(path.join(siteDir, file)).href);

test('a search question survives its share link; damaged links say why; scenario links ignore it', async () => {
  const share = await load('share.js');
  const { buildQuestion, formValuesOf, isQuestion, QuestionError } = await load('search-question.js');
  const q = buildQuestion({
    workload: scenarioPreset('I2.2'), model: 'llama-2-7b', rate: '4', maxGpus: '2', ttftMs: '2000', tpotMs: '',
    gpus: [{ gpu: 'a100-80g-sxm', price: '1.8', intra_node: 'nvlink3-nvswitch' }], maxNumSeqs: '64', chunked: 'off',
  });
  assert.equal(q.target_qps, 4);
  assert.equal(q.max_gpus, 2);
  assert.deepEqual(q.tp, [1, 2]);
  assert.deepEqual(q.base.serving.slo, { attainment: 0.99, ttft_ms: 2000 });
  assert.deepEqual(q.gpus, [{ gpu: 'a100-80g-sxm', usd_per_hour: 1.8, intra_node: 'nvlink3-nvswitch' }]);
  const answer = { deployment: 'a100-80g-sxm 1x(tp1) seqs 64', gpus: 1, usd_per_million_tokens: 1.25, ttft_p99_ms: 80, tpot_p99_ms: 20 };
  const link = share.encodeSearchLink({ question: q, answer });
  assert.match(link, /^s1=[A-Za-z0-9_-]+$/);
  const { question: back, answer: backAnswer } = share.decodeSearchLink(`#${link}`);
  assert.deepEqual(back, share.canonical(q));
  assert.deepEqual(backAnswer, share.canonical(answer));
  assert.equal(share.decodeSearchLink(`#${share.encodeSearchLink({ question: q })}`).answer, null);
  assert.ok(isQuestion(back));
  assert.deepEqual(formValuesOf(back), {
    model: 'llama-2-7b', rate: 4, maxGpus: 2, ttftMs: 2000, tpotMs: '', ttftPct: 'joint', tpotPct: 'joint', attainment: 0.99,
    gpus: [{ gpu: 'a100-80g-sxm', price: 1.8 }], maxNumSeqs: '64', chunked: 'off',
  });
  // The SLO object the serving form and the CLI take: a percentile per bound, the attainment for the joint ones.
  const slo = (over) => buildQuestion({
    workload: scenarioPreset('I2.2'), model: 'llama-2-7b', rate: '4', maxGpus: '2', ttftMs: '2000', tpotMs: '50',
    gpus: [{ gpu: 'a100-80g-sxm', price: '1.8' }], maxNumSeqs: '64', chunked: 'off', ...over,
  }).base.serving.slo;
  assert.deepEqual(slo({ ttftPct: 'p90', attainment: '0.9' }), { attainment: 0.9, ttft_ms: 2000, tpot_ms: 50, percentiles: { ttft: 'p90' } });
  assert.deepEqual(slo({ ttftPct: 'p99', tpotPct: 'p90', attainment: '0.9' }), { ttft_ms: 2000, tpot_ms: 50, percentiles: { ttft: 'p99', tpot: 'p90' } });
  const p90 = buildQuestion({
    workload: scenarioPreset('I2.2'), model: 'llama-2-7b', rate: '4', maxGpus: '2', ttftMs: '2000', tpotMs: '50', tpotPct: 'p90',
    gpus: [{ gpu: 'a100-80g-sxm', price: '1.8' }], maxNumSeqs: '64', chunked: 'off',
  });
  const p90Back = formValuesOf(share.decodeSearchLink(`#${share.encodeSearchLink({ question: p90 })}`).question);
  assert.deepEqual([p90Back.ttftPct, p90Back.tpotPct, p90Back.attainment], ['joint', 'p90', 0.99]);
  assert.equal(share.decodeLink(`#${link}`), null, 'a question alone is not a scenario link');
  assert.equal(share.decodeSearchLink('#v1=abc'), null);
  assert.throws(() => share.decodeSearchLink(`#${link.slice(0, 12)}`), share.LinkError);
  assert.throws(() => share.decodeSearchLink('#s2=AAAA'), /search format s2/);
  assert.throws(() => share.decodeSearchLink(`#${share.encodeSearchLink({ question: JSON.parse('{"base": {"prototype": 1}}') })}`), /forbidden key/);
  // Bad questions name the input at fault.
  const bad = (over, input) => assert.throws(() => buildQuestion({
    workload: scenarioPreset('I2.2'), model: 'llama-2-7b', rate: '4', maxGpus: '2', ttftMs: '2000', tpotMs: '',
    gpus: [{ gpu: 'a100-80g-sxm', price: '1.8' }], maxNumSeqs: '64', chunked: 'off', ...over,
  }), (e) => e instanceof QuestionError && e.input === input);
  bad({ rate: '0' }, 'q-rate');
  bad({ maxGpus: '2.5' }, 'q-max-gpus');
  bad({ ttftMs: '', tpotMs: '' }, 'q-ttft');
  bad({ gpus: [] }, 'q-gpus');
  bad({ gpus: [{ gpu: 'a100-80g-sxm', price: '' }] }, 'q-price-a100-80g-sxm');
  bad({ maxNumSeqs: '64, x' }, 'q-seqs');
  bad({ attainment: '1.5' }, 'q-attainment');
  bad({ workload: scenarioPreset('I1.1') }, 'q-workload');
});

test('a page worker runs a scenario at the central bound alone, byte-identical to `sightline run --central-only`', async () => {
  const scenario = scenarioPreset('I2.2');
  scenario.serving.workload.num_requests = 200;
  const r = spawnSync(cliPath, ['run', '-', '--central-only', '--format', 'json'], { input: JSON.stringify(scenario), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const native = JSON.parse(r.stdout);
  const page = await newPage(suite.browser);
  await page.goto(suite.server.url);
  await waitDone(page);
  const inPage = await page.evaluate((s) => new Promise((resolve, reject) => {
    const w = new Worker('worker.js');
    w.onmessage = ({ data }) => {
      if (data.type === 'READY') w.postMessage({ id: 1, type: 'RUN', payload: { scenario: s, centralOnly: true } });
      else if (data.type === 'RESULT') resolve(data.payload.result);
      else if (data.type === 'ERROR') reject(new Error(data.payload.message));
    };
  }), scenario);
  const nativeResult = native.ok === true ? native.result : native;
  assert.equal(inPage.intervals, 'central_only');
  assert.equal(JSON.stringify(inPage), JSON.stringify(nativeResult));
  assert.deepEqual(page.errors, []);
});

/**
 * Sets the Search form to a small question: Llama-2-7B on one A100 at 4 req/s (one candidate: each
 * candidate is a steady-state run of ~12k requests, and the ranking re-runs the Pareto points at the
 * low and high cost bounds, so a larger question would take minutes in CI).
 */
async function askSmallQuestion(page) {
  await page.click('#mode-search');
  await page.waitForSelector('#panel-search:not([hidden])');
  await page.selectOption('#q-workload', 'I2.2');
  await page.selectOption('#q-model', 'llama-2-7b');
  await page.fill('#q-rate', '4');
  await page.fill('#q-max-gpus', '1');
  await page.fill('#q-ttft', '2000');
  await page.fill('#q-tpot', '');
  // Judged alone at P99 (the one bound: the same share as a joint 99%), so the attainment does not apply.
  await page.selectOption('#q-ttft-pct', 'p99');
  assert.equal(await page.isDisabled('#q-attainment'), true);
  await page.fill('#q-seqs', '64');
  await page.selectOption('#q-chunked', 'off');
  for (const box of await page.$$('#q-gpu-list input[type="checkbox"]')) await box.setChecked(false);
  await page.check('#q-use-a100-80g-sxm');
  await page.fill('#q-price-a100-80g-sxm', '1.8');
}

async function searchOutcome(page) {
  return page.evaluate(() => ({
    rows: [...document.querySelectorAll('#search-table tbody tr')].map((tr) => tr.textContent),
    answer: document.getElementById('search-answer-text').textContent,
    best: document.getElementById('search-answer').dataset.candidate,
  }));
}

test('a deployment search runs in the worker pool: Pareto chart, ranked table, cheapest answer; a clicked point opens; the link reruns it', async (t) => {
  const page = await newPage(suite.browser);
  await page.goto(suite.server.url);
  await waitDone(page);
  if (await page.isHidden('#mode-search')) {
    t.skip('this wasm module has no deployment search (api::search_plan / search_rank are not in wasm/bindings.cpp yet)');
    return;
  }
  await askSmallQuestion(page);
  await page.click('#search-run');
  await page.waitForSelector('#search-status[data-state="done"], #search-status[data-state="error"]', { timeout: 300000 });
  assert.equal(await page.getAttribute('#search-status', 'data-state'), 'done', await page.textContent('#search-error'));
  const first = await searchOutcome(page);
  assert.ok(first.rows.length >= 1, 'the ranked table has rows');
  assert.equal(await page.getAttribute('#chart-search-pareto', 'data-empty'), 'false');
  assert.ok(await page.isVisible('#search-answer'));
  t.diagnostic(`search: ${first.rows.length} deployments in ${Math.round(await page.evaluate(() => window.sightlinePerf.lastSearchMs))} ms; answer: ${first.answer}`);

  // Click the first plotted point: it opens as the current serving scenario. The chart sits
  // below the fold: scroll it into view first, then take the point's viewport position.
  await page.locator('#chart-search-pareto canvas').scrollIntoViewIfNeeded();
  const hit = await page.evaluate(() => {
    const canvas = document.querySelector('#chart-search-pareto canvas');
    const chart = globalThis.Chart.getChart(canvas);
    for (let d = 0; d < 3; d++) {
      const el = chart.getDatasetMeta(d).data[0];
      if (el) {
        const box = canvas.getBoundingClientRect();
        return { x: box.left + el.x, y: box.top + el.y, candidate: chart.data.datasets[d].data[0].candidate };
      }
    }
    return null;
  });
  assert.ok(hit, 'the chart has a point');
  await page.mouse.click(hit.x, hit.y);
  await page.waitForSelector('#panel-result:not([hidden])');
  await page.waitForSelector('#mode-simulate[aria-selected="true"]');
  // The candidate's scenario (the question's base with this deployment) is the current scenario and runs
  // (its full run, with intervals, is left to finish on its own: a steady-state run of ~12k requests, three times).
  await page.waitForSelector('#run-status[data-state="running"], #run-status[data-state="done"]');
  assert.equal(await page.inputValue('#scenario'), '__custom__');
  assert.equal(await page.getAttribute('#mode-search', 'aria-selected'), 'false');
  assert.equal(await page.inputValue('#gpu'), 'a100-80g-sxm');
  assert.equal(await page.inputValue('#model'), 'llama-2-7b');
  assert.equal(Number(await page.inputValue('#sim_rate')), 4);
  t.diagnostic(`opened candidate ${hit.candidate}: ${await page.textContent(`#search-table tr[data-candidate="${hit.candidate}"] th`)}`);

  // The question's link, opened in a fresh context, reruns it to the same answer.
  await page.click('#tab-search');
  await page.click('#search-share');
  const link = await page.inputValue('#search-share-text');
  assert.match(link, /#s1=/);
  const other = await newPage(suite.browser);  // a fresh browser context
  await other.goto(link);
  await other.waitForSelector('#panel-search:not([hidden])');
  await other.waitForSelector('#search-status[data-state="done"]', { timeout: 300000 });
  assert.deepEqual(await searchOutcome(other), first);
  assert.equal(await other.getAttribute('#search-shared', 'data-same'), 'true', await other.textContent('#search-shared'));
  assert.equal(await other.inputValue('#q-rate'), '4');
  assert.equal(await other.inputValue('#q-ttft-pct'), 'p99', 'the SLO percentile comes back from the link');
  assert.equal(await other.isDisabled('#q-attainment'), true);
  assert.deepEqual(other.errors, []);
  assert.deepEqual(page.errors, []);
  await other.close();
});
