// The Calibrate tab (issue 37, point 4): a real benchmark result file dropped
// on the page is read by the engine, fitted on the form's scenario in the
// worker, applied; the calibration survives a reload, named, and prices the
// runs ("calibrated with NAME"); a share link carries it only when the user
// ticks it, and such a link applies it on open. Needs `bash .ci/build` first.
//
// The file: the summary of a vLLM 0.25.1 `vllm bench sweep` of facebook/opt-125m,
// two runs of 8 prompts, 32 in / 16 out, max_concurrency 2 (tests/data/bench/SOURCES.md,
// er0080_opt125m_sweep_seqs4_c2_summary.json: a fit needs more figures than
// factors, which one run does not give); the all-failed `bench serve` file of
// the same repository is refused.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import {
  browserSuite, newPage, waitDone, siteDir, repoDir, cliPath, metric, fixed3,
} from './harness.mjs';

const realDir = path.join(repoDir, 'tests', 'data', 'bench', 'real');
const RUN_FILE = 'er0080_opt125m_sweep_seqs4_c2_summary.json';
const FAILED_FILE = 'er0080_opt125m_all_failed_v0.25.1.json';
const BASE = 'I2.2';  // a serving scenario: a fit replays the runs as serving simulations

const suite = browserSuite();  // the server and Chromium, started and closed around the tests
let share;  // build/web/share.js, the page's own link codec

before(async () => {
  share = await import(pathToFileURL(path.join(siteDir, 'client', 'share.js')).href);
});

const freshPage = () => newPage(suite.browser);  // its own context: its own localStorage

/** Drops `names` (files of tests/data/bench/real) on the drop zone, as a drag from the desktop does. */
async function dropFiles(page, names) {
  const files = names.map((name) => ({ name, text: fs.readFileSync(path.join(realDir, name), 'utf8') }));
  const dataTransfer = await page.evaluateHandle((list) => {
    const dt = new DataTransfer();
    for (const f of list) dt.items.add(new File([f.text], f.name, { type: 'application/json' }));
    return dt;
  }, files);
  await page.dispatchEvent('#cal-drop', 'drop', { dataTransfer });
}

const chip = (page) => page.$eval('#calibrated-badge', (e) => (e.hidden ? '' : e.textContent));

/** Waits for a finished run of the form's scenario whose chip reads `text` ('' = no calibration). */
async function waitChip(page, text) {
  await page.waitForFunction((want) => {
    const done = document.getElementById('run-status').dataset.state === 'done';
    const c = document.getElementById('calibrated-badge');
    return done && (want ? !c.hidden && c.textContent === want : c.hidden);
  }, text);
}

let calibratedLink;
let plainLink;

