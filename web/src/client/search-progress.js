// The Search tab's progress view: the time estimate shown before any candidate
// runs, the status line with the time left while they run, the best deployment
// so far and how many finished. The numbers are search-words.js's
// (estimateSearch, timeLeft, bestSoFar); the run itself is search.js's.
import { estimateSearch, timeLeft, deploymentName, bestSoFar, formatDuration } from './search-words.js';
import { POINT_BUDGET_MS } from './search-question.js';
import { display } from './format.js';
import { $ } from './dom.js';

/** Pareto points given an interval by their ordinary (three-bound) run when the ranking has none. */
export const MAX_INTERVAL_POINTS = 8;

export class SearchProgress {
  /** @param {import('./search.js').Search} search the tab, whose plan, pool and outcomes this view follows */
  constructor(search) {
    this.search = search;
    this.estimated = null;  // estimateSearch's figures of the search in flight
    this.shown = null;  // {span, detail}: the estimate's first range and its explanation, as shown
    this.bestIndex = null;  // the best candidate so far (showBest)
  }

  /**
   * The status line while candidates run: how many finished (those that took a sibling's run
   * among them) and, past the first finished ones, the time left from the runs so far (finished
   * and running; search-words.js timeLeft). `running()` lists the plan's candidates on a worker
   * now, `named` those handed to the pool (run, running or queued: each will run), `waited` those
   * of them named after their family's runs (search.js runCentral); the others not finished wait
   * on their family's runs, and some may take one. The estimate's box keeps the figures
   * (data-points-done, data-reused, data-left-ms: none yet) for the tests.
   */
  showRunning(running, named, waited) {
    const outcomes = this.search.outcomes;
    const n = this.search.scenarios.length;
    const done = outcomes.filter(Boolean).length;
    const reused = outcomes.filter((o) => o && o.reusedFrom !== undefined).length;
    const waiting = outcomes.flatMap((o, i) => (o || named.has(i) ? [] : [i]));
    const waitedNamed = [...waited].filter((i) => !outcomes[i]).length;
    const left = done && done < n && this.estimated
      ? timeLeft(this.estimated.pointLowMs, outcomes, { workers: this.search.pool.size, running: running(), intervalPoints: MAX_INTERVAL_POINTS, waiting, waitedNamed }) : null;
    const box = $('search-estimate');
    box.dataset.pointsDone = String(done);
    box.dataset.reused = String(reused);
    if (left === null) delete box.dataset.leftMs;
    else box.dataset.leftMs = String(Math.round(left));
    // Once runs are done, the estimate is theirs: one figure of the time left, the first range beside it.
    if (left !== null && this.shown) {
      const ran = done - reused;
      box.textContent = `Estimated time left: about ${formatDuration(left)}, from the ${ran} run${ran === 1 ? '' : 's'} done so far (before any ran: ${this.shown.span}). ${this.shown.detail}`;
    }
    const took = reused ? ` (${reused} by the run of a sibling proven the same)` : '';
    this.search.setStatus('running', `Simulating ${done} / ${n} deployments${took} on ${this.search.pool.size} workers…${left ? ` about ${formatDuration(left)} left, ranking included` : ''}`);
  }

