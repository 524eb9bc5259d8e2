// Layout on phones, tablets and laptops: the form and the results never overlap
// (bounding boxes, at several scroll positions), the page never scrolls
// sideways, below 900 px the results come first once a run has finished, and
// at 1280 px no table or headline number is wider than its card. Headline
// numbers read with three significant digits in a scaled unit, with the 80%
// interval and the cost-tier badge beside them. Needs `bash .ci/build`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { browserSuite, cli, cliPresets, waitDone, PAGE_GUARD_MS } from './harness.mjs';

// The end-to-end errors the engine measured, as the page ships them (tests/cli/e2e.test.mjs keeps the file current).
const measuredFile = JSON.parse(readFileSync(new URL('../../web/src/client/measured-errors.json', import.meta.url), 'utf8'));
const LAYOUTS = { moe: 'MoE', moe_expert_parallel: 'MoE, expert parallel', moe_wide_ep: 'wide EP', disaggregated: 'disaggregated' };

/**
 * The badge's text for a CLI result: its tier, its kind, and the measured error
 * of that kind at that tier, or of that kind and deployment class for a run
 * that is not a dense one.
 */
function expectedBadge(result) {
  const tier = result.accuracy ? result.accuracy.tier : result.cost_tier;
  const layout = LAYOUTS[result.layout_class];
  const kind = { serving_latency: 'latency', serving_simulation: 'serving', training: 'training' }[result.kind];
  const mode = layout ? `${kind}, ${layout}` : kind;
  const e = layout ? (measuredFile.by_layout[result.kind] || {})[result.layout_class]
    : (measuredFile.by_mode[result.kind] || {})[result.cost_tier];
  if (!e) return `${tier} · ${mode}: ${layout ? 'no measured runs of this deployment kind' : 'no measured runs at this tier'}`;
  const pct = (x) => (Math.abs(x) >= 10 ? String(Math.round(x)) : x.toFixed(1));
  const s = e.median_signed_error_pct;
  const dir = Math.abs(s) < 0.5 ? 'no bias' : `${pct(Math.abs(s))}% ${s > 0 ? 'optimistic' : 'pessimistic'}`;
  return `${tier} · ${mode}: typically ${pct(e.median_abs_error_pct)}% off, ${dir}`;
}

/** Waits until the badge shows the measured error of `result`'s kind and tier. */
async function assertBadge(page, result) {
  const want = expectedBadge(result);
  await page.waitForFunction((w) => document.getElementById('accuracy-badge').textContent === w, want, { timeout: PAGE_GUARD_MS })
    .catch(() => {});
  assert.equal(await page.textContent('#accuracy-badge'), want);
}

const WIDTHS = [[360, 740], [390, 844], [768, 1024], [1280, 900]];
const SCENARIOS = ['I1.4', 'I2.2', 'T2.3'];  // latency, serving simulation, training

const suite = browserSuite();

/** Boxes of the form and the results in viewport coordinates at three scroll positions. */
function measureLayout() {
  const rect = (id) => {
    const b = document.getElementById(id).getBoundingClientRect();
    return { left: b.left, right: b.right, top: b.top + scrollY, bottom: b.bottom + scrollY, vtop: b.top, vbottom: b.bottom };
  };
  const overlaps = [];
  const max = document.documentElement.scrollHeight - innerHeight;
  for (const y of [0, Math.round(max / 2), max]) {
    window.scrollTo(0, y);
    const f = document.getElementById('scenario-form').getBoundingClientRect();
    const r = document.getElementById('results').getBoundingClientRect();
    const x = Math.min(f.right, r.right) - Math.max(f.left, r.left);
    const v = Math.min(f.bottom, r.bottom) - Math.max(f.top, r.top);
    if (x > 0.5 && v > 0.5) overlaps.push({ y, form: [f.left, f.top, f.right, f.bottom], results: [r.left, r.top, r.right, r.bottom] });
  }
  window.scrollTo(0, 0);
  const clipped = [];
  for (const e of document.querySelectorAll('#results table, #results .kpi-value')) {
    if (!e.offsetParent) continue;
    const card = e.closest('.card, .kpi') || e.parentElement;
    const cs = getComputedStyle(card);
    const inner = card.getBoundingClientRect().right - parseFloat(cs.paddingRight) - parseFloat(cs.borderRightWidth);
    if (e.getBoundingClientRect().right > inner + 1 || e.scrollWidth > e.clientWidth + 1) clipped.push(e.id || e.textContent.slice(0, 40));
  }
  return { form: rect('scenario-form'), results: rect('results'), overlaps, pageWidth: document.documentElement.scrollWidth, viewport: innerWidth, clipped };
}

