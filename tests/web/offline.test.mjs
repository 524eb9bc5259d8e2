// Offline: after the first visit the service worker holds the versioned app, so
// a reload (and a share link) without network shows the engine's numbers; a new
// build replaces the old copy cleanly (one cache, the new version's). Runs on a
// copy of build/web so the new version can be made. Needs `bash .ci/build`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkBuilt, siteDir, startServer, launchBrowser, cli, fixed3, waitDone, metric, PAGE_GUARD_MS } from './harness.mjs';

let dir;
let server;
let browser;

before(async () => {
  checkBuilt();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sightline-offline-'));
  fs.cpSync(siteDir, dir, { recursive: true });
  server = await startServer({ dir });
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const versionOf = (file) => fs.readFileSync(file, 'utf8').match(/const VERSION = "([^"]+)"/)[1];
const cacheNames = (page) => page.evaluate(() => caches.keys());

test('a reload without network after the first visit works; a new version replaces the old', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(server.url);
  await page.selectOption('#scenario', 'I1.4');
  await waitDone(page, 'I1.4');
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null, null, { timeout: PAGE_GUARD_MS });
  const v1 = versionOf(path.join(dir, 'sw.js'));
  assert.deepEqual(await cacheNames(page), [`sightline-${v1}`]);
  const link = page.url();
  assert.match(link, /#v1=/);

  // No network: reload, then open the share link of another scenario.
  await context.setOffline(true);
  await page.reload();
  await waitDone(page, 'I1.4');
  assert.equal(await metric(page, 'ttft_ms'), fixed3(cli('I1.4').metrics.ttft_ms));
  await page.goto(`${server.url}?embed=1#v1=q1bKV7KqrtVRKlCyUvI01DNRqgUA`);
  await page.waitForSelector('#run-status[data-state="done"]', { state: 'attached' });
  assert.equal(await page.getAttribute('[data-headline="tpot_ms"]', 'data-value'), fixed3(cli('I1.4').metrics.tpot_ms));
  await context.setOffline(false);

  // A new build (its service worker differs): it takes over and only its cache remains.
  const swFile = path.join(dir, 'sw.js');
  fs.writeFileSync(swFile, fs.readFileSync(swFile, 'utf8').replace(`const VERSION = "${v1}"`, 'const VERSION = "test-v2"'));
  await page.goto(server.url);
  await page.waitForFunction(async () => {
    const names = await caches.keys();
    return names.length === 1 && names[0] === 'sightline-test-v2';
  }, null, { timeout: PAGE_GUARD_MS, polling: 200 });
  await page.reload();
  await waitDone(page, 'I1.4');
  assert.deepEqual(errors, []);
  await context.close();
});
