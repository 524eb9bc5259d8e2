// The Search tab: the deployment search run on the page's worker pool. The
// engine plans the candidates (api::search_plan: the space, pruned by memory and
// analytic bounds), the pool runs each one at the central cost bound (bounded
// number of points, a time budget per point, cancellable), the engine names the
// runs its intervals need (api::search_intervals: the Pareto points at the low
// and high cost bounds), the pool runs those too, and the engine ranks them all
// (api::search_rank, which runs nothing: ranked table, Pareto front with
// intervals, the cheapest deployment meeting the SLO). A clicked point opens as the current
// scenario; the question travels in a share link (#s1=…).
import { EnginePool } from './pool.js';
import { canonical } from './share.js';
import { chartView } from './charts/registry.js';
import { xyConfig } from './charts/xy.js';
import { defaultIntraNode, groupGpus, ownNodeGpus } from './gpu-links.js';
import { buildQuestion, formValuesOf, inputForPath, isQuestion, meanLength, QuestionError, MAX_SEARCH_POINTS, POINT_BUDGET_MS } from './search-question.js';
import { LAUNCH_ENGINES, launchCommand } from './launch.js';
import { estimateSearch, timeLeft, spreadOrder, deploymentName, deploymentSettingsText, bestSoFar, clipAxis, formatDuration } from './search-words.js';

/** Pareto points given an interval by their ordinary (three-bound) run when the ranking has none. */
const MAX_INTERVAL_POINTS = 8;
import { display, percent } from './format.js';
import { $, cell, metricSpan, setRunStatus, showFormError } from './dom.js';
import { download, slug } from './export.js';
import { parameterAt } from './catalogue.js';
import { renderCalibrated } from './headline.js';

// Prices prefilled for a first question, as in examples/search-llama3-70b.json
// (the user's price is an input of the question, never a computed number).
const EXAMPLE_PRICES = new Map([['h100-sxm', 3.0], ['h200', 3.8], ['a100-80g-sxm', 1.8]]);

/** The runnable candidate scenarios of a plan, in plan order. */
export function planScenarios(plan) {
  if (plan && Array.isArray(plan.scenarios)) return plan.scenarios;
  if (plan && Array.isArray(plan.candidates)) return plan.candidates.map((c) => c.scenario);
  return [];
}

/** {value, low, high} of a ranked row's metric (low/high only where the engine computed the interval). */
function metricOf(row, id) {
  const km = Array.isArray(row.key_metrics) ? row.key_metrics.find((k) => k.id === id) : null;
  if (km) return { value: km.value, low: km.low, high: km.high };
  return { value: row[id] };
}

/** What a share link keeps of an answer: the cheapest deployment meeting the SLO and its numbers. */
export function answerSummary(a) {
  if (!a) return null;
  const b = a.cheapest_meeting_slo;
  if (!b) return { deployment: null };
  return { deployment: b.deployment, gpus: b.gpus, usd_per_million_tokens: b.usd_per_million_tokens, ttft_p99_ms: b.ttft_p99_ms, tpot_p99_ms: b.tpot_p99_ms };
}

