// Issue 39: a result priced through a cluster calibration says "calibrated
// with NAME" wherever it is shown. The Result and Sweep tabs are
// calibrate.test.mjs's; here the Search tab (every candidate priced with the
// applied calibration, the answer says so) and embeds (priced with the
// calibration their own link carries, never the reader's). The calibration is
// the kind of object `sightline fit` writes, with hand-chosen factors (as in
// share.test.mjs): what is checked is that it reaches the runs.
// Needs `bash .ci/build` first.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { browserSuite, newPage, waitDone, siteDir, cli, scenarioPreset, fixed3 } from './harness.mjs';

const suite = browserSuite();
const CALIBRATION = {
  id: 'slow-cluster', source: 'hand-chosen factors (test)',
  factors: { compute_efficiency_scale: 0.5, memory_efficiency_scale: 0.5, comm_efficiency_scale: 1, host_us_per_step: 200 },
};
let share;
let buildQuestion;

before(async () => {
  share = await import(pathToFileURL(path.join(siteDir, 'client', 'share.js')).href);
  ({ buildQuestion } = await import(pathToFileURL(path.join(siteDir, 'client', 'search-question.js')).href));
});

const freshPage = () => newPage(suite.browser);  // its own context: its own localStorage

/** An embed's finished run of I1.4 (its run bar is not shown: the state is only attached, as in embed.test.mjs). */
const embedDone = (page) => page.waitForSelector('#results[data-scenario="I1.4"] #run-status[data-state="done"]', { state: 'attached' });

/** A small deployment search: Llama-2-7B on one A100 at 2 req/s, 300 requests of I2.2's shape. */
function smallQuestion() {
  const q = buildQuestion({
    workload: scenarioPreset('I2.2'), model: 'llama-2-7b', rate: '2', maxGpus: '1', ttftMs: '5000', tpotMs: '',
    gpus: [{ gpu: 'a100-80g-sxm', price: '1.8' }], maxNumSeqs: '64', chunked: 'off',
  });
  q.requests = 300;
  return q;
}

/** Runs the search of `hash` in a fresh browser; its chip ('' when hidden) and the answer's TTFT. */
async function searchAnswer(hash) {
  const page = await freshPage();
  await page.goto(`${suite.server.url}#${hash}`);
  // The page's first result (the default scenario's, behind the Search tab): init has shown the Search mode, if any.
  await page.waitForSelector('#run-status[data-state="done"]', { state: 'attached' });
  if (await page.isHidden('#mode-search')) {
    await page.context().close();
    return null;
  }
  await page.waitForSelector('#search-status[data-state="done"], #search-status[data-state="error"]');
  assert.equal(await page.getAttribute('#search-status', 'data-state'), 'done', await page.textContent('#search-status'));
  await page.waitForSelector('#search-answer:not([hidden])');
  const out = await page.evaluate(() => {
    const chip = document.getElementById('search-calibrated');
    // TTFT at the question's percentile (question_percentiles: P90 here, the default attainment 0.9).
    const ttft = document.querySelector('#search-answer-text [data-metric^="search_ttft_p"]');
    return { chip: chip.hidden ? '' : chip.textContent, ttft: ttft ? Number(ttft.dataset.value) : null };
  });
  assert.deepEqual(page.errors, []);
  await page.context().close();
  return out;
}

test('a search after applying a calibration prices every candidate with it and says "calibrated with NAME"', async (t) => {
  const q = smallQuestion();
  const plain = await searchAnswer(share.encodeSearchLink({ question: q }));
  if (!plain) {
    t.skip('this wasm module has no deployment search');
    return;
  }
  assert.equal(plain.chip, '', 'no calibration applied: nothing said');
  const calibrated = await searchAnswer(`${share.encodeSearchLink({ question: q })}&${share.encodeCalibrationLink(CALIBRATION)}`);
  assert.equal(calibrated.chip, 'calibrated with slow-cluster');
  assert.ok(Number.isFinite(plain.ttft) && Number.isFinite(calibrated.ttft));
  assert.ok(calibrated.ttft > plain.ttft, `half the kernel efficiency is slower: TTFT ${calibrated.ttft} vs ${plain.ttft} ms`);
});

test('an embed is priced with the calibration its link carries (the CLI\'s numbers), never with the reader\'s', async () => {
  const link = share.encodeLink({ preset: 'I1.4', overrides: {} });
  const context = await suite.browser.newContext();  // two pages sharing one localStorage
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  await page.goto(`${suite.server.url}?embed=1#${link}&${share.encodeCalibrationLink(CALIBRATION)}`);
  await embedDone(page);
  await page.waitForSelector('#calibrated-badge:not([hidden])');
  assert.equal(await page.textContent('#calibrated-badge'), 'calibrated with slow-cluster');
  const scenario = scenarioPreset('I1.4');
  scenario.cost_model = { ...(scenario.cost_model || {}), calibration: share.decodeCalibrationLink(`#${share.encodeCalibrationLink(CALIBRATION)}`) };
  const expected = cli(scenario);
  assert.equal(expected.calibration.id, 'slow-cluster');
  assert.equal(await page.getAttribute('#headline [data-headline="ttft_ms"]', 'data-value'), fixed3(expected.metrics.ttft_ms));
  // The embed keeps the calibration for its own runs: this browser has none applied.
  assert.equal(await page.evaluate(() => localStorage.getItem('sightline.calibration')), null);

  // The reader's applied calibration does not reach an embed whose link carries none.
  await page.evaluate((cal) => localStorage.setItem('sightline.calibration', JSON.stringify(cal)), CALIBRATION);
  const plain = await context.newPage();
  await plain.goto(`${suite.server.url}?embed=1#${link}`);
  await embedDone(plain);
  assert.equal(await plain.isHidden('#calibrated-badge'), true);
  assert.equal(await plain.getAttribute('#headline [data-headline="ttft_ms"]', 'data-value'), fixed3(cli('I1.4').metrics.ttft_ms));
  assert.deepEqual(page.errors, []);
  await context.close();
});

test('"Copy embed code" carries the applied calibration when "with calibration" is ticked', async () => {
  const page = await freshPage();
  await page.goto(`${suite.server.url}#${share.encodeLink({ preset: 'I1.4', overrides: {} })}&${share.encodeCalibrationLink(CALIBRATION)}`);
  await waitDone(page, 'I1.4');
  await page.waitForSelector('#calibrated-badge:not([hidden])');
  await page.click('#copy-embed');
  await page.waitForSelector('#share-box:not([hidden])');
  assert.doesNotMatch(await page.inputValue('#share-text'), /&amp;c1=|&c1=/, 'unticked: no calibration');
  await page.check('#share-calibration');
  await page.click('#copy-embed');
  await page.waitForFunction(() => /c1=/.test(document.getElementById('share-text').value));
  const src = (await page.inputValue('#share-text')).match(/src="([^"]+)"/)[1].replace(/&amp;/g, '&');
  assert.equal(share.decodeCalibrationLink(new URL(src).hash).id, 'slow-cluster');
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