test('a dropped real vLLM file is read, fitted in the worker, applied, and still applied and named after a reload', async () => {
  const page = await freshPage();
  await page.goto(suite.server.url);
  await waitDone(page, 'I1.1');
  await page.selectOption('#scenario', BASE);
  await waitDone(page, BASE);
  assert.equal(await chip(page), '', 'no calibration before one is applied');
  assert.equal(await page.isVisible('#share-calibration-row'), false, 'nothing to share yet');

  await page.click('#tab-calibrate');
  await page.waitForSelector('#cal-drop[data-ready="true"]');
  await dropFiles(page, [RUN_FILE, FAILED_FILE]);
  await page.waitForSelector(`.cal-file[data-file="${FAILED_FILE}"]`);
  await page.waitForSelector(`.cal-file[data-file="${RUN_FILE}"]`);

  // What was read: the tool, the load as vLLM applied it, the request count, the lengths, the metrics.
  const read = await page.$eval(`.cal-file[data-file="${RUN_FILE}"]`, (s) => ({
    state: s.dataset.state,
    rows: [...s.querySelectorAll('tbody tr')].map((tr) => ({ format: tr.dataset.format, load: tr.dataset.load, cells: [...tr.cells].map((c) => c.textContent) })),
  }));
  assert.equal(read.state, 'read');
  assert.equal(read.rows.length, 2);
  for (const [i, run] of read.rows.entries()) {
    assert.equal(run.format, 'vllm');
    assert.equal(run.load, 'closed_loop');
    assert.equal(run.cells[0], `/${i}`);
    assert.equal(run.cells[2], 'facebook/opt-125m');
    assert.equal(run.cells[3], 'closed loop, concurrency 2');
    assert.equal(run.cells[4], '8', 'completed requests');
    assert.equal(run.cells[5], 'prompt 32 tokens, output 16 tokens');
  }
  assert.match(read.rows[0].cells[6], /ttft_mean_ms 217\b/);
  assert.match(read.rows[0].cells[6], /tpot_mean_ms 8\.2/);
  assert.match(read.rows[1].cells[6], /ttft_mean_ms 39\.3/);
  // The file whose every request failed is refused, with the engine's reason.
  const refused = await page.$eval(`.cal-file[data-file="${FAILED_FILE}"]`, (s) => ({ state: s.dataset.state, text: s.textContent }));
  assert.equal(refused.state, 'refused');
  assert.match(refused.text, /Refused: .*fail/i);

  // The base is the form's scenario, said so; the user confirms before the fit.
  assert.match(await page.textContent('#cal-base'), new RegExp(`scenario in the form: ${BASE.replace('.', '\\.')}`));
  assert.equal(await page.isDisabled('#cal-fit'), true, 'no fit before the base is confirmed');
  await page.check('#cal-base-ok');
  await page.fill('#cal-name', 'lab-opt125m');
  await page.click('#cal-fit');
  await page.waitForFunction(() => ['done', 'error'].includes(document.getElementById('cal-status').dataset.state));
  assert.equal(await page.getAttribute('#cal-status', 'data-state'), 'done', await page.textContent('#cal-status'));
  assert.equal(await page.$eval('#cal-progress', (p) => p.value), 1);
  // Calibrated and uncalibrated error on every figure of every run.
  const rows = await page.$$eval('#cal-errors tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
  assert.equal(rows.length, 4, `TTFT and TPOT of each run: ${JSON.stringify(rows)}`);
  for (const r of rows) {
    assert.match(r[0], new RegExp(RUN_FILE.replace(/\./g, '\\.')));
    assert.match(r[5], /%$/);
    assert.match(r[6], /%$/);
  }
  assert.match(await page.textContent('#cal-summary'), /uncalibrated .*%, calibrated .*%/);

  await page.click('#cal-apply');
  await waitChip(page, 'calibrated with lab-opt125m');
  assert.equal(await page.inputValue('#cal-applied-name'), 'lab-opt125m');
  // The page's calibrated run is `sightline run --calibration` with the same file, to the digit.
  const stored = await page.evaluate(() => localStorage.getItem('sightline.calibration'));
  const calFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-cal-')), 'lab.json');
  fs.writeFileSync(calFile, stored);
  const r = spawnSync(cliPath, ['run', '--preset', BASE, '--calibration', calFile, '--format', 'json'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const expected = JSON.parse(r.stdout).result;
  assert.equal(expected.calibration.id, 'lab-opt125m');
  await page.click('#tab-result');
  assert.equal(await metric(page, 'serve.ttft_p99_ms'), fixed3(expected.metrics.ttft_ms.p99));
  await page.click('#tab-calibrate');

  await page.reload();
  await waitDone(page, BASE);
  await waitChip(page, 'calibrated with lab-opt125m');
  await page.click('#tab-calibrate');
  await page.waitForSelector('#cal-applied:not([hidden])');
  assert.equal(await page.inputValue('#cal-applied-name'), 'lab-opt125m', 'named after the reload');

  // Renamed: the runs report the new name.
  await page.fill('#cal-applied-name', 'lab opt-125m A100');
  await page.click('#cal-rename');
  await waitChip(page, 'calibrated with lab opt-125m A100');

  // The share link carries the calibration only when ticked.
  await page.click('#tab-result');
  assert.equal(await page.isVisible('#share-calibration-row'), true);
  assert.equal(await page.isChecked('#share-calibration'), false);
  await page.click('#copy-link');
  await page.waitForSelector('#share-box:not([hidden])');
  plainLink = await page.inputValue('#share-text');
  assert.equal(share.decodeCalibrationLink(new URL(plainLink).hash), null, `unticked: ${plainLink}`);
  await page.check('#share-calibration');
  await page.click('#copy-link');
  await page.waitForFunction(() => document.getElementById('share-text').value.includes('&c1='));
  calibratedLink = await page.inputValue('#share-text');
  const carried = share.decodeCalibrationLink(new URL(calibratedLink).hash);
  assert.equal(carried.id, 'lab opt-125m A100');
  // The four efficiency and host factors, and the per-request latency when the
  // fit found one (fit writes factors.request_latency_ms only then).
  const scales = ['comm_efficiency_scale', 'compute_efficiency_scale', 'host_us_per_step', 'memory_efficiency_scale'];
  assert.deepEqual(Object.keys(carried.factors).filter((k) => scales.includes(k)).sort(), scales);
  assert.deepEqual(Object.keys(carried.factors).filter((k) => !scales.includes(k) && k !== 'request_latency_ms'), []);
  assert.deepEqual(share.decodeLink(new URL(calibratedLink).hash), share.decodeLink(new URL(plainLink).hash),
    'the same scenario either way');

  // Removed: the runs are uncalibrated again and the option leaves the toolbar.
  await page.click('#tab-calibrate');
  await page.click('#cal-remove');
  await waitChip(page, '');
  assert.equal(await page.isVisible('#share-calibration-row'), false);
  assert.deepEqual(page.errors, []);
  await page.context().close();
});

test('a link that carries a calibration applies it on open and keeps it; one without does not', async () => {
  assert.ok(calibratedLink && plainLink, 'needs the links of the first test');
  const page = await freshPage();
  await page.goto(plainLink);
  await waitDone(page, BASE);
  await waitChip(page, '');
  await page.context().close();

  const opened = await freshPage();
  await opened.goto(calibratedLink);
  await waitDone(opened, BASE);
  await waitChip(opened, 'calibrated with lab opt-125m A100');
  assert.equal(await opened.evaluate(() => JSON.parse(localStorage.getItem('sightline.calibration')).id), 'lab opt-125m A100');
  await opened.reload();
  await waitDone(opened, BASE);
  await waitChip(opened, 'calibrated with lab opt-125m A100');
  assert.deepEqual(opened.errors, []);
  await opened.context().close();
});

test('the drop zone is a keyboard control: Enter opens the file chooser, whose files are read the same way', async () => {
  const page = await freshPage();
  await page.goto(suite.server.url);
  await waitDone(page, 'I1.1');
  await page.click('#tab-calibrate');
  await page.waitForSelector('#cal-drop[data-ready="true"]');
  // Focus and key in one step (page.press): under load a late re-render could
  // take the focus between a separate focus() and keyboard.press(), and the
  // test then waited for a chooser until the page guard (10 min).
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.press('#cal-drop', 'Enter')]);
  assert.equal(chooser.isMultiple(), true);
  await chooser.setFiles(path.join(realDir, FAILED_FILE));
  await page.waitForSelector(`.cal-file[data-file="${FAILED_FILE}"][data-state="refused"]`);
  assert.match(await page.textContent(`.cal-file[data-file="${FAILED_FILE}"]`), /\/completed/, 'the refusal is located');
  assert.equal(await page.getAttribute('#cal-files', 'id'), await page.getAttribute('label[for="cal-files"]', 'for'));
  assert.deepEqual(page.errors, []);
  await page.context().close();
});
