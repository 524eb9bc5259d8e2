// What a page search did, in units of work, for the replays of search_replay.mjs:
// the 96-deployment question (tests/web/search.test.mjs, search_reuse.test.mjs),
// a recorder of the page's pool jobs, plan and reuse answers, and the replay's
// input made from them.
import assert from 'node:assert/strict';
import { askQuestion, searchPage, PAGE_GUARD_MS } from './harness.mjs';

/**
 * Sets the Search form to a question of 96 deployments that run in seconds each: Llama-2-7B (I2.2's
 * workload, 128-token prompts, 64-token outputs) at 80 req/s on A100, H100 or H200 at TP 1, 2 or 4, up
 * to 8 GPUs, batch limits 64 and 256, chunked prefill or not. In the page's central runs 82 meet the
 * SLO, each growing its run well past its first 1,000 requests (a median 12 times its estimate's low
 * end) until the verdict is decided; of the 14 that miss it, 8 stop after their first run.
 * `sightline search --jobs 1` on it: 9 s of CPU.
 */
export async function askNinetySixDeployments(page) {
  await askQuestion(page, {
    choose: { 'q-question': 'rate', 'q-workload': 'I2.2', 'q-model': 'llama-2-7b', 'q-chunked': 'both' },
    type: { 'q-rate': '80', 'q-max-gpus': '8', 'q-prompt': '128', 'q-output': '64', 'q-tp': '1, 2, 4', 'q-seqs': '64, 256' },
    gpus: [['a100-80g-sxm', '1.8'], ['h100-sxm', '3'], ['h200', '3.8']],
  });
}

/** A Search tab (harness searchPage: null when the suite skips) with the 96 deployments asked and recorded. */
export async function ninetySixPage(t, suite) {
  const page = await searchPage(t, suite);
  if (!page) return null;
  await askNinetySixDeployments(page);
  await recordSearchWork(page);
  return page;
}

/**
 * Notes, in the page, what its pool was given and gave back (pool.js and engine-client.js are the
 * page's own module instances): each candidate's work estimate (EnginePool.each), each job's runs
 * by index with the work they did (result.limits.events: the engine's units, the same in any
 * browser) and whether they met the SLO, and the order they were handed out in with how many of
 * the job's runs had finished then; the plan's candidates
 * (searchPlan), the engine's last reuse answer and how long each ask took, on the page's clock
 * (searchReuse); and every time left shown
 * (data-left-ms) with the runs finished then, on the page's clock. Read back with
 * `page.evaluate(() => window.searchWork)`; a new search starts a new record.
 */
export async function recordSearchWork(page) {
  await page.evaluate(async () => {
    const { EnginePool } = await import('./client/pool.js');
    const { EngineClient } = await import('./client/engine-client.js');
    const hook = (proto, name, after) => {
      const f = proto[name];
      proto[name] = function (...args) {
        const t0 = performance.now();
        const out = f.apply(this, args);
        Promise.resolve(out && out.promise ? out.promise : out).then((v) => after(v, performance.now() - t0), () => {});
        return out;
      };
    };
    hook(EnginePool.prototype, 'each', (e) => { window.searchWork.estimates = e; });
    hook(EngineClient.prototype, 'searchPlan', (plan) => { window.searchWork.plan = plan; });
    hook(EngineClient.prototype, 'searchReuse', (round, ms) => {
      window.searchWork.reuse = round;
      window.searchWork.asks.push(ms);
    });
    const stream = EnginePool.prototype.stream;
    EnginePool.prototype.stream = function (options) {
      const entry = { bounds: false, candidate: Boolean(options.candidate), order: [], finishedAtAdd: [] };
      let finished = 0;
      const onPoint = options.onPoint || (() => {});
      const job = stream.call(this, { ...options, onPoint: (...a) => { finished += 1; onPoint(...a); } });
      const add = job.add;
      job.add = (i, scenario, bound = null) => {
        entry.bounds = entry.bounds || Boolean(bound);
        entry.order.push(i);
        entry.finishedAtAdd.push(finished);
        return add(i, scenario, bound);
      };
      job.promise.then((outs) => {
        entry.runs = Array.from(outs, (o) => (o ? {
          events: o.result && o.result.limits ? o.result.limits.events : null,
          met: Boolean(o.result && o.result.steady_state && o.result.steady_state.meets_slo),
        } : null));
        window.searchWork.jobs.push(entry);
      }, () => {});
      return job;
    };
    const box = document.getElementById('search-estimate');
    new MutationObserver(() => {
      if (box.dataset.leftMs !== undefined) window.searchWork.shown.push({ done: Number(box.dataset.pointsDone), leftMs: Number(box.dataset.leftMs), text: box.textContent, at: performance.now() });
    }).observe(box, { attributes: true, attributeFilter: ['data-left-ms', 'data-points-done'] });
    const status = document.getElementById('search-status');
    new MutationObserver(() => {
      if (status.dataset.state !== 'running' && window.searchWork.endedAt === null) window.searchWork.endedAt = performance.now();
    }).observe(status, { attributes: true, attributeFilter: ['data-state'] });
  });
  await newRecord(page);
}

