#!/usr/bin/env node
// Writes PNG screenshots of the main views to web/docs/ (committed, so reviewers
// can see the page; not part of the served page): result, training, sweep,
// compare, embed, the docs page, and each mode and the Search tab at 390 and 1366 px.
// Usage: node web/screenshots.mjs [out-dir=web/docs] [--modes]   (needs `bash .ci/build` first)
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const webDir = path.dirname(fileURLToPath(import.meta.url));
const { startServer, launchBrowser } = await import(path.join(webDir, '..', 'tests', 'web', 'harness.mjs'));
// --modes: only the 390 px and 1366 px images of each mode and of the Search tab (mode-*.png).
const modesOnly = process.argv.includes('--modes');
const outDir = path.resolve(process.argv.slice(2).find((a) => !a.startsWith('--')) || path.join(webDir, 'docs'));
const MAX_BYTES = 300 * 1024;

fs.mkdirSync(outDir, { recursive: true });
const server = await startServer();
const browser = await launchBrowser();
const written = [];

async function page(viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport, deviceScaleFactor: 1 });
  const p = await context.newPage();
  p.setDefaultTimeout(30000);
  return p;
}

async function shot(p, name, options = {}) {
  const file = path.join(outDir, `${name}.png`);
  await p.screenshot({ path: file, ...options });
  const size = fs.statSync(file).size;
  written.push([name, size]);
  if (size > MAX_BYTES) console.warn(`screenshots.mjs: ${name}.png is ${Math.round(size / 1024)} KiB (> ${MAX_BYTES / 1024} KiB)`);
}

const done = (p) => p.waitForSelector('#run-status[data-state="done"]', { state: 'attached' });

/**
 * The first screen of each mode (latency I1.4, serving simulation I2.5, training T2.3) and of the
 * Search tab answering the canonical question (Llama-3-70B at 20 req/s, P90 TTFT < 1 s and TPOT <
 * 50 ms, H200 TP4) at 390 px (a phone) and 1366 px (a laptop): mode-<mode>-<width>.png.
 */
async function modeShots() {
  const sizes = [[390, 844], [1366, 768]];
  const p = await page({ width: 1366, height: 768 });
  await p.goto(server.url);
  await done(p);
  for (const [mode, preset] of [['latency', 'I1.4'], ['simulate', 'I2.5'], ['training', 'T2.3']]) {
    await p.click(`#mode-${mode}`);
    await p.selectOption('#scenario', preset);
    await p.waitForSelector(`#results[data-scenario="${preset}"] #run-status[data-state="done"]`, { state: 'attached', timeout: 120000 });
    for (const [width, height] of sizes) {
      await p.setViewportSize({ width, height });
      await p.evaluate(() => window.scrollTo(0, 0));
      await p.waitForTimeout(300);  // charts redraw at the new width
      await shot(p, `mode-${mode}-${width}`);
    }
  }
  await p.setViewportSize({ width: 1366, height: 768 });
  await p.click('#mode-search');
  const set = async (id, v) => p.fill(id, v);
  await p.selectOption('#q-workload', 'I2.3');
  await p.selectOption('#q-model', 'llama-3-70b');
  for (const [id, v] of [['#q-rate', '20'], ['#q-max-gpus', '8'], ['#q-prompt', '512'], ['#q-output', '256'], ['#q-ttft', '1000'],
    ['#q-tpot', '50'], ['#q-attainment', '0.9'], ['#q-tp', '2, 4, 8'], ['#q-seqs', '256']]) await set(id, v);
  await p.selectOption('#q-ttft-pct', 'joint');
  await p.selectOption('#q-tpot-pct', 'joint');
  await p.selectOption('#q-chunked', 'on');
  for (const box of await p.$$('#q-gpu-list input[type="checkbox"]')) await box.setChecked(false);
  await p.check('#q-use-h200');
  await p.fill('#q-price-h200', '3.8');
  await p.click('#search-run');
  await p.waitForSelector('#search-status[data-state="done"]', { timeout: 600000 });
  for (const [width, height] of sizes) {
    await p.setViewportSize({ width, height });
    await p.waitForTimeout(300);
    // From the answer down: the question's form is the first thing above it.
    await p.$eval('#search-answer', (e) => e.scrollIntoView());
    await shot(p, `search-${width}`);
  }
  await p.context().close();
}