/** Selects `value` in the select `id` when it is one of its options (a link is untrusted), else 'joint'. */
function choose(id, value) {
  const select = $(id);
  select.value = [...select.options].some((o) => o.value === value) ? value : 'joint';
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
    this.onModel = onModel;
    this.onOpen = onOpen;
    this.onShare = onShare;
    this.onDone = onDone;
    this.pool = null;
    this.job = null;
    this.workloads = new Map();
    this.gpuIds = [];
    this.question = null;
    this.scenarios = [];   // the plan's candidates, in plan order
    this.answer = null;
    this.shared = null;  // {question, answer} of the shared link the form came from
    this.runId = 0;
  }

  /** Fills the question form from the engine's presets. */
  init({ scenarios, models, gpus, interconnects = [], isSimulate }) {
    this.links = interconnects;
    const wl = $('q-workload');
    for (const s of scenarios.filter(isSimulate)) {
      this.workloads.set(s.id, s);
      const o = document.createElement('option');
      o.value = s.id;
      o.textContent = `${s.id}: ${s.title || s.id}`;
      wl.append(o);
    }
    const model = $('q-model');
    this.models = new Map(models.map((m) => [m.id, m]));
    for (const m of models) {
      const o = document.createElement('option');
      o.value = m.id;
      o.textContent = m.name || m.id;
      model.append(o);
    }
    wl.addEventListener('change', () => this.followWorkload());
    model.addEventListener('change', () => this.onModel(model.value));
    $('q-question').addEventListener('change', () => this.showQuestion());
    $('search-launch-engine').replaceChildren(...LAUNCH_ENGINES.map(([id, name]) => {
      const o = document.createElement('option');
      o.value = id;
      o.textContent = name;
      return o;
    }));
    $('search-launch-engine').addEventListener('change', () => this.showLaunch());
    $('search-launch-download').addEventListener('click', () => {
      const text = $('search-launch-text').value;
      if (text) download(`sightline-launch-${slug($('search-launch-engine').value)}.sh`, `#!/bin/sh\n${text}`, 'text/x-sh');
    });
    // How each SLO bound is judged: the engine's choices (its parameter schema), as in the serving form.
    for (const m of ['ttft', 'tpot']) {
      const p = parameterAt(`/serving/slo/percentiles/${m}`);
      $(`q-${m}-pct`).replaceChildren(...(p && Array.isArray(p.choices) ? p.choices.map(String) : []).map((v) => {
        const o = document.createElement('option');
        o.value = v;
        o.textContent = v === 'joint' ? 'Joint (attainment)' : v.toUpperCase();
        return o;
      }));
    }
    for (const id of ['q-ttft', 'q-tpot', 'q-ttft-pct', 'q-tpot-pct']) $(id).addEventListener('input', () => this.showAttainment());
    this.gpus = new Map(gpus.map((g) => [g.id, g]));
    this.gpuIds = gpus.map((g) => g.id);
    // One group per vendor and generation, as in the scenario form's GPU dropdown.
    $('q-gpu-list').replaceChildren(...groupGpus(gpus).flatMap(([groupLabel, members]) => {
      const head = document.createElement('div');
      head.className = 'search-gpu-group';
      head.textContent = groupLabel;
      return [head, ...members.map((g) => {
        const row = document.createElement('div');
        row.className = 'search-gpu';
        const box = document.createElement('input');
        box.type = 'checkbox';
        box.id = `q-use-${g.id}`;
        box.checked = EXAMPLE_PRICES.has(g.id);
        const label = document.createElement('label');
        label.htmlFor = box.id;
        label.textContent = g.name || g.id;
        const price = document.createElement('input');
        price.type = 'number';
        price.min = '0';
        price.step = 'any';
        price.id = `q-price-${g.id}`;
        price.setAttribute('aria-label', `Price of ${g.name || g.id} in $ per GPU-hour`);
        price.value = EXAMPLE_PRICES.has(g.id) ? String(EXAMPLE_PRICES.get(g.id)) : '';
        row.append(box, label, price);
        return row;
      })];
    }));
    if (wl.options.length) {
      wl.value = this.workloads.has('I2.3') ? 'I2.3' : wl.options[0].value;
      this.followWorkload();
    }
    $('search-form').addEventListener('submit', (e) => {
      e.preventDefault();
      this.run();
    });
    $('search-cancel').addEventListener('click', () => this.cancel());
    $('search-share').addEventListener('click', () => this.share());
    $('search-table').addEventListener('click', (e) => {
      const tr = e.target.closest('tr[data-candidate]');
      if (tr) this.open(Number(tr.dataset.candidate));
    });
  }

  /** The model, rate and SLO of the chosen workload scenario, as a starting point. */
  followWorkload() {
    const s = this.workloads.get($('q-workload').value);
    if (!s) return;
    if (typeof s.model === 'string') $('q-model').value = s.model;
    this.onModel($('q-model').value);
    const rate = s.serving.workload && s.serving.workload.arrival && s.serving.workload.arrival.rate_qps;
    if (Number.isFinite(rate)) $('q-rate').value = String(rate);
    const wlSpec = s.serving.workload || {};
    for (const [id, key] of [['q-prompt', 'prompt_tokens'], ['q-output', 'output_tokens']]) {
      const mean = meanLength(wlSpec[key]);
      $(id).value = Number.isFinite(mean) ? String(Math.round(mean)) : '';
    }
    const slo = s.serving.slo || {};
    if (Number.isFinite(slo.ttft_ms)) $('q-ttft').value = String(slo.ttft_ms);
    if (Number.isFinite(slo.tpot_ms)) $('q-tpot').value = String(slo.tpot_ms);
    const pct = slo.percentiles || {};
    choose('q-ttft-pct', pct.ttft);
    choose('q-tpot-pct', pct.tpot);
    if (Number.isFinite(slo.attainment)) $('q-attainment').value = String(slo.attainment);
    this.showAttainment();
  }

  /** The budget question has no target rate: the rate is each layout's answer. */
  showQuestion() {
    const budget = $('q-question').value === 'budget';
    $('q-rate').disabled = budget;
    $('q-rate').closest('.field').classList.toggle('disabled', budget);
    $('search-answer-title').textContent = budget ? 'Best deployment within the GPU budget' : 'Cheapest deployment meeting the SLO';
  }

  /** The attainment input applies only while a bound is judged jointly. */
  showAttainment() {
    const joint = ['ttft', 'tpot'].some((m) => $(`q-${m}`).value.trim() !== '' && $(`q-${m}-pct`).value === 'joint');
    $('q-attainment').disabled = !joint;
    $('q-attainment').closest('.field').classList.toggle('disabled', !joint);
  }

  /** Starts the workers ahead of the first search (called when the tab opens). */
  warm() {
    if (!this.pool) this.pool = new EnginePool(this.workerUrl);
    return this.pool.ready;
  }

  formValues() {
    return {
      question: $('q-question').value,
      workload: this.workloads.get($('q-workload').value),
      model: $('q-model').value,
      rate: $('q-rate').value,
      promptTokens: $('q-prompt').value,
      outputTokens: $('q-output').value,
      tp: $('q-tp').value,
      maxGpus: $('q-max-gpus').value,
      ttftMs: $('q-ttft').value,
      tpotMs: $('q-tpot').value,
      ttftPct: $('q-ttft-pct').value,
      tpotPct: $('q-tpot-pct').value,
      attainment: $('q-attainment').value,
      maxNumSeqs: $('q-seqs').value,
      chunked: $('q-chunked').value,
      ratios: $('q-ratios').value,
      mixed: $('q-mixed').checked,
      adp: $('q-adp').value,
      gpus: this.gpuIds.filter((id) => $(`q-use-${id}`).checked).map((id) => ({
        gpu: id,
        price: $(`q-price-${id}`).value,
        intra_node: defaultIntraNode(this.gpus.get(id)),
        node_gpus: ownNodeGpus(this.gpus.get(id), this.links),
      })),
    };
  }

  /**
   * Fills the form from a shared link's {question, answer}; false when the
   * question is not one this page made. The link's answer is shown beside the
   * one this page computes again.
   */
  fill({ question, answer }) {
    if (!isQuestion(question)) return false;
    this.shared = { question: canonical(question), answer };
    const v = formValuesOf(question);
    const workload = [...this.workloads.values()].find((s) => s.id === question.workload_from) || null;
    if (workload) $('q-workload').value = workload.id;
    if ([...$('q-model').options].some((o) => o.value === v.model)) $('q-model').value = v.model;
    this.onModel($('q-model').value);
    $('q-question').value = v.question;
    this.showQuestion();
    $('q-rate').value = String(v.rate);
    $('q-prompt').value = String(v.promptTokens);
    $('q-output').value = String(v.outputTokens);
    $('q-tp').value = v.tp;
    $('q-max-gpus').value = String(v.maxGpus);
    $('q-ttft').value = String(v.ttftMs);
    $('q-tpot').value = String(v.tpotMs);
    choose('q-ttft-pct', v.ttftPct);
    choose('q-tpot-pct', v.tpotPct);
    $('q-attainment').value = String(v.attainment);
    this.showAttainment();
    $('q-seqs').value = v.maxNumSeqs;
    $('q-chunked').value = v.chunked;
    $('q-ratios').value = v.ratios;
    $('q-mixed').checked = v.mixed;
    $('q-adp').value = v.adp;
    const prices = new Map(v.gpus.map((g) => [g.gpu, g.price]));
    for (const id of this.gpuIds) {
      $(`q-use-${id}`).checked = prices.has(id);
      $(`q-price-${id}`).value = prices.has(id) ? String(prices.get(id)) : $(`q-price-${id}`).value;
    }
    return true;
  }

  setStatus(state, text) {
    setRunStatus('search', state, text);
  }

  showError(message, inputId) {
    showFormError('search', message, inputId);
  }


  readQuestion() {
    const question = buildQuestion(this.formValues());
    question.workload_from = $('q-workload').value;
    return question;
  }

  /** The question in the form, or null after marking the input that cannot be read. */
  questionOrError() {
    try {
      const question = this.readQuestion();
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
      const scenarios = planScenarios(plan);
      if (scenarios.length > MAX_SEARCH_POINTS) {
        throw Object.assign(new Error(`${scenarios.length} deployments survive pruning; the page simulates at most ${MAX_SEARCH_POINTS}: lower the GPU budget, or try fewer GPU types or batch limits (\`sightline search\` has no such bound)`), { code: 'limit_exceeded', path: '/max_gpus' });
      }
      this.scenarios = scenarios;
      this.outcomes = new Array(scenarios.length).fill(null);
      // The time estimate comes first, before any candidate runs.
      await this.estimate(scenarios);
      if (runId !== this.runId) return;
      let done = 0;
      let job = null;
      const status = () => {
        // Past the first finished candidates, the runs so far (finished and running) correct the rest.
        const left = done && done < scenarios.length && this.estimated && job
          ? timeLeft(this.estimated.pointLowMs, this.outcomes, { workers: this.pool.size, running: job.running(), intervalPoints: MAX_INTERVAL_POINTS }) : null;
        return `Simulating ${done} / ${scenarios.length} deployments on ${this.pool.size} workers…${left ? ` about ${formatDuration(left)} left, ranking included` : ''}`;
      };
      this.setStatus('running', status());
      job = this.pool.map(scenarios, {
        centralOnly: true,
        order: spreadOrder(scenarios.length),  // the first finished sample the whole plan (search-words.js)
        calibration,
        budgetMs: POINT_BUDGET_MS,
        onPoint: (i, outcome) => {
          this.outcomes[i] = outcome;
          done += 1;
          this.showBest();
          this.setStatus('running', status());
          this.drawPending();
        },
        onProgress: (p) => { $('search-progress').value = p; },
      });
      this.job = job;
      const outcomes = await job.promise;
      const best = this.bestIndex !== null && this.outcomes[this.bestIndex];
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
      $('search-progress').value = 1;
      this.setStatus('done', `${scenarios.length} deployments simulated in ${(ms / 1000).toFixed(1)} s`);
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
   * Where the ranking gave a Pareto point no interval, its P99 TTFT interval from
   * the ordinary run (central, low and high cost bounds) of that deployment.
   */
  async addFrontIntervals(answer) {
    const rows = (answer.ranked || []).filter((r) => r.pareto && !Number.isFinite(metricOf(r, 'ttft_p99_ms').low))
      .slice(0, MAX_INTERVAL_POINTS);
    if (!rows.length) return;
    this.setStatus('running', `Intervals of the ${rows.length} Pareto deployments…`);
    const job = this.pool.map(rows.map((r) => this.scenarios[r.candidate]), { budgetMs: POINT_BUDGET_MS, calibration: this.calibration });
    this.job = job;
    const outcomes = await job.promise;
    rows.forEach((r, k) => {
      const km = outcomes[k].result && (outcomes[k].result.key_metrics || []).find((m) => m.id === 'ttft_p99_ms');
      if (!km || !Number.isFinite(km.low) || !Number.isFinite(km.high)) return;
      r.key_metrics = (r.key_metrics || []).filter((m) => m.id !== 'ttft_p99_ms');
      r.key_metrics.push({ id: 'ttft_p99_ms', value: r.ttft_p99_ms, low: km.low, high: km.high });
    });
  }

  /**
   * The time estimate, before any candidate runs: the engine's work estimate of every candidate
   * (api::estimate_work, made on the pool's workers), each at the speed of its own probe on this
   * machine; shown as a range (search-words.js estimateSearch says what each end assumes).
   */
  async estimate(scenarios) {
    this.estimated = null;
    this.bestIndex = null;
    const box = $('search-estimate');
    box.hidden = true;
    if (!scenarios.length) return;
    this.setStatus('running', `Estimating the work of ${scenarios.length} deployment${scenarios.length === 1 ? '' : 's'}…`);
    let estimates;
    try {
      estimates = await this.pool.each(scenarios, (client, s) => client.estimateWork(s, { centralOnly: true }));
    } catch (_) {
      return;  // e.g. a candidate is invalid on its own: no estimate, the search says why
    }
    const e = estimateSearch(estimates, { workers: this.pool.size, budgetMs: POINT_BUDGET_MS, intervalPoints: MAX_INTERVAL_POINTS });
    this.estimated = e;
    const n = scenarios.length;
    const requests = (k) => display(estimates.reduce((a, x) => a + x.requests[k], 0) / n);
    box.dataset.pointsDone = String(this.outcomes.filter(Boolean).length);
    box.dataset.lowMs = String(Math.round(e.lowMs));
    box.dataset.highMs = String(Math.round(e.highMs));
    const span = formatDuration(e.lowMs) === formatDuration(e.highMs) ? `about ${formatDuration(e.lowMs)}`
      : `from ${formatDuration(e.lowMs)} to ${formatDuration(e.highMs)}`;
    box.textContent = `Estimated time: ${span}. ${n} deployment${n === 1 ? '' : 's'} to simulate on ${this.pool.size} workers, `
      + `${formatDuration(e.candidates.lowMs)} at the fewest requests each can simulate (${requests('low')} on average: every verdict decided by its first run), `
      + `${formatDuration(e.candidates.highMs)} at the most (${requests('high')}: every undecided run grown to its cap); then the Pareto deployments run `
      + `again at the low and high cost bounds on one worker, ${formatDuration(e.ranking.lowMs)} for one to ${formatDuration(e.ranking.highMs)} `
      + `for ${Math.min(MAX_INTERVAL_POINTS, n)}. From the engine's work estimate of each deployment, at the speed its short probe ran at in this browser; `
      + 'the time left below follows the finished ones.';
    box.hidden = false;
  }

  /** While candidates run: the best one so far, by the engine's own order. */
  showBest() {
    const q = this.question;
    const prices = new Map(q.gpus.map((g) => [g.gpu, g.usd_per_hour]));
    const pools = (i) => this.scenarios[i].serving.cluster.pools;
    const gpusOf = (i) => pools(i).reduce((n, p) => n + p.replicas * p.tp * (p.pp || 1), 0);
    // Each pool at its own GPU's price (a mixed deployment's decode pool names its GPU).
    const usdOf = (i) => pools(i).reduce((usd, p) => usd + (prices.get(p.gpu || this.scenarios[i].hardware.gpu) || 0) * p.replicas * p.tp * (p.pp || 1), 0);
    const best = bestSoFar(this.outcomes, usdOf, gpusOf);
    const box = $('search-best');
    box.hidden = !best;
    if (!best) return;
    const s = this.scenarios[best.index];
    const [p, d] = pools(best.index);
    const row = { tp: p.tp, pp: p.pp || 1, replicas: p.replicas };
    if (d) Object.assign(row, { prefill_replicas: p.replicas, decode_replicas: d.replicas, decode_tp: d.tp });
    const adp = s.serving.moe && s.serving.moe.attention_data_parallel;
    if (adp > 1) Object.assign(row, { attention_data_parallel: adp, expert_parallel: s.serving.moe.expert_parallel });
    box.dataset.candidate = String(best.index);
    this.bestIndex = best.index;
    box.textContent = `Best so far: ${deploymentName(row, this.gpuName(s.hardware.gpu), this.gpuName((d && d.gpu) || s.hardware.gpu))}, $${display(best.usdPerHour)} per hour${best.qps ? ` at up to ${display(best.qps)} req/s` : ', meets the SLO'} (ranked with intervals when all finish).`;
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
    this.onOpen(structuredClone(scenario), row ? row.deployment : `candidate ${index}`);
  }

  /** While candidates run: how many finished. */
  drawPending() {
    const n = this.outcomes ? this.outcomes.filter(Boolean).length : 0;
    $('search-table-title').textContent = `Ranked deployments (${n} of ${this.scenarios.length} simulated; ranked when all finish)`;
  }

  draw() {
    const a = this.answer;
    const ranked = (a && Array.isArray(a.ranked)) ? a.ranked : [];
    $('search-table-title').textContent = a ? `Ranked deployments (${ranked.length} simulated, ${a.space ? a.space.pruned : 0} layouts pruned)` : 'Ranked deployments';
    this.drawAnswer(a);
    this.drawChart(ranked);
    this.drawTable(ranked);
  }

  /** The GPU's name as people know it ("NVIDIA H200"), else its id. */
  gpuName(id) {
    const g = this.gpus && this.gpus.get(id);
    return (g && g.name) || id;
  }

  /**
   * The percentile the question judges TTFT and TPOT at: a bound's own percentile, or the
   * joint attainment's share (0.9: P90), when the run reports it; else P99 (the ranking's).
   */
  sloPercentile(metric) {
    const slo = (this.question && this.question.base.serving.slo) || {};
    const own = slo.percentiles && slo.percentiles[metric];
    if (own) return own;
    const share = Number.isFinite(slo.attainment) ? Math.round(slo.attainment * 100) : 99;
    return [50, 90, 99].includes(share) ? `p${share}` : 'p99';
  }

  /** A latency of candidate `index`'s central run at percentile `pct` (ms), if it reported one. */
  latencyAt(index, metric, pct) {
    const o = this.outcomes && this.outcomes[index];
    const m = o && o.result && o.result.metrics && o.result.metrics[`${metric}_ms`];
    return m && Number.isFinite(m[pct]) ? m[pct] : null;
  }

  drawAnswer(a) {
    const box = $('search-answer');
    box.hidden = !a;
    if (!a) return;
    const best = a.cheapest_meeting_slo;
    const budget = !Number.isFinite(a.target_qps);
    const text = $('search-answer-text');
    box.dataset.candidate = best ? String(best.candidate) : '';
    if (!best) {
      text.textContent = budget ? `No layout sustains any rate within the SLO on ${a.max_gpus} GPUs.`
        : `No simulated deployment meets the SLO at ${display(a.target_qps)} req/s within ${a.max_gpus} GPUs.`;
    } else {
      const usd = metricOf(best, 'usd_per_million_tokens');
      // Cost per token at a rate the deployment keeps up with is set by that rate, not by kernel
      // speed, so its bounds can coincide: say so rather than print a zero-width range.
      const range = (m) => {
        if (!Number.isFinite(m.low) || !Number.isFinite(m.high)) return '';
        if (display(m.low) === display(m.high)) return ' (the same at both interval bounds: set by the target rate)';
        return ` (80%: ${display(m.low)}–${display(m.high)})`;
      };
      const gpu = best.gpu || this.scenarios[best.candidate].hardware.gpu;
      const name = cell('strong', deploymentName(best, this.gpuName(gpu), this.gpuName(best.decode_gpu || gpu)));
      name.id = 'search-answer-name';
      const parts = [name, document.createTextNode(` (${best.gpus} GPU${best.gpus === 1 ? '' : 's'}; ${deploymentSettingsText(best)}): $`),
        metricSpan('search_usd_per_million_tokens', usd.value), document.createTextNode(` per million tokens${range(usd)}`)];
      if (budget) {
        const qps = metricOf(best, 'max_qps');
        parts.push(document.createTextNode(` at ${display(qps.value)} req/s${range(qps)}, its highest rate within the SLO.`));
      } else {
        // The latencies at the percentile the question asked (the ranking's P99 beside them).
        const words = [];
        for (const m of ['ttft', 'tpot']) {
          const pct = this.sloPercentile(m);
          const v = this.latencyAt(best.candidate, m, pct);
          if (v !== null && pct !== 'p99') words.push(`${pct.toUpperCase()} ${m.toUpperCase()} ${display(v)} ms`);
        }
        const ttft = metricOf(best, 'ttft_p99_ms');
        parts.push(document.createTextNode(`${words.length ? `, ${words.join(', ')}` : ''}; P99 TTFT `), metricSpan('search_ttft_p99_ms', ttft.value),
          document.createTextNode(` ms${range(ttft)}, P99 TPOT ${display(best.tpot_p99_ms)} ms at ${display(a.target_qps)} req/s. `));
      }
      const open = document.createElement('button');
      open.type = 'button';
      open.className = 'mini';
      open.id = 'search-open-best';
      open.textContent = 'Open as serving simulation';
      open.addEventListener('click', () => this.open(best.candidate));
      text.replaceChildren(...parts, open);
    }
    const shared = $('search-shared');
    const linked = this.shared && this.shared.answer;
    shared.hidden = !linked;
    if (linked) {
      const same = JSON.stringify(canonical(linked)) === JSON.stringify(canonical(answerSummary(a)));
      shared.dataset.same = String(same);
      const was = linked.deployment
        ? `${linked.deployment} at $${display(linked.usd_per_million_tokens)} per million tokens` : 'no deployment meeting the SLO';
      shared.textContent = `The shared link's answer: ${was}. ${same ? 'This page computed the same answer again.' : 'This page now computes a different answer (another engine version or calibration).'}`;
    }
    // "calibrated with NAME", from the engine's own result of the answer (every candidate ran with it).
    const priced = best && this.outcomes && this.outcomes[best.candidate];
    renderCalibrated($('search-calibrated'), priced && priced.result);
    const acc = a.accuracy || {};
    $('search-answer-note').textContent = `${acc.tier ? `Cost model tier: ${acc.tier}` : ''}${Number.isFinite(acc.expected_error_pct) ? ` (expected error ±${display(acc.expected_error_pct)}%)` : ''}. ${a.criterion || ''}`;
    this.launchFor = best ? best.candidate : null;
    $('search-launch').hidden = !best;
    this.showLaunch();
  }

  /** The chosen deployment's launch command, from the engine's resolved scenario. */
  async showLaunch() {
    const index = this.launchFor;
    const area = $('search-launch-text');
    if (!Number.isInteger(index) || !this.scenarios[index] || !this.pool) {
      area.value = '';
      return;
    }
    const scenario = this.scenarios[index];
    const engine = $('search-launch-engine').value;
    const row = this.answer && (this.answer.ranked || []).find((r) => r.candidate === index);
    let resolved;
    try {
      resolved = await this.pool.clients[0].validate(JSON.stringify(scenario));
    } catch (err) {
      area.value = `# The engine could not resolve this deployment: ${err.message}`;
      return;
    }
    if (this.launchFor !== index || $('search-launch-engine').value !== engine) return;  // changed meanwhile
    const model = this.models && this.models.get(scenario.model);
    // A mixed deployment's decode pool runs on its own GPU: name both.
    const other = scenario.serving.cluster.pools.find((p) => p.gpu && p.gpu !== scenario.hardware.gpu);
    const gpuName = other ? `${this.gpuName(scenario.hardware.gpu)} (prefill) and ${this.gpuName(other.gpu)} (${other.role || 'decode'})`
      : this.gpuName(scenario.hardware.gpu);
    area.value = launchCommand(engine, {
      resolved, label: row ? row.deployment : `candidate ${index}`, model, gpuName,
      router: resolved.serving && resolved.serving.cluster && resolved.serving.cluster.router,
    });
    area.dataset.candidate = String(index);
    area.dataset.engine = engine;
  }

  drawChart(ranked) {
    const budget = this.answer ? !Number.isFinite(this.answer.target_qps) : this.question && !Number.isFinite(this.question.target_qps);
    // The budget question's front: $/Mtok against the highest rate within the SLO.
    const xKey = budget ? 'max_qps' : 'ttft_p99_ms';
    const xLabel = budget ? 'Highest rate within the SLO (req/s)' : 'P99 TTFT (ms)';
    $('search-pareto-title').textContent = budget ? '$ per million tokens vs highest rate within the SLO' : '$ per million tokens vs P99 TTFT';
    const chart = chartView('search-pareto', $('chart-search-pareto'), { height: 300 });
    const okRows = ranked.filter((r) => Number.isFinite(r[xKey]) && Number.isFinite(r.usd_per_million_tokens) && (!budget || r[xKey] > 0));
    if (!okRows.length) {
      chart.clear(`$ per million tokens vs ${budget ? 'highest rate' : 'P99 TTFT'}: no deployments yet`);
      return;
    }
    // A miss far out (80 s beside answers under 1 s) would squash every other point against the
    // axis: the axis ends past the deployments that meet the SLO and the far misses sit at its edge.
    const slo = this.question && this.question.base.serving.slo;
    const clip = budget ? { max: null, clipped: 0 }
      : clipAxis(okRows.filter((r) => r.meets_slo).map((r) => r.ttft_p99_ms), okRows.map((r) => r.ttft_p99_ms), slo && slo.ttft_ms);
    const point = (r) => {
      const far = clip.max !== null && r[xKey] > clip.max;
      return { x: far ? clip.max : r[xKey], y: r.usd_per_million_tokens, label: far ? `${r.deployment} (P99 TTFT ${display(r[xKey])} ms, past the axis)` : r.deployment, candidate: r.candidate };
    };
    const front = okRows.filter((r) => r.pareto).map(point).sort((p, q) => p.x - q.x);
    const meets = okRows.filter((r) => !r.pareto && r.meets_slo).map(point);
    const misses = okRows.filter((r) => !r.meets_slo && !(clip.max !== null && r[xKey] > clip.max)).map(point);
    const far = okRows.filter((r) => !r.meets_slo && clip.max !== null && r[xKey] > clip.max).map(point);
    const intervals = [];
    for (const r of okRows.filter((row) => row.pareto)) {
      const usd = metricOf(r, 'usd_per_million_tokens');
      const x = metricOf(r, xKey);
      const cap = (v) => (clip.max !== null ? Math.min(v, clip.max) : v);
      if (Number.isFinite(x.low) && Number.isFinite(x.high)) intervals.push([{ x: cap(x.low), y: usd.value }, { x: cap(x.high), y: usd.value }]);
      if (Number.isFinite(usd.low) && Number.isFinite(usd.high)) intervals.push([{ x: cap(x.value), y: usd.low }, { x: cap(x.value), y: usd.high }]);
    }
    const series = [
      { label: 'Pareto front (meets the SLO)', points: front, line: true, color: '#d9534f', pointRadius: 6, order: 0 },
      { label: 'Meets the SLO', points: meets, color: '#2f6fdb', order: 1 },
      { label: 'Misses the SLO', points: misses, color: '#9aa6b8', order: 2 },
      { label: 'Misses, far past the axis (drawn at its edge)', points: far, color: '#9aa6b8', pointStyle: 'triangle', pointRadius: 6, order: 2 },
      ...intervals.map((pts) => ({ label: '80% interval', points: pts, line: true, color: '#d9534f', pointRadius: 0, pointStyle: 'line', order: 3 })),
    ];
    const chartEl = $('chart-search-pareto');
    chartEl.dataset.clippedPoints = String(clip.clipped);
    chartEl.dataset.axisMax = clip.max === null ? '' : String(clip.max);
    $('search-pareto-note').textContent = `Red: the Pareto front among deployments meeting the SLO, with 80% intervals where computed. Blue: other deployments meeting it. Grey: deployments that miss it${clip.clipped ? `; the ${clip.clipped} triangle${clip.clipped === 1 ? '' : 's'} at the right edge ${clip.clipped === 1 ? 'is a miss' : 'are misses'} with a P99 TTFT past ${display(clip.max)} ms` : ''}. Click a point (or a table row) to open it as a serving simulation.`;
    const build = () => {
      const cfg = xyConfig({ series, xLabel, yLabel: '$ per million tokens', range: clip.max !== null ? { x: [0, clip.max] } : {} });
      // One legend entry for all the interval bars (and none for an empty series); a click on a point opens it.
      const first = series.findIndex((s) => s.label === '80% interval');
      cfg.options.plugins.legend.labels.filter = (item, data) => data.datasets[item.datasetIndex].data.length > 0
        && (first < 0 || item.datasetIndex <= first);
      // Each entry drawn with its own marker (circle, the far misses' triangle, the interval's bar), not a box.
      cfg.options.plugins.legend.labels.usePointStyle = true;
      // Every element under the pointer, not only the nearest: an interval bar's end can sit
      // exactly on its point (a zero-width bound), and the click must still reach the point.
      cfg.options.onClick = (evt, _nearest, chartInstance) => {
        const under = chartInstance.getElementsAtEventForMode(evt, 'point', { intersect: true }, false);
        const raw = under.map((e) => chartInstance.data.datasets[e.datasetIndex].data[e.index]);
        const hit = raw.find((p) => p && Number.isInteger(p.candidate));
        if (hit) this.open(hit.candidate);
      };
      return cfg;
    };
    chart.render(build, `$ per million tokens against ${budget ? 'the highest rate within the SLO' : 'P99 TTFT'} for ${okRows.length} deployments; Pareto front: ${front.map((p) => p.label).join(', ') || 'none'}`);
  }

  drawTable(ranked) {
    const budget = this.answer && !Number.isFinite(this.answer.target_qps);
    const head = $('search-table').querySelector('thead');
    const hr = document.createElement('tr');
    const cols = budget
      ? [['#', 'num'], ['Deployment', ''], ['GPUs', 'num'], ['$ / h', 'num'], ['$ / M tokens', 'num'], ['Highest rate req/s', 'num'], ['Verdict', ''], ['Pareto', '']]
      : [['#', 'num'], ['Deployment', ''], ['GPUs', 'num'], ['$ / h', 'num'], ['$ / M tokens', 'num'],
        ['P99 TTFT ms', 'num'], ['P99 TPOT ms', 'num'], ['SLO attainment', 'num'], ['Verdict', ''], ['Pareto', '']];
    for (const [text, cls] of cols) {
      const th = cell('th', text, cls);
      th.scope = 'col';
      hr.append(th);
    }
    head.replaceChildren(hr);
    const rows = ranked.map((r, k) => {
      const tr = document.createElement('tr');
      tr.dataset.candidate = String(r.candidate);
      tr.title = 'Open this deployment as a serving simulation';
      tr.classList.toggle('on-front', Boolean(r.pareto));
      tr.classList.toggle('misses', !r.meets_slo);
      const gpu = this.scenarios[r.candidate] ? this.scenarios[r.candidate].hardware.gpu : '';
      const th = cell('th', gpu ? deploymentName(r, this.gpuName(gpu), this.gpuName(r.decode_gpu || gpu)) : r.deployment || `candidate ${r.candidate}`);
      th.title = `${r.deployment}: ${deploymentSettingsText(r)}`;
      th.scope = 'row';
      if (r.error !== undefined) {
        tr.append(cell('td', String(k + 1), 'num'), th, cell('td', String(r.gpus ?? ''), 'num'), cell('td', '', 'num'));
        const err = cell('td', typeof r.error === 'string' ? r.error : JSON.stringify(r.error), 'status-error');
        err.colSpan = cols.length - 4;
        tr.append(err);
        return tr;
      }
      const usd = metricOf(r, 'usd_per_million_tokens');
      const usdCell = cell('td', '', 'num');
      usdCell.append(metricSpan(`search_row_usd_${r.candidate}`, usd.value));
      if (Number.isFinite(usd.low) && Number.isFinite(usd.high)) usdCell.append(cell('span', ` (${display(usd.low)}–${display(usd.high)})`, 'muted'));
      tr.append(cell('td', String(k + 1), 'num'), th, cell('td', String(r.gpus), 'num'), cell('td', display(r.usd_per_hour), 'num'), usdCell);
      if (budget) tr.append(cell('td', display(r.max_qps), 'num'));
      else {
        tr.append(cell('td', display(r.ttft_p99_ms), 'num'), cell('td', display(r.tpot_p99_ms), 'num'), cell('td', percent(r.slo_attainment), 'num'));
      }
      tr.append(cell('td', `${r.meets_slo ? 'meets' : 'misses'} (${r.verdict || '—'})`), cell('td', r.pareto ? 'yes' : '', 'front'));
      return tr;
    });
    $('search-table').querySelector('tbody').replaceChildren(...rows);
  }
}
