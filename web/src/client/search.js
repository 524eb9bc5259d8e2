// The Search tab: the deployment search run on the page's worker pool. The
// engine plans the candidates (api::search_plan: the space, pruned by memory and
// analytic bounds), the pool runs each one at the central cost bound (bounded
// number of points, a time budget per point, cancellable), reusing runs as
// `sightline search` does: as each run finishes the engine says which candidates
// take the run of a sibling differing only in batch limit, proven the same run
// (api::search_reuse, from each run's limit facts), and which run next, and those
// start at once (runCentral); the engine names the
// runs its intervals need (api::search_intervals: the Pareto points at the low
// and high cost bounds), the pool runs those too, and the engine ranks them all
// (api::search_rank, which runs nothing: ranked table, Pareto front with
// intervals, the cheapest deployment meeting the SLO). A clicked point opens as the current
// scenario; the question travels in a share link (#s1=…).
//
// The tab's parts, one job each: search-form.js (the question view),
// search-progress.js (the estimate, time left and best so far while it runs),
// search-answer.js (the ranked answer, launch command, Pareto chart and table);
// this module runs the search and holds what the views show.
import { EnginePool } from './pool.js';
import { canonical } from './share.js';
import { inputForPath, isQuestion, QuestionError, MAX_SEARCH_POINTS, POINT_BUDGET_MS } from './search-question.js';
import { spreadOrder, formatDuration } from './search-words.js';
import { $, setRunStatus, showFormError } from './dom.js';
import { SearchForm } from './search-form.js';
import { SearchProgress, MAX_INTERVAL_POINTS } from './search-progress.js';
import { SearchAnswer, answerSummary, metricOf } from './search-answer.js';

/** The runnable candidate scenarios of a plan, in plan order. */
export function planScenarios(plan) {
  if (plan && Array.isArray(plan.scenarios)) return plan.scenarios;
  if (plan && Array.isArray(plan.candidates)) return plan.candidates.map((c) => c.scenario);
  return [];
}

/**
 * A candidate as the serving form shows it: its one pool of identical replicas as
 * serving.parallelism (the engine lays the GPUs out the same way, and TP and PP show
 * in their fields), and the request count its run was judged at (a run grown until
 * its verdict was decided starts there, so the form reads the figures the search did).
 */
export function asFormScenario(candidate, result) {
  const s = structuredClone(candidate);
  const cluster = s.serving && s.serving.cluster;
  const pools = cluster && Array.isArray(cluster.pools) ? cluster.pools : [];
  const hw = s.hardware || {};
  const plain = pools.length === 1 && Object.keys(pools[0]).every((k) => ['name', 'replicas', 'tp', 'pp'].includes(k))
    && pools[0].replicas * (pools[0].tp ?? 1) * (pools[0].pp ?? 1) === (hw.gpus_per_node ?? 1) * (hw.nodes ?? 1);  // every GPU in it
  if (plain && !s.serving.parallelism) {
    s.serving.parallelism = { tp: pools[0].tp ?? 1, pp: pools[0].pp ?? 1 };
    delete cluster.pools;
  }
  const grown = result && result.workload && result.workload.requests;
  const wl = s.serving && s.serving.workload;
  if (s.serving && s.serving.steady_state && wl && Number.isInteger(wl.num_requests) && Number.isInteger(grown) && grown > wl.num_requests) {
    wl.num_requests = grown;
  }
  return s;
}

export class Search {
  /**
   * @param {{workerUrl: URL, onOpen: (scenario: object, label: string) => void,
   *          onShare: (link: {question, answer}) => string, onDone?: (ms: number) => void,
   *          onModel?: (id: string) => void}} options
   *   onOpen loads a candidate as the current scenario; onShare returns the link of a question and its answer;
   *   onModel shows what the engine understood of the model chosen (on every change of it);
   *   getCalibration gives the applied cluster calibration every candidate is priced with (or null).
   */
  constructor({ workerUrl, onOpen, onShare, onDone = () => {}, onModel = () => {}, getCalibration = () => null }) {
    this.workerUrl = workerUrl;
    this.getCalibration = getCalibration;
    this.calibration = null;  // the calibration of the search in flight or on screen
    this.onOpen = onOpen;
    this.onShare = onShare;
    this.onDone = onDone;
    this.pool = null;
    this.job = null;
    this.question = null;
    this.scenarios = [];   // the plan's candidates, in plan order
    this.outcomes = null;  // their central runs, by plan index, as they finish
    this.answer = null;
    this.plan = null;     // the engine's plan of the question on screen (searchPlan)
    this.shared = null;  // {question, answer} of the shared link the form came from
    this.runId = 0;
    this.form = new SearchForm({ onModel });
    this.progress = new SearchProgress(this);
    this.answerView = new SearchAnswer(this);
  }