for (const [width, height] of WIDTHS) {
  test(`${width}×${height}: form and results never overlap, nothing scrolls sideways${width >= 1280 ? ', no table or KPI clips' : ''}`, async () => {
    const context = await suite.browser.newContext({ viewport: { width, height } });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(suite.server.url);
    await waitDone(page);
    for (const id of SCENARIOS) {
      await page.selectOption('#scenario', id);
      await waitDone(page, id);
      const m = await page.evaluate(measureLayout);
      assert.deepEqual(m.overlaps, [], `${id}: form and results overlap`);
      assert.ok(m.pageWidth <= m.viewport, `${id}: the page is ${m.pageWidth} px wide in a ${m.viewport} px window`);
      if (width < 900) {
        assert.ok(m.results.bottom <= m.form.top, `${id}: after a run the results come before the form`);
        assert.ok(m.results.vtop < height, `${id}: the results start on the first screen`);
      } else {
        assert.ok(m.form.right <= m.results.left, `${id}: form and results side by side`);
      }
      if (width >= 1280) assert.deepEqual(m.clipped, [], `${id}: tables and KPIs fit their cards`);
    }
    if (width < 900) {
      await page.click('#edit-jump');
      await page.waitForFunction(() => document.getElementById('scenario-form').getBoundingClientRect().top < 50);
    }
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test('headline numbers: three significant digits, scaled units, the 80% interval and the tier badge', async () => {
  const context = await suite.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(suite.server.url);
  await page.selectOption('#scenario', 'I1.1');
  await waitDone(page, 'I1.1');
  const expected = cli('I1.1');
  const card = async (key) => page.$eval(`#latency-view [data-metric="${key}"]`, (e) => {
    const kpi = e.closest('.kpi');
    const interval = kpi.querySelector('.kpi-interval');
    return { text: e.textContent, unit: kpi.querySelector('.unit').textContent, interval: interval && !interval.hidden ? interval.textContent : null };
  });
  const sig = (x) => Number(x.toPrecision(3)).toString();
  // E2E is over a second: shown in seconds.
  const e2e = await card('e2e_ms');
  assert.equal(e2e.unit, 's');
  assert.equal(e2e.text, (expected.metrics.e2e_ms / 1000).toPrecision(3));
  const k = Array.isArray(expected.key_metrics) && expected.key_metrics.find((m) => m.id === 'e2e_ms' && Number.isFinite(m.low));
  const [lo, hi] = k ? [k.low, k.high] : expected.intervals_80.e2e_ms;
  assert.equal(e2e.interval, `80% interval ${(lo / 1000).toPrecision(3)}–${(hi / 1000).toPrecision(3)} s`);
  // TTFT stays in milliseconds, with three significant digits.
  const ttft = await card('ttft_ms');
  assert.equal(ttft.unit, 'ms');
  assert.equal(ttft.text, expected.metrics.ttft_ms.toPrecision(3));
  assert.match(ttft.interval, /^80% interval [\d.]+–[\d.]+ ms$/);
  // Throughput: tok/s with three significant digits (k tok/s from 1,000).
  const tput = await card('output_tokens_per_s');
  const t = expected.metrics.output_tokens_per_s;
  assert.deepEqual([tput.text, tput.unit], t >= 1000 ? [sig(t / 1000), 'k tok/s'] : [t.toPrecision(3), 'tok/s']);
  // The tier badge links to the accuracy page.
  const badge = await page.$eval('#accuracy-badge', (a) => ({ text: a.textContent, href: a.getAttribute('href'), hidden: a.hidden }));
  assert.equal(badge.hidden, false);
  assert.match(badge.text, new RegExp(expected.accuracy ? expected.accuracy.tier : expected.cost_tier));
  assert.match(badge.href, /^accuracy\.html#/);
  // It shows the end-to-end error measured for this kind of result at this tier, not the kernel-fit residual.
  await assertBadge(page, expected);
  assert.match(await page.textContent('#accuracy-badge'), /latency: typically [\d.]+% off, /);
  // Every chart says how to read it; the roofline names the dominant kernels.
  const cards = await page.$$eval('#latency-view [data-chart]', (els) => els.map((e) => Boolean(e.querySelector('.how-to-read'))));
  assert.ok(cards.length >= 3 && cards.every(Boolean), 'a how-to-read line on every chart');
  assert.match(await page.textContent('[data-chart="roofline"] .dominant'), /^Dominant kernels: prefill \S+ [\d.]+%.*; decode step \S+ [\d.]+%/);
  // The serving simulation: the P99 TTFT card is scaled too, and counts stay integers.
  await page.selectOption('#scenario', 'I2.2');
  await waitDone(page, 'I2.2');
  await assertBadge(page, cli('I2.2'));
  const shown = await page.$$eval('#serving-kpis [data-metric]', (els) => els.map((e) => [e.textContent, e.dataset.raw]));
  assert.ok(shown.length >= 4);
  for (const [text, raw] of shown) {
    if (Number.isInteger(Number(raw))) assert.match(text, /^-?\d{1,3}(,\d{3})*$/, `a count in full: ${text}`);
    else assert.equal(text.replace(/[^\d]/g, '').replace(/^0+/, '').length, 3, `three significant digits: ${text} (${raw})`);
  }
  // A training result: the badge says how far training runs typically are, and in which direction.
  await page.selectOption('#scenario', 'T2.3');
  await waitDone(page, 'T2.3');
  await assertBadge(page, cli('T2.3'));
  assert.match(await page.textContent('#accuracy-badge'), /training: typically [\d.]+% off, [\d.]+% (optimistic|pessimistic)/);
  // The DeepSeek-R1 wide-EP row: its badge gives the wide-EP runs' measured error, not the dense runs'.
  const wide = 'E.R3-dsr1-8xh200-maxthr';
  await page.selectOption('#scenario', wide);
  await waitDone(page, wide);
  const wideResult = cli(JSON.parse(readFileSync(new URL(`../../presets/validation/${wide}.json`, import.meta.url), 'utf8')).scenario);
  assert.equal(wideResult.layout_class, 'moe_wide_ep');
  await assertBadge(page, wideResult);
  assert.match(await page.textContent('#accuracy-badge'), /serving, wide EP: typically \d+% off, \d+% optimistic/);
  await context.close();
});

test('the help and accuracy pages are linked from the header and explain the tiers', async () => {
  const context = await suite.browser.newContext();
  const page = await context.newPage();
  await page.goto(suite.server.url);
  const links = await page.$$eval('header a', (as) => as.map((a) => a.getAttribute('href')));
  assert.ok(links.includes('help.html') && links.includes('accuracy.html'), links.join(', '));
  await page.goto(`${suite.server.url}accuracy.html`);
  for (const tier of ['target-measured', 'cross-generation', 'roofline']) assert.equal(await page.isVisible(`[id="${tier}"]`), true, tier);
  await page.goto(`${suite.server.url}help.html`);
  assert.match(await page.title(), /help/i);
  await context.close();
});

test('the first Tab stop skips the form: a visible link that moves focus to the results', async () => {
  const context = await suite.browser.newContext({ viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await page.goto(suite.server.url);
  await waitDone(page);
  await page.keyboard.press('Tab');
  const link = await page.evaluate(() => {
    const a = document.activeElement;
    const b = a.getBoundingClientRect();
    return { cls: a.className, href: a.getAttribute('href'), text: a.textContent, top: b.top, bottom: b.bottom };
  });
  assert.match(link.cls, /skip-link/, 'the first Tab stop is the skip link');
  assert.equal(link.href, '#results');
  assert.ok(link.top >= 0 && link.bottom <= 844, `the focused link is on screen: ${JSON.stringify(link)}`);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.activeElement && document.activeElement.id === 'results', null, { timeout: PAGE_GUARD_MS });
  await context.close();
});

test('a preset that reproduces a published measurement shows the prediction\'s error against it', async () => {
  const context = await suite.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(suite.server.url);
  await waitDone(page);
  const id = 'E.I-gf1-7b-tp1-bf16';
  await page.selectOption('#scenario', id);
  await waitDone(page, id);
  const records = cliPresets('validation');
  const record = records.find((r) => r.id === id);
  const predicted = cli(record.scenario).metrics[record.metric];
  const err = (predicted / record.measured - 1) * 100;
  const line = await page.$eval('#measured-check', (e) => ({ text: e.textContent, err: Number(e.dataset.errorPct), hidden: e.hidden }));
  assert.equal(line.hidden, false);
  assert.ok(Math.abs(line.err - err) < 1e-9, `${line.err} vs ${err}`);
  assert.match(line.text, new RegExp(`error ${err >= 0 ? '\\+' : '−'}${Number(Math.abs(err).toPrecision(3)).toFixed(Math.max(0, 2 - Math.floor(Math.log10(Math.abs(err)))))}%`));
  // A training run checked against torchtitan (its scenario is the V.TT1 preset).
  await page.selectOption('#scenario', 'V.TT1');
  await waitDone(page, 'V.TT1');
  assert.match(await page.textContent('#measured-check'), /^Published measurement \(TT1\): 2904 tok\/s\/GPU; predicted [\d,.]+ tok\/s\/GPU: error [+−][\d.]+%\.$/);
  // Editing the preset says the measurement no longer applies.
  await page.fill('#train_mbs', '2');
  await page.dispatchEvent('#train_mbs', 'change');
  await page.waitForFunction(() => /unedited preset/.test(document.getElementById('measured-check').textContent));
  await context.close();
});

test("people's words: GPU names (the custom GPU's own), shares in %, durations in a person's unit, rates per minute", async () => {
  const context = await suite.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(suite.server.url);
  await waitDone(page, 'I1.1');
  const gpuNames = new Map(cliPresets('gpus').map((g) => [g.id, g.name]));
  // Latency: "1 × NVIDIA A100 80GB SXM4", not the preset id.
  assert.match(await page.textContent('#summary'), new RegExp(`^Llama-2-7B .* on 1 × ${gpuNames.get('a100-80g-sxm')} ·`));
  // The custom GPU is called by the name the user gave it.
  await page.selectOption('#gpu', '__custom_gpu__');
  await page.fill('#cg_name', 'Lab accelerator X');
  await page.dispatchEvent('#cg_name', 'change');
  await page.waitForFunction(() => document.getElementById('run-status').dataset.state === 'done'
    && / on 1 × Lab accelerator X ·/.test(document.getElementById('summary').textContent));
  // A preset picker's rate below 0.1 req/s reads per minute (I3.3: one request a minute).
  assert.match(await page.$eval('#scenario option[value="I3.3"]', (o) => o.textContent), /, 1 req\/min · I3\.3$/);

  // Serving: the GPU's name, and a share (SLO attainment) as a percentage in its card and its table row.
  await page.selectOption('#scenario', 'I2.2');
  await waitDone(page, 'I2.2');
  const serve = cli('I2.2');
  assert.match(await page.textContent('#summary'), new RegExp(` on 1 × ${gpuNames.get('a100-80g-sxm')}: `));
  const att = await page.$eval('#serving-kpis [data-metric="serve.steady_slo_attainment"]', (e) => ({ text: e.textContent, unit: e.closest('.kpi').querySelector('.unit').textContent }));
  assert.deepEqual(att, { text: (serve.headline.slo_attainment / 0.01).toPrecision(3), unit: '%' });
  const busy = await page.$eval('[data-metric="serve.gpu.busy_fraction"]', (e) => ({ text: e.textContent, unit: e.closest('tr').querySelector('.unitcell').textContent }));
  assert.deepEqual(busy, { text: (serve.metrics.gpu.busy_fraction / 0.01).toPrecision(3), unit: '%' });

  // Training: 8B tokens on T3.4's 64 GPUs take hours, shown in hours (not 0.13 days).
  await page.selectOption('#scenario', 'T3.4');
  await waitDone(page, 'T3.4');
  assert.match(await page.textContent('#summary'), new RegExp(` on 64 × ${gpuNames.get('h100-sxm')} · `));
  await page.fill('#tokens_to_train', '8000000000');
  await page.dispatchEvent('#tokens_to_train', 'change');
  await page.waitForFunction(() => document.getElementById('run-status').dataset.state === 'done'
    && document.querySelector('#train-kpis [data-metric="train.time_to_train_days"]')?.closest('.kpi').querySelector('.unit').textContent === 'h');
  const scenario = (await import('./harness.mjs')).scenarioPreset('T3.4');
  scenario.training.tokens_to_train = 8e9;
  const run = cli(scenario).training_run;
  const days = run.time_days;
  assert.ok(days < 1 && days * 24 >= 1, `${days} days`);
  assert.equal(await page.textContent('#train-kpis [data-metric="train.time_to_train_days"]'), (days / (3.6e6 / 8.64e7)).toPrecision(3));
  // The run's hours in the throughput table read in hours too, and MFU vs HFU is explained where both show.
  const hours = await page.$eval('[data-metric="train.training_run.time_hours"]', (e) => [e.textContent, e.closest('tr').querySelector('.unitcell').textContent]);
  assert.deepEqual(hours, [run.time_hours.toPrecision(3), 'h']);
  assert.match(await page.textContent('#train-mfu-hfu'), /HFU also counts the FLOPs spent recomputing activations/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('every headline card of every mode carries its 80% interval, or the engine\'s reason why it has none', async () => {
  const context = await suite.browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(suite.server.url);
  await waitDone(page);
  const missing = [];
  const reasons = {};
  // I2.3: an overloaded run (no steady window: its cards show the whole run's goodput and attainment, 0 at every
  // cost bound); T2.3, training: memory per GPU.
  for (const id of [...SCENARIOS, 'I2.3', 'I4.2', 'E.R3-dsr1-8xh200-maxthr']) {
    await page.selectOption('#scenario', id);
    await waitDone(page, id);
    const cards = await page.$$eval('.kpi', (ks) => ks.filter((k) => k.offsetParent).map((k) => {
      const v = k.querySelector('.kpi-value [data-metric], .kpi-value [data-headline]');
      const line = k.querySelector(':scope > .kpi-interval');
      const shown = Boolean(line && !line.hidden && line.textContent.trim());
      return {
        key: k.dataset.catalogue || (v ? v.dataset.metric || v.dataset.headline : '?'),
        // A card with no figure (goodput without an SLO reads "—") has nothing to bound; a verdict card has its catalogue id.
        figure: k.dataset.catalogue ? true : Boolean(v && v.dataset.raw !== '' && Number.isFinite(Number(v.dataset.raw))),
        interval: shown && line.dataset.source !== 'none' && /^80% interval /.test(line.textContent),
        reason: shown && line.dataset.source === 'none' ? line.textContent : '',
      };
    }));
    assert.ok(cards.length >= 4, `${id}: ${cards.length} cards`);
    for (const c of cards) {
      if (c.reason) reasons[`${id}: ${c.key}`] = c.reason;
      else if (!c.interval && c.figure) missing.push(`${id}: ${c.key}`);
    }
  }
  assert.deepEqual(missing, [], 'every card shows an interval or a reason');
  // The reasons are the engine's (result.no_interval): an overloaded run's goodput and attainment (0 at
  // every cost bound), and memory, which no kernel's time moves.
  const same = /^No interval: the runs at the cost model's low and high bounds give the same figure$/;
  for (const key of ['I2.3: serve.goodput_requests_per_s', 'I2.3: serve.slo_attainment', 'T2.3: training/memory_per_gpu_GiB']) {
    assert.match(reasons[key] || '', same, key);
  }
  assert.deepEqual(Object.keys(reasons).filter((k) => !/^I2\.3: serve\.(goodput_requests_per_s|slo_attainment)$|memory_per_gpu_GiB$/.test(k)), [],
    `no other card goes without an interval: ${JSON.stringify(reasons)}`);
  assert.deepEqual(missing, []);
  await context.close();
});
