#!/usr/bin/env node
// The canonical deployment-search question of the CLI's example
// (examples/search-llama3-70b.json: Llama-3-70B chat, 512-token prompts and
// 256-token outputs, 20 req/s, TTFT < 1 s and TPOT < 50 ms for 90% of requests
// jointly, i.e. P90; H100 SXM $3.0, H200 $3.8, A100-80G $1.8 per GPU-hour; TP
// 1/2/4/8; batch limits 64/128/256; chunked prefill on and off; up to 64 GPUs)
// asked on the real page in headless Chromium, on its worker pool. Prints the
// time estimate the page showed first, the time left it showed first and after a
// tenth of the runs against the time they then took, the time it took, and its answer, beside
// `sightline search` on the same question (natively, --jobs 2).
// A measurement people run by hand (minutes of CPU); CI runs a part of the same
// question (tests/web/search.test.mjs).
// Usage: node web/search-canonical.mjs   (needs `bash .ci/build` first)
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const webDir = path.dirname(fileURLToPath(import.meta.url));
const harness = await import(pathToFileURL(path.join(webDir, '..', 'tests', 'web', 'harness.mjs')).href);
const { decodeSearchLink } = await import(pathToFileURL(path.join(harness.siteDir, 'client', 'share.js')).href);

const server = await harness.startServer();
const browser = await harness.launchBrowser();
try {
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  page.setDefaultTimeout(30000);
  await page.goto(server.url);
  await page.waitForSelector('#run-status[data-state="done"]', { state: 'attached' });
  await page.click('#mode-search');
  await page.selectOption('#q-question', 'rate');
  await page.selectOption('#q-workload', 'I2.3');
  await page.selectOption('#q-model', 'llama-3-70b');
  for (const [id, v] of [['#q-rate', '20'], ['#q-max-gpus', '64'], ['#q-prompt', '512'], ['#q-output', '256'], ['#q-ttft', '1000'],
    ['#q-tpot', '50'], ['#q-attainment', '0.9'], ['#q-tp', '1, 2, 4, 8'], ['#q-seqs', '64, 128, 256']]) await page.fill(id, v);
  await page.selectOption('#q-ttft-pct', 'joint');
  await page.selectOption('#q-tpot-pct', 'joint');
  await page.selectOption('#q-chunked', 'both');
  const prices = new Map([['h100-sxm', '3.0'], ['h200', '3.8'], ['a100-80g-sxm', '1.8']]);
  for (const box of await page.$$('#q-gpu-list input[type="checkbox"]')) await box.setChecked(false);
  for (const [gpu, price] of prices) {
    await page.check(`#q-use-${gpu}`);
    await page.fill(`#q-price-${gpu}`, price);
  }
  await page.click('#search-share');
  const link = await page.inputValue('#search-share-text');
  const t0 = Date.now();
  await page.click('#search-run');
  await page.waitForSelector('#search-estimate:not([hidden]), #search-status[data-state="error"]', { timeout: 600000 });
  console.log(`estimate (shown after ${((Date.now() - t0) / 1000).toFixed(1)} s): ${await page.textContent('#search-estimate')}`);
  // The time left the status line shows first, and once a tenth of the runs have finished.
  const seconds = { s: 1, min: 60, h: 3600 };
  const shown = [];
  const phases = new Map();  // the status line's first word (Simulating, Ranking, Intervals) -> when first seen
  for (;;) {
    const state = await page.getAttribute('#search-status', 'data-state');
    if (state !== 'running') break;
    const text = await page.textContent('#search-status');
    const phase = text.split(/[ :]/)[0];
    if (!phases.has(phase)) phases.set(phase, Date.now());
    const m = /Simulating (\d+) \/ (\d+) .*about ([\d.,]+) (s|min|h) left/.exec(text);
    if (m) {
      const [done, n] = [Number(m[1]), Number(m[2])];
      const first = !shown.length;
      const tenth = done >= Math.ceil(n / 10) && !shown.some((x) => x.tenth);
      if (first || tenth) shown.push({ done, n, tenth, at: Date.now(), leftMs: Number(m[3].replace(/,/g, '')) * seconds[m[4]] * 1000 });
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  await page.waitForSelector('#search-status[data-state="done"], #search-status[data-state="error"]', { timeout: 3600000 });
  const end = Date.now();
  console.log(`phases: ${[...phases].map(([p, at]) => `${p} from ${((at - t0) / 1000).toFixed(1)} s`).join(', ')}, done at ${((end - t0) / 1000).toFixed(1)} s`);
  for (const x of shown) {
    console.log(`time left shown after ${x.done} / ${x.n} runs: ${(x.leftMs / 1000).toFixed(1)} s; it took ${((end - x.at) / 1000).toFixed(1)} s more (${(x.leftMs / (end - x.at)).toFixed(2)}x)`);
  }
  console.log(`page: ${await page.textContent('#search-status')} (${(await page.evaluate(() => window.sightlinePerf.lastSearchMs) / 1000).toFixed(1)} s, ` +
    `${await page.evaluate(() => navigator.hardwareConcurrency)} cores)`);
  console.log(`page answer: ${await page.textContent('#search-answer-text')}`);
  const err = await page.textContent('#search-error');
  if (err) console.log(`page error: ${err}`);
  const question = decodeSearchLink(link.slice(link.indexOf('#'))).question;
  delete question.workload_from;
  const t1 = Date.now();
  const r = spawnSync(harness.cliPath, ['search', '-', '--jobs', '2', '--format', 'json', '--max-work-units', '240000000'], { input: JSON.stringify(question), encoding: 'utf8', maxBuffer: 1 << 28 });
  const out = JSON.parse(r.stdout);
  const best = (out.ok === true ? out.result : out).cheapest_meeting_slo;
  console.log(`CLI (sightline search --jobs 2, ${((Date.now() - t1) / 1000).toFixed(1)} s): ${best ? `${best.deployment}, $${best.usd_per_million_tokens.toPrecision(3)} per million tokens` : 'no deployment meets the SLO'}; ` +
    `page's answer is candidate ${await page.getAttribute('#search-answer', 'data-candidate')}, the CLI's ${best ? best.candidate : 'none'}`);
} finally {
  await browser.close();
  await server.close();
}