try {
  if (modesOnly) {
    await modeShots();
  } else {
  // Result view: Llama-2-70B on 4 A100s (I1.4).
  let p = await page();
  await p.goto(server.url);
  await done(p);
  await p.selectOption('#scenario', 'I1.4');
  await p.waitForSelector('#results[data-scenario="I1.4"] #run-status[data-state="done"]');
  // Down to the roofline (the operator table below it would push the PNG over 300 KiB).
  const roof = await p.$eval('[data-chart="roofline"]', (e) => e.getBoundingClientRect().bottom + window.scrollY);
  await shot(p, 'result', { fullPage: true, clip: { x: 0, y: 0, width: 1280, height: Math.ceil(roof + 16) } });

  // Training view: GPT-3 175B, PP=8 × DP=8, interleaved 1F1B (T2.3): the form, the headline, the
  // step-time breakdown and memory; then the pipeline timeline and the compared schedule.
  await p.selectOption('#scenario', 'T2.3');
  await p.waitForSelector('#results[data-scenario="T2.3"] #run-status[data-state="done"]');
  const cardsBottom = await p.$eval('[data-chart="train-memory"]', (e) => e.getBoundingClientRect().bottom + window.scrollY);
  await shot(p, 'training', { fullPage: true, clip: { x: 0, y: 0, width: 1280, height: Math.ceil(cardsBottom + 16) } });
  const pipeline = await p.$eval('[data-chart="timeline"]', (e) => {
    const r = e.getBoundingClientRect();
    return { x: r.left, y: r.top + window.scrollY, width: r.width, height: r.height };
  });
  const variants = await p.$eval('#train-compare-card', (e) => e.getBoundingClientRect().bottom + window.scrollY);
  await shot(p, 'training-pipeline', {
    fullPage: true,
    clip: { x: Math.floor(pipeline.x) - 8, y: Math.floor(pipeline.y) - 8, width: Math.ceil(pipeline.width) + 16, height: Math.ceil(variants - pipeline.y) + 16 },
  });

  // Serving simulation: chunked prefill near saturation (I2.5): the simulate form, the headline,
  // the TTFT / TPOT / E2E CDFs, and the percentile table; a second image has the time series and the busy time (one image would pass 300 KiB).
  await p.selectOption('#scenario', 'I2.5');
  await p.waitForSelector('#results[data-scenario="I2.5"] #run-status[data-state="done"]');
  const cdfBottom = await p.$eval('[data-chart="cdf-e2e"]', (e) => e.getBoundingClientRect().bottom + window.scrollY);
  await shot(p, 'serving', { fullPage: true, clip: { x: 0, y: 0, width: 1280, height: Math.ceil(cdfBottom + 16) } });
  // Then the time series (requests, batch, KV blocks, tokens per step) and the busy time.
  const series = await p.$eval('[data-chart="queue"]', (e) => {
    const r = e.getBoundingClientRect();
    return { x: r.left, y: r.top + window.scrollY };
  });
  const busy = await p.$eval('[data-chart="busy"]', (e) => {
    const r = e.getBoundingClientRect();
    return { right: r.right, bottom: r.bottom + window.scrollY };
  });
  await shot(p, 'serving-series', {
    fullPage: true,
    clip: { x: Math.floor(series.x) - 8, y: Math.floor(series.y) - 8, width: Math.ceil(busy.right - series.x) + 16, height: Math.ceil(busy.bottom - series.y) + 16 },
  });

  // Sweep: batch size 1..256 of I1.1, with the Pareto view.
  await p.selectOption('#scenario', 'I1.1');
  await p.waitForSelector('#results[data-scenario="I1.1"] #run-status[data-state="done"]');
  await p.click('#tab-sweep');
  await p.selectOption('#sweep-field', 'batch_size');
  await p.fill('#sweep-start', '1');
  await p.fill('#sweep-stop', '256');
  await p.fill('#sweep-steps', '9');
  await p.selectOption('#sweep-scale', 'log');
  await p.click('#sweep-run');
  await p.waitForSelector('#sweep-status[data-state="done"]');
  await shot(p, 'sweep', { fullPage: true });

  // Compare: I1.1 against the same scenario at batch 16.
  await p.click('#tab-result');
  await p.click('#pin');
  await p.fill('#batch_size', '16');
  await p.dispatchEvent('#batch_size', 'change');
  await p.waitForFunction(() => document.getElementById('compare-b-label').textContent.includes('batch_size 16'));
  await p.check('#compare-only-diff');
  await shot(p, 'compare', { fullPage: true });
  await p.context().close();

  // A phone (390×844): after a run the results come first, the form follows them.
  p = await page({ width: 390, height: 844 });
  await p.goto(`${server.url}`);
  await done(p);
  await p.selectOption('#scenario', 'I2.2');
  await p.waitForSelector('#results[data-scenario="I2.2"] #run-status[data-state="done"]');
  await shot(p, 'phone');
  await p.context().close();

  // Embed mode in a 600 px documentation column, as an iframe sized to its content shows it.
  p = await page({ width: 600, height: 760 });
  await p.goto(`${server.url}?embed=1&charts=families,roofline#v1=q1bKV7KqrtVRKlCyUvI01DNRqgUA`);
  await done(p);
  await shot(p, 'embed', { fullPage: true });
  await p.context().close();

  // The docs page with its embedded example.
  p = await page();
  await p.goto(`${server.url}docs.html`);
  const frame = await (await p.waitForSelector('iframe')).contentFrame();
  await done(frame);
  await p.waitForTimeout(300);  // embed.js sizes the iframe to its content
  const example = await p.$eval('#example', (e) => e.getBoundingClientRect().top + window.scrollY);
  const end = await p.$eval('#embed-example', (e) => e.getBoundingClientRect().bottom + window.scrollY);
  await shot(p, 'docs', { fullPage: true, clip: { x: 0, y: Math.floor(example) - 8, width: 1280, height: Math.ceil(end - example) + 24 } });
  await p.context().close();
  await modeShots();
  }
} finally {
  await browser.close();
  await server.close();
}
for (const [name, size] of written) console.log(`${path.relative(process.cwd(), path.join(outDir, `${name}.png`))}  ${Math.round(size / 1024)} KiB`);