  /** Fills the question form from the engine's presets and wires the tab's buttons. */
  init(presets) {
    this.form.init(presets);
    this.answerView.init();
    $('search-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.run();
    });
    $('search-cancel').addEventListener('click', () => this.cancel());
    $('search-share').addEventListener('click', () => this.share());
  }

  /** Starts the workers ahead of the first search (called when the tab opens). */
  warm() {
    if (!this.pool) this.pool = new EnginePool(this.workerUrl);
    return this.pool.ready;
  }

  /**
   * Fills the form from a shared link's {question, answer}; false when the
   * question is not one this page made. The link's answer is shown beside the
   * one this page computes again.
   */
  fill({ question, answer }) {
    if (!isQuestion(question)) return false;
    this.shared = { question: canonical(question), answer };
    this.form.fill(question);
    return true;
  }

  setStatus(state, text) {
    setRunStatus('search', state, text);
  }

  showError(message, inputId) {
    showFormError('search', message, inputId);
  }

  /** The question in the form, or null after marking the input that cannot be read. */
  questionOrError() {
    try {
      const question = this.form.readQuestion();
      this.showError(null);
      return question;
    } catch (err) {
      if (!(err instanceof QuestionError)) throw err;
      this.showError(`Search question: ${err.message}.`, err.input);
      return null;
    }
  }

  async run() {
    if (this.job) return;
    const question = this.questionOrError();
    if (!question) return;
    const asked = JSON.stringify(canonical(question));
    if (this.shared && JSON.stringify(this.shared.question) !== asked) this.shared = null;  // the form was edited
    const runId = ++this.runId;
    const t0 = performance.now();
    this.question = question;
    this.calibration = this.getCalibration();  // one for the whole search, as `sightline search` with a calibrated base
    const calibration = this.calibration;
    this.answer = null;
    this.plan = null;
    this.scenarios = [];
    $('search-share-box').hidden = true;
    $('search-estimate').hidden = true;
    $('search-best').hidden = true;
    $('search-progress').value = 0;
    this.job = { cancel: () => false };  // until the pool job exists
    this.setStatus('running', 'Planning the candidates…');
    this.draw();
    try {
      await this.warm();
      const planner = this.pool.clients[0];
      const engineQuestion = { ...question };
      delete engineQuestion.workload_from;  // the page's own note of the form's workload
      const plan = await planner.searchPlan(engineQuestion);
      if (runId !== this.runId) return;
      this.plan = plan;  // its question_latencies head the table and the chart while the runs go on
      const scenarios = planScenarios(plan);
      if (scenarios.length > MAX_SEARCH_POINTS) {
        throw Object.assign(new Error(`${scenarios.length} deployments survive pruning; the page simulates at most ${MAX_SEARCH_POINTS}: lower the GPU budget, or try fewer GPU types or batch limits (\`sightline search\` has no such bound)`), { code: 'limit_exceeded', path: '/max_gpus' });
      }
      this.scenarios = scenarios;
      this.outcomes = new Array(scenarios.length).fill(null);
      // The time estimate comes first, before any candidate runs.
      await this.progress.estimate(scenarios);
      if (runId !== this.runId) return;
      const outcomes = await this.runCentral(engineQuestion, scenarios, { reuse: $('q-reuse').checked, calibration, runId });
      if (runId !== this.runId) return;
      const best = this.progress.bestIndex !== null && this.outcomes[this.progress.bestIndex];
      const results = outcomes.map((o) => (o.result ? o.result : { error: o.error }));
      // The engine names the runs its intervals need (the Pareto points at the
      // low and high cost bounds); they run as sliced jobs on the pool, so they
      // report progress and take a cancel; the ranking itself runs nothing.
      const { points = [] } = await planner.searchIntervals(engineQuestion, results);
      if (runId !== this.runId) return;
      this.setStatus('running', `Ranking: ${points.length / 2} Pareto deployment${points.length === 2 ? '' : 's'} run again at the low and high cost bounds${best ? `, about ${formatDuration(best.ms)} a run` : ''}…`);
      $('search-progress').value = 0;
      const boundJob = this.pool.map(points.map((p) => p.scenario), {
        bounds: points.map((p) => p.bound),
        calibration,
        budgetMs: POINT_BUDGET_MS,
        onProgress: (p) => { $('search-progress').value = p; },
      });
      this.job = boundJob;
      const boundOutcomes = await boundJob.promise;
      if (runId !== this.runId) return;
      const boundResults = boundOutcomes.map((o) => (o.result ? o.result : { error: o.error }));
      const answer = await planner.searchRank(engineQuestion, results, boundResults);
      if (runId !== this.runId) return;
      await this.addFrontIntervals(answer);
      if (runId !== this.runId) return;
      this.answer = answer;
      $('search-best').hidden = true;
      const ms = performance.now() - t0;
      this.progress.finish(ms);
      $('search-progress').value = 1;
      const reused = outcomes.filter((o) => o.reusedFrom !== undefined).length;
      $('search-status').dataset.reused = String(reused);
      this.setStatus('done', `${scenarios.length} deployments simulated in ${(ms / 1000).toFixed(1)} s${reused ? `, ${reused} of them by the run of a sibling differing only in batch limit, proven the same run` : ''}`);
      this.onDone(ms);
    } catch (err) {
      if (runId !== this.runId) return;
      if (err && err.code === 'cancelled') this.setStatus('cancelled', 'Search cancelled');
      else {
        this.showError(`The search could not run: ${err.code ? `${err.code}${err.path ? ` at ${err.path}` : ''}: ` : ''}${err.message}`, inputForPath(err.path));
        this.setStatus('error', 'Error');
      }
    } finally {
      if (runId === this.runId) this.job = null;
      this.draw();
    }
  }

  /**
   * Every candidate's central outcome, in plan order, run on the pool as the engine names the runs:
   * from the runs finished so far (their limit facts) it names the candidates that take the run of a
   * sibling differing only in batch limit, proven the same run, and each family's next run
   * (api::search_reuse, one round of `sightline search`). It is asked again as each run finishes, and
   * the runs it names that are not on the pool yet join the job at once: a family's next run starts
   * when its own previous run finished, not when every family's did (each family's settling reads only
   * its own runs, so the answer is the rounds'). A run named after the first ask `waited` on its
   * family's; an outcome that took a run is its sibling's, with reusedFrom and no time of its own.
   * Without `reuse`, one job of every candidate (`sightline search --no-reuse`).
   */
  async runCentral(question, scenarios, { reuse, calibration, runId }) {
    const n = scenarios.length;
    const { outcomes } = this;  // this search's, even when a cancel and a new search replace them
    const named = new Set();  // the candidates handed to the pool
    const waited = new Set();  // those named after the first ask: they waited on their family's runs
    const job = this.pool.stream({
      candidate: true,
      calibration,
      budgetMs: POINT_BUDGET_MS,
      onPoint: (i, outcome) => {
        outcomes[i] = waited.has(i) ? { ...outcome, waited: true } : outcome;
        show();
        if (reuse) asks.ask();
      },
      // p: the share of the named runs done; those that took a run are done too.
      onProgress: (p) => {
        const took = outcomes.filter((o) => o && o.reusedFrom !== undefined).length;
        $('search-progress').value = (took + p * named.size) / n;
      },
    });
    const show = () => {
      this.progress.showBest();
      this.progress.showRunning(job.running, named, waited);
      this.progress.drawPending();
    };
    // A run in flight is not yet among the runs the engine is told of, so it names it again (its
    // family's next, as no run of that family finished since): it is on the pool already.
    const hand = (next, afterFirst) => {
      for (const i of next) {
        if (named.has(i)) continue;
        named.add(i);
        if (afterFirst) waited.add(i);
        job.add(i, scenarios[i]);
      }
    };
    const asks = this.reuseAsks(question, outcomes, { calibration, runId, job, hand, show });
    job.promise.catch(() => {});  // awaited below, once the first runs are named; a cancel before is no page error
    this.job = job;
    // The first runs go out in spreadOrder, so the first finished sample the whole plan (search-words.js).
    const first = reuse ? await asks.first() : scenarios.map((_, i) => i);
    if (runId !== this.runId) return outcomes;
    hand(spreadOrder(first.length).map((k) => first[k]), false);
    this.progress.showRunning(job.running, named, waited);
    if (!reuse || !first.length) job.close();
    await Promise.race([job.promise, asks.failed]);
    return outcomes;
  }

  /**
   * The engine asked which candidates take a run and which run next (api::search_reuse), one ask at a
   * time: a run finished while one is out asks again when it returns, with every run so far. `first()`
   * is the first ask's runs; later asks settle the candidates that take a run, hand the named runs to
   * the job, `show` the progress, and close the job once nothing is left to run. `failed` rejects
   * when an ask fails.
   */
  reuseAsks(question, outcomes, { calibration, runId, job, hand, show }) {
    const planner = this.pool.clients[0];
    // What the engine is told of each candidate: null unless it ran (a failed run proves nothing).
    const runs = () => outcomes.map((o) => (o && o.reusedFrom === undefined ? o.limitFacts || { opaque: true } : null));
    let out = false;
    let again = false;
    let fail;
    const failed = new Promise((_, reject) => { fail = reject; });
    const settle = (round) => {
      round.reused_from.forEach((from, i) => {
        if (from < 0 || outcomes[i]) return;
        const o = outcomes[from];
        outcomes[i] = { result: o.result, warnings: o.warnings, ms: 0, reusedFrom: from, waited: true };
      });
      hand(round.next, true);
      show();  // the candidates that took a run are done now
      if (!round.next.length) job.close();
    };
    const ask = async () => {
      if (out) { again = true; return; }
      out = true;
      try {
        do {
          again = false;
          const round = await planner.searchReuse(question, runs(), calibration);
          if (runId !== this.runId || this.job !== job) return;  // cancelled (or over) while it was out
          settle(round);
        } while (again);
      } catch (err) {
        fail(err);  // first, so the search says why rather than "cancelled"
        job.cancel();
      } finally {
        out = false;
      }
    };
    const first = async () => (await planner.searchReuse(question, runs(), calibration)).next;
    return { ask, first, failed };
  }

  /**
   * Where the ranking gave a Pareto point no interval, its interval on the front's axis
   * (pareto_axes: TTFT at the question's percentile) from the ordinary run (central, low and high
   * cost bounds) of that deployment, where its central run reports that figure among its key
   * metrics (a run reports P50 and P99 TTFT, not P90: no run is made for nothing).
   */
  async addFrontIntervals(answer) {
    const axis = (answer.pareto_axes || [])[1];
    const reports = (r) => {
      const o = this.outcomes && this.outcomes[r.candidate];
      return Boolean(o && o.result && (o.result.key_metrics || []).some((m) => m.id === axis));
    };
    const rows = (answer.ranked || []).filter((r) => r.pareto && !Number.isFinite(metricOf(r, axis).low) && reports(r))
      .slice(0, MAX_INTERVAL_POINTS);
    if (!rows.length) return;
    this.setStatus('running', `Intervals of the ${rows.length} Pareto deployments…`);
    const job = this.pool.map(rows.map((r) => this.scenarios[r.candidate]), { budgetMs: POINT_BUDGET_MS, calibration: this.calibration });
    this.job = job;
    const outcomes = await job.promise;
    rows.forEach((r, k) => {
      const km = outcomes[k].result && (outcomes[k].result.key_metrics || []).find((m) => m.id === axis);
      if (!km || !Number.isFinite(km.low) || !Number.isFinite(km.high)) return;
      r.key_metrics = (r.key_metrics || []).filter((m) => m.id !== axis);
      r.key_metrics.push({ id: axis, value: r[axis], low: km.low, high: km.high });
    });
  }

  cancel() {
    if (!this.job) return;
    if (!this.job.cancel()) {  // still planning: forget the plan when it comes
      this.runId += 1;
      this.job = null;
      this.setStatus('cancelled', 'Search cancelled');
    }
  }

  /** The link of the question in the form (before or after it runs); the answer travels with it once computed. */
  share() {
    const question = this.questionOrError();
    if (!question) return;
    const same = this.question && this.answer && JSON.stringify(canonical(question)) === JSON.stringify(canonical(this.question));
    const box = $('search-share-box');
    box.hidden = false;
    $('search-share-text').value = this.onShare({ question, answer: same ? answerSummary(this.answer) : null });
    $('search-share-text').select();
  }

  /** Opens plan candidate `index` as the current scenario. */
  open(index) {
    const scenario = this.scenarios[index];
    if (!scenario) return;
    const row = this.answer && (this.answer.ranked || []).find((r) => r.candidate === index);
    const outcome = this.outcomes && this.outcomes[index];
    this.onOpen(asFormScenario(scenario, outcome && outcome.result), row ? row.deployment : `candidate ${index}`);
  }

  /** The answer on screen (none while a search runs). */
  draw() {
    this.answerView.draw();
  }
}
