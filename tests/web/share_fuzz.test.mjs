// Fuzzes the share-link decoder of the real page in headless Chromium: seeded,
// deterministic mutations of valid links (characters, truncation, versions,
// lengths) and of their JSON payloads (forbidden keys, deep nesting, huge
// numbers, wrong types, HTML), decoded by the page's own share.js inside the
// browser. Every link must decode or throw the decoder's LinkError, never
// another exception. A sample is then opened as the page's hash: the page shows
// a scenario, a located engine error or the link notice, with no page error
// and no injected markup. Needs `bash .ci/build` first.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { checkBuilt, startServer, launchBrowser, PAGE_GUARD_MS } from './harness.mjs';
import { rng } from '../fuzz/mutate.mjs';

const LINKS = Number(process.env.SIGHTLINE_FUZZ_LINKS || 20000);
const NAVIGATIONS = Number(process.env.SIGHTLINE_FUZZ_NAVIGATIONS || 30);

let server;
let browser;

before(async () => {
  checkBuilt();
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.close();
});

test(`${LINKS} fuzzed share links decode or fail with a LinkError; sampled links open cleanly`, async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.setDefaultTimeout(PAGE_GUARD_MS);
  await page.goto(server.url);
  await page.waitForFunction(() => document.getElementById('summary')?.textContent.length > 0);

  // The mutation plan is made here (seeded), the decoding happens in the page.
  const r = rng(12);
  const plan = [];
  for (let i = 0; i < LINKS; i++) plan.push([r.int(1 << 30), r.int(12)]);
  const counts = await page.evaluate(async ({ plan }) => {
    const share = await import('./client/share.js');
    let seed = 1;
    const rand = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x80000000; };
    const pick = (a) => a[Math.floor(rand() * a.length)];
    const presets = ['I1.1', 'I2.1', 'T1.1', 'I5.3', null, 'no-such', '<b>x</b>'];
    const odd = [null, 0, -1, 1e308, 'é', '<img src=x onerror="window.pwned=1">', [], {}, true, '\ud800'];
    const deep = (n) => { let v = 1; for (let i = 0; i < n; i++) v = [v]; return v; };
    const out = { links: 0, decoded: 0, rejected: 0, otherErrors: 0, examples: [] };
    for (const [s, kind] of plan) {
      seed = s;
      const good = share.encodeLink({ preset: pick(presets), overrides: { title: pick(odd), serving: { workload: { batch_size: pick(odd) } } } });
      let link;
      switch (kind) {
        case 0: link = good.slice(0, Math.floor(rand() * good.length)); break;
        case 1: { const i = Math.floor(rand() * good.length); link = good.slice(0, i) + pick(['%', '=', '&', '#', 'é', '\u0000', '+', '/', 'v1=']) + good.slice(i + 1); break; }
        case 2: link = good.replace(/^v1/, pick(['v0', 'v2', 'v99999999999', 'v', 'V1', 'v1.0', 'v-1'])); break;
        case 3: link = good + '&' + pick(['v1=', 'v2=abc', 'x=1', '&&&', 'v1']); break;
        case 4: link = 'v1=' + 'A'.repeat(Math.floor(rand() * 40000)); break;
        case 5: link = share.encodeLink({ preset: 'I1.1', overrides: { ['__proto__']: { polluted: 1 }, a: { constructor: { prototype: 1 } } } }); break;
        case 6: link = share.encodeLink({ preset: 'I1.1', overrides: { title: deep(Math.floor(rand() * 100)) } }); break;
        case 7: link = share.encodeLink({ preset: pick(presets), overrides: pick(odd) }); break;
        case 8: link = 'v1=' + btoa(String.fromCharCode(...Array.from({ length: Math.floor(rand() * 200) }, () => Math.floor(rand() * 256)))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''); break;
        case 9: { const chars = good.split(''); for (let j = 0; j < 3; j++) chars[Math.floor(rand() * chars.length)] = pick(['A', '_', '-', 'z', '0']); link = chars.join(''); break; }
        case 10: link = share.encodeLink({ preset: 'I1.1', overrides: { serving: { workload: { num_requests: pick([1e400, -0, 2 ** 80, 1e-320]) } } } }); break;
        default: link = pick(['', '#', 'v1', 'v1==', 'hello', '%00', 'v1=%ZZ', '\ud83d']) + good.slice(0, Math.floor(rand() * 20));
      }
      out.links += 1;
      try {
        share.decodeLink('#' + link);
        out.decoded += 1;
      } catch (e) {
        if (e instanceof share.LinkError && typeof e.message === 'string' && e.message.length > 0) out.rejected += 1;
        else {
          out.otherErrors += 1;
          if (out.examples.length < 5) out.examples.push(`${e && e.name}: ${e && e.message} for ${link.slice(0, 80)}`);
        }
      }
    }
    out.polluted = ({}).polluted !== undefined;
    return out;
  }, { plan });
  console.log(`share-link fuzz: ${JSON.stringify(counts)}`);
  assert.equal(counts.links, LINKS);
  assert.equal(counts.otherErrors, 0, counts.examples.join('\n'));
  assert.equal(counts.polluted, false);
  assert.ok(counts.decoded > 0 && counts.rejected > 0, 'the cases cover both outcomes');

  // A sample opened as the page's own hash.
  for (let i = 0; i < NAVIGATIONS; i++) {
    const hash = await page.evaluate(async ({ i }) => {
      const s = await import('./client/share.js');
      const evil = '<img src=x id=injected onerror="window.pwned=1">';
      const variants = [
        s.encodeLink({ preset: 'I1.1', overrides: { title: evil, serving: { workload: { batch_size: i } } } }),
        s.encodeLink({ preset: 'I1.1', overrides: { serving: { workload: { output_tokens: -i } } } }),
        `v1=${'A'.repeat(i * 7)}`,
        s.encodeLink({ preset: evil, overrides: {} }),
        `v${i}=abc`,
      ];
      return variants[i % variants.length];
    }, { i });
    await page.evaluate((h) => { location.hash = h; }, hash);
    await page.waitForFunction(() => {
      const visible = (id) => { const el = document.getElementById(id); return el && !el.hidden; };
      return visible('link-notice') || visible('error') || document.getElementById('summary')?.textContent.length > 0;
    });
    assert.equal(await page.$('#injected'), null, hash);
  }
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.deepEqual(pageErrors, []);
  await context.close();
});
