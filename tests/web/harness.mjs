// Shared helpers of the page tests: the static server (web/serve.mjs) on a
// random port, Debian's headless Chromium via playwright-core, and the native
// CLI as the reference the page's numbers must equal.
import { spawn, spawnSync } from 'node:child_process';
import { before, after } from 'node:test';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const siteDir = path.join(repoDir, 'build', 'web');
export const cliPath = path.join(repoDir, 'build', 'sightline');

const requireFromWeb = createRequire(path.join(repoDir, 'web', 'package.json'));
const { chromium } = requireFromWeb('playwright-core');

// Every wait in the page tests is an outer guard only, never a judgement of
// speed (speed is web/budgets.mjs's job): a fresh-clone CI run at load 10-14
// stretches a 2 s wait past a minute, so the guards are generous and defined
// once, here (issue 34).
export const PAGE_GUARD_MS = 600000;

// Chromium 151 and later pre-render the address bar's popup (a WebUI page, in a renderer
// of its own) for every window, headless too, and every browser context the tests
// open is a new window: 0.7-1.0 s of CPU per context, measured from /proc beside
// the page's own ~2.2 s, on the same two cores (gotenberg/gotenberg#1656; Puppeteer
// turns both features off by default, puppeteer/puppeteer#15278). A visitor's browser
// pays it once per window, not once per page, so the tests turn it off.
const CHROMIUM_OWN_UI_FEATURES = ['WebUIOmniboxPopup', 'WebUIOmniboxAimPopup'];

/**
 * Playwright's own --disable-features list (chromiumSwitches.ts in playwright-core's
 * bundle). Chromium keeps only the last --disable-features it is given, so ours
 * must repeat Playwright's; read from the installed package, so an upgrade's list is
 * kept, and an error when the bundle no longer holds it where it did.
 */
function playwrightDisabledFeatures() {
  const bundle = fs.readFileSync(requireFromWeb.resolve('playwright-core/lib/coreBundle'), 'utf8');
  const list = bundle.match(/\bdisabledFeatures = \[([^\]]*)\]/);
  const names = list ? [...list[1].matchAll(/^\s*"([A-Za-z0-9]+)",?\s*$/gm)].map((m) => m[1]) : [];
  if (names.length < 5) throw new Error('tests/web/harness.mjs: Playwright\'s --disable-features list was not found in playwright-core/lib/coreBundle.js');
  return names;
}

export const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
  `--disable-features=${[...playwrightDisabledFeatures(), ...CHROMIUM_OWN_UI_FEATURES].join(',')}`,
];

export function checkBuilt() {
  for (const f of [path.join(siteDir, 'index.html'), path.join(siteDir, 'sightline.wasm'), cliPath]) {
    if (!fs.existsSync(f)) throw new Error(`${f} is missing: run \`bash .ci/build\` first`);
  }
}

/** Starts web/serve.mjs on a random port serving `dir` (the built site); resolves with {url, close()}. */
export async function startServer({ attempts = 5, dir = siteDir } = {}) {
  let lastError;
  for (let i = 0; i < attempts; i++) {
    const port = 20000 + Math.floor(Math.random() * 20000);
    try {
      return await startServerOn(port, dir);
    } catch (err) {
      lastError = err;  // most likely the port was taken: try another one
    }
  }
  throw lastError;
}

function startServerOn(port, dir) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoDir, 'web', 'serve.mjs'), dir, String(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`serve.mjs did not start within ${PAGE_GUARD_MS / 1000} s: ${err}`));
    }, PAGE_GUARD_MS);
    child.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/^Sightline: (http:\/\/127\.0\.0\.1:(\d+)\/)\n/);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1],
          port: Number(m[2]),
          firstLine: out.split('\n')[0],
          close: () => new Promise((r) => {
            if (child.exitCode !== null) return r();
            child.once('exit', r);
            child.kill('SIGTERM');
          }),
        });
      }
    });
    child.stderr.on('data', (d) => { err += d; });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve.mjs exited with ${code}: ${err}`));
    });
  });
}

export async function launchBrowser() {
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  // Every context (and so every page) the tests open waits up to the outer
  // guard, not Playwright's 30 s default.
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(PAGE_GUARD_MS);
    return context;
  };
  return browser;
}

/** A page that fails the test on uncaught page errors (collected in page.errors). */
export async function newPage(browser) {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(e.message));
  page.setDefaultTimeout(PAGE_GUARD_MS);
  return page;
}

// The CLI's output per scenario, for this file's process: the same scenario
// gives the same bytes (same scenario and seed, same result), so a file that
// asks for one preset's numbers in several tests (layout: I2.2; training:
// T2.3; tools: I1.1) simulates it once. Each call parses the bytes afresh, so
// a caller that edits its result changes no other test's.
const cliOutputs = new Map();

/** Runs the native CLI; `scenario` is a preset id or a scenario object. Returns the result object. */
export function cli(scenario) {
  const args = typeof scenario === 'string'
    ? ['run', '--preset', scenario, '--format', 'json']
    : ['run', '-', '--format', 'json'];
  const input = typeof scenario === 'string' ? '' : JSON.stringify(scenario);
  const key = `${args.join(' ')}\n${input}`;
  if (!cliOutputs.has(key)) {
    const r = spawnSync(cliPath, args, { input, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`sightline ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
    cliOutputs.set(key, r.stdout);
  }
  const parsed = JSON.parse(cliOutputs.get(key));
  return parsed.ok === true && parsed.result ? parsed.result : parsed;
}