/** Runs the question in the form to its answer (recordSearchWork first); the record of it. */
export async function recordedSearch(page) {
  await newRecord(page);
  await page.click('#search-run');
  await page.waitForSelector('#search-status[data-state="done"], #search-status[data-state="error"]', { timeout: PAGE_GUARD_MS });
  assert.equal(await page.getAttribute('#search-status', 'data-state'), 'done', await page.textContent('#search-error'));
  return page.evaluate(() => window.searchWork);
}

/** Starts a new record for the next search (recordSearchWork's hooks stay). */
export function newRecord(page) {
  return page.evaluate(() => {
    window.searchWork = { estimates: null, jobs: [], shown: [], endedAt: null, plan: null, reuse: null, asks: [] };
  });
}

/**
 * The replay's input (search_replay.mjs) from a record: each candidate's estimate at one ms per
 * unit and its central run as long as its events (reused: its sibling's), then the ranking's bound
 * runs and the answer's interval runs. With reuse, `reuse` is {families, reusedFrom}: the plan's
 * candidates equal but for max_num_seqs, each family by batch limit from the largest, in the order
 * of their first candidate (search::seqs_families), and whose run each took.
 */
export function searchWork(rec) {
  const [central, ...later] = rec.jobs;
  const runOf = (i) => central.runs[i] || central.runs[rec.reuse.reused_from[i]];
  const bounds = later.find((j) => j.bounds) || { runs: [] };
  const work = {
    candidates: rec.estimates.map((e, i) => ({
      units_low: e.units.low, units_high: e.units.high, probe_units: e.probe.units, estimate_ms: e.probe.units,
      run_ms: runOf(i).events, meets_slo: runOf(i).met,
    })),
    intervals: Array.from({ length: bounds.runs.length / 2 }, (_, k) => ({ low_ms: bounds.runs[2 * k].events, high_ms: bounds.runs[2 * k + 1].events })),
    after_ms: later.filter((j) => !j.bounds).flatMap((j) => j.runs.map((r) => r.events)),
  };
  return { work, central, later, reuse: rec.reuse ? { families: familiesOf(rec.plan), reusedFrom: rec.reuse.reused_from } : null };
}

/** The plan's families (search::seqs_families): candidates equal but for max_num_seqs, from the largest. */
export function familiesOf(plan) {
  const scenarios = plan.scenarios || plan.candidates.map((c) => c.scenario);
  const seqs = (s) => s.serving.scheduler.max_num_seqs;
  const byKey = new Map();
  scenarios.forEach((s, i) => {
    const rest = structuredClone(s);
    delete rest.serving.scheduler.max_num_seqs;
    const key = JSON.stringify(rest);
    if (!byKey.has(key)) byKey.set(key, []);
    byKey.get(key).push(i);
  });
  return [...byKey.values()].map((f) => f.sort((a, b) => seqs(scenarios[b]) - seqs(scenarios[a]) || a - b));
}