  /**
   * The time estimate, before any candidate runs: the engine's work estimate of every candidate
   * (api::estimate_work, made on the pool's workers), each at the speed of its own probe on this
   * machine; shown as a range (search-words.js estimateSearch says what each end assumes).
   */
  async estimate(scenarios) {
    this.estimated = null;
    this.shown = null;
    this.bestIndex = null;
    const box = $('search-estimate');
    box.hidden = true;
    if (!scenarios.length) return;
    this.search.setStatus('running', `Estimating the work of ${scenarios.length} deployment${scenarios.length === 1 ? '' : 's'}…`);
    let estimates;
    try {
      estimates = await this.search.pool.each(scenarios, (client, s) => client.estimateWork(s, { centralOnly: true }));
    } catch (_) {
      return;  // e.g. a candidate is invalid on its own: no estimate, the search says why
    }
    const e = estimateSearch(estimates, { workers: this.search.pool.size, budgetMs: POINT_BUDGET_MS, intervalPoints: MAX_INTERVAL_POINTS });
    this.estimated = e;
    const n = scenarios.length;
    const requests = (k) => display(estimates.reduce((a, x) => a + x.requests[k], 0) / n);
    box.dataset.pointsDone = String(this.search.outcomes.filter(Boolean).length);
    box.dataset.lowMs = String(Math.round(e.lowMs));
    box.dataset.highMs = String(Math.round(e.highMs));
    const span = formatDuration(e.lowMs) === formatDuration(e.highMs) ? `about ${formatDuration(e.lowMs)}`
      : `from ${formatDuration(e.lowMs)} to ${formatDuration(e.highMs)}`;
    const detail = `${n} deployment${n === 1 ? '' : 's'} to simulate on ${this.search.pool.size} workers, `
      + `${formatDuration(e.candidates.lowMs)} at the fewest requests each can simulate (${requests('low')} on average: every verdict decided by its first run), `
      + `${formatDuration(e.candidates.highMs)} at the most (${requests('high')}: every undecided run grown to its cap); then the Pareto deployments run `
      + `again at the low and high cost bounds on one worker, ${formatDuration(e.ranking.lowMs)} for one to ${formatDuration(e.ranking.highMs)} `
      + `for ${Math.min(MAX_INTERVAL_POINTS, n)}. From the engine's work estimate of each deployment, at the speed its short probe ran at in this browser; `
      + 'once runs finish, the time left is theirs.';
    this.shown = { span, detail };
    box.textContent = `Estimated time: ${span}. ${detail}`;
    box.hidden = false;
  }

  /** Once the search is answered: the time it took beside the range first estimated (no time left to show). */
  finish(ms) {
    if (!this.shown) return;
    $('search-estimate').textContent = `Took ${formatDuration(ms)} (estimated before any ran: ${this.shown.span}). ${this.shown.detail}`;
  }

  /** While candidates run: the best one so far, by the engine's own order. */
  showBest() {
    const q = this.search.question;
    const prices = new Map(q.gpus.map((g) => [g.gpu, g.usd_per_hour]));
    const pools = (i) => this.search.scenarios[i].serving.cluster.pools;
    const gpusOf = (i) => pools(i).reduce((n, p) => n + p.replicas * p.tp * (p.pp || 1), 0);
    // Each pool at its own GPU's price (a mixed deployment's decode pool names its GPU).
    const usdOf = (i) => pools(i).reduce((usd, p) => usd + (prices.get(p.gpu || this.search.scenarios[i].hardware.gpu) || 0) * p.replicas * p.tp * (p.pp || 1), 0);
    const best = bestSoFar(this.search.outcomes, usdOf, gpusOf);
    const box = $('search-best');
    box.hidden = !best;
    if (!best) return;
    const s = this.search.scenarios[best.index];
    const [p, d] = pools(best.index);
    const row = { tp: p.tp, pp: p.pp || 1, replicas: p.replicas };
    if (d) Object.assign(row, { prefill_replicas: p.replicas, decode_replicas: d.replicas, decode_tp: d.tp });
    const adp = s.serving.moe && s.serving.moe.attention_data_parallel;
    if (adp > 1) Object.assign(row, { attention_data_parallel: adp, expert_parallel: s.serving.moe.expert_parallel });
    box.dataset.candidate = String(best.index);
    this.bestIndex = best.index;
    box.textContent = `Best so far: ${deploymentName(row, this.search.form.gpuName(s.hardware.gpu), this.search.form.gpuName((d && d.gpu) || s.hardware.gpu))}, $${display(best.usdPerHour)} per hour${best.qps ? ` at up to ${display(best.qps)} req/s` : ', meets the SLO'} (ranked with intervals when all finish).`;
  }

  /** While candidates run: how many finished. */
  drawPending() {
    const n = this.search.outcomes ? this.search.outcomes.filter(Boolean).length : 0;
    $('search-table-title').textContent = `Ranked deployments (${n} of ${this.search.scenarios.length} simulated; ranked when all finish)`;
  }
}