/** The CLI's presets of one kind (models, gpus, …). */
export function cliPresets(kind) {
  const r = spawnSync(cliPath, ['presets', kind, '--format', 'json'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`sightline presets ${kind} failed: ${r.stderr}`);
  const list = JSON.parse(r.stdout);
  return list && list.ok === true ? list.result : list;
}

export function scenarioPreset(id) {
  const r = spawnSync(cliPath, ['presets', 'scenarios', '--format', 'json'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`sightline presets failed: ${r.stderr}`);
  let list = JSON.parse(r.stdout);
  if (list && list.ok === true) list = list.result;
  const found = list.find((s) => s.id === id);
  if (!found) throw new Error(`no scenario preset ${id}`);
  return found;
}

export const fixed3 = (x) => x.toFixed(3);

/** Waits until the page shows a finished run (of scenario `id`, when given). */
export async function waitDone(page, id) {
  const sel = id ? `#results[data-scenario="${id}"] #run-status[data-state="done"]` : '#run-status[data-state="done"]';
  await page.waitForSelector(sel);
}

/** The exact number (three decimals, data-value) behind the shown number of data-metric=key. */
export async function metric(page, key) {
  return page.getAttribute(`[data-metric="${key}"]`, 'data-value');
}

/** Types `value` into the field #id and fires its change event, as a person editing the form. */
export async function setField(page, id, value) {
  await page.fill(`#${id}`, String(value));
  await page.dispatchEvent(`#${id}`, 'change');
}

/** Every number a view shows (data-metric="<prefix>…"), by key. */
export async function viewMetrics(page, viewId, prefix) {
  return page.$$eval(`#${viewId} [data-metric^="${prefix}"]`,
    (els) => Object.fromEntries(els.map((e) => [e.dataset.metric, e.dataset.value])));
}

/**
 * A page of `suite` on the default scenario, ready for the Search tab, or null (the
 * test skipped) when this wasm module has no deployment search.
 */
export async function searchPage(t, suite) {
  const page = await newPage(suite.browser);
  await page.goto(suite.server.url);
  await waitDone(page);
  if (await page.isHidden('#mode-search')) {
    t.skip('this wasm module has no deployment search (api::search_plan / search_rank are not in wasm/bindings.cpp)');
    await page.close();
    return null;
  }
  return page;
}

/**
 * Opens the Search tab and sets its form: the selects of `choose` (id: value) first, the workload's
 * among them before the rest (it fills the form from its preset), then the inputs of `type` (id:
 * text), then only the GPU types of `gpus` ([id, $ per GPU-hour]) ticked, at those prices.
 */
export async function askQuestion(page, { choose = {}, type = {}, gpus = [] }) {
  await page.click('#mode-search');
  await page.waitForSelector('#panel-search:not([hidden]) #search-status', { state: 'attached' });
  for (const [id, value] of Object.entries(choose)) await page.selectOption(`#${id}`, value);
  for (const [id, text] of Object.entries(type)) await page.fill(`#${id}`, text);
  for (const box of await page.$$('#q-gpu-list input[type="checkbox"]')) await box.setChecked(false);
  for (const [gpu, price] of gpus) {
    await page.check(`#q-use-${gpu}`);
    await page.fill(`#q-price-${gpu}`, price);
  }
}

/**
 * The usual set-up of a page test file: checks the build, starts the server and
 * the browser before the tests and stops them after. Returns an object whose
 * `server` and `browser` are set once the tests run.
 */
export function browserSuite() {
  const suite = { server: null, browser: null };
  before(async () => {
    checkBuilt();
    suite.server = await startServer();
    suite.browser = await launchBrowser();
  });
  after(async () => {
    if (suite.browser) await suite.browser.close();
    if (suite.server) await suite.server.close();
  });
  return suite;
}
