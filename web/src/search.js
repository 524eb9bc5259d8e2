// The Search tab: the deployment search run on the page's worker pool. The
// engine plans the candidates (api::search_plan: the space, pruned by memory and
// analytic bounds), the pool runs each one at the central cost bound (bounded
// number of points, a time budget per point, cancellable), and the engine ranks
// them (api::search_rank: ranked table, Pareto front with intervals, the
// cheapest deployment meeting the SLO). A clicked point opens as the current
// scenario; the question travels in a share link (#s1=…).
import { EnginePool } from './pool.js';
import { canonical } from './share.js';
import { chartView } from './charts/registry.js';
import { xyConfig } from './charts/xy.js';
import { defaultIntraNode } from './sweep.js';
import { buildQuestion, formValuesOf, isQuestion, QuestionError, MAX_SEARCH_POINTS, POINT_BUDGET_MS } from './search-question.js';

/** Pareto points given an interval by their ordinary (three-bound) run when the ranking has none. */
const MAX_INTERVAL_POINTS = 8;
import { display, percent } from './format.js';
import { $, cell, metricSpan, setRunStatus, showFormError } from './dom.js';
import { parameterAt } from './catalogue.js';

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
   *          onShare: (link: {question, answer}) => string, onDone?: (ms: number) => void}} options
   *   onOpen loads a candidate as the current scenario; onShare returns the link of a question and its answer.
   */
  constructor({ workerUrl, onOpen, onShare, onDone = () => {} }) {
    this.workerUrl = workerUrl;
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
  init({ scenarios, models, gpus, isSimulate }) {
    const wl = $('q-workload');
    for (const s of scenarios.filter(isSimulate)) {
      this.workloads.set(s.id, s);
      const o = document.createElement('option');
      o.value = s.id;
      o.textContent = `${s.id}: ${s.title || s.id}`;
      wl.append(o);
    }
    const model = $('q-model');
    for (const m of models) {
      const o = document.createElement('option');
      o.value = m.id;
      o.textContent = m.name || m.id;
      model.append(o);
    }
    wl.addEventListener('change', () => this.followWorkload());
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
    $('q-gpu-list').replaceChildren(...gpus.map((g) => {
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
    const rate = s.serving.workload && s.serving.workload.arrival && s.serving.workload.arrival.rate_qps;
    if (Number.isFinite(rate)) $('q-rate').value = String(rate);
    const slo = s.serving.slo || {};
    if (Number.isFinite(slo.ttft_ms)) $('q-ttft').value = String(slo.ttft_ms);
    if (Number.isFinite(slo.tpot_ms)) $('q-tpot').value = String(slo.tpot_ms);
    const pct = slo.percentiles || {};
    choose('q-ttft-pct', pct.ttft);
    choose('q-tpot-pct', pct.tpot);
    if (Number.isFinite(slo.attainment)) $('q-attainment').value = String(slo.attainment);
    this.showAttainment();
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
      workload: this.workloads.get($('q-workload').value),
      model: $('q-model').value,
      rate: $('q-rate').value,
      maxGpus: $('q-max-gpus').value,
      ttftMs: $('q-ttft').value,
      tpotMs: $('q-tpot').value,
      ttftPct: $('q-ttft-pct').value,
      tpotPct: $('q-tpot-pct').value,
      attainment: $('q-attainment').value,
      maxNumSeqs: $('q-seqs').value,
      chunked: $('q-chunked').value,
      gpus: this.gpuIds.filter((id) => $(`q-use-${id}`).checked).map((id) => ({
        gpu: id,
        price: $(`q-price-${id}`).value,
        intra_node: defaultIntraNode(this.gpus.get(id)),
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
    $('q-rate').value = String(v.rate);
    $('q-max-gpus').value = String(v.maxGpus);
    $('q-ttft').value = String(v.ttftMs);
    $('q-tpot').value = String(v.tpotMs);
    choose('q-ttft-pct', v.ttftPct);
    choose('q-tpot-pct', v.tpotPct);
    $('q-attainment').value = String(v.attainment);
    this.showAttainment();
    $('q-seqs').value = v.maxNumSeqs;
    $('q-chunked').value = v.chunked;
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

  async run() {
    if (this.job) return;
    let question;
    try {
      question = this.readQuestion();
    } catch (err) {
      if (!(err instanceof QuestionError)) throw err;
      this.showError(`Search question: ${err.message}.`, err.input);
      return;
    }
    this.showError(null);
    const asked = JSON.stringify(canonical(question));
    if (this.shared && JSON.stringify(this.shared.question) !== asked) this.shared = null;  // the form was edited
    const runId = ++this.runId;
    const t0 = performance.now();
    this.question = question;
    this.answer = null;
    this.scenarios = [];
    $('search-share').disabled = false;
    $('search-share-box').hidden = true;
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
      let done = 0;
      const status = () => `Simulating ${done} / ${scenarios.length} deployments on ${this.pool.size} workers…`;
      this.setStatus('running', status());
      const job = this.pool.map(scenarios, {
        centralOnly: true,
        budgetMs: POINT_BUDGET_MS,
        onPoint: (i, outcome) => {
          this.outcomes[i] = outcome;
          done += 1;
          this.setStatus('running', status());
          this.drawPending();
        },
        onProgress: (p) => { $('search-progress').value = p; },
      });
      this.job = job;
      const outcomes = await job.promise;
      this.setStatus('running', 'Ranking…');
      const results = outcomes.map((o) => (o.result ? o.result : { error: o.error }));
      const answer = await planner.searchRank(engineQuestion, results);
      if (runId !== this.runId) return;
      await this.addFrontIntervals(answer);
      if (runId !== this.runId) return;
      this.answer = answer;
      const ms = performance.now() - t0;
      $('search-progress').value = 1;
      this.setStatus('done', `${scenarios.length} deployments simulated in ${(ms / 1000).toFixed(1)} s`);
      this.onDone(ms);
    } catch (err) {
      if (runId !== this.runId) return;
      if (err && err.code === 'cancelled') this.setStatus('cancelled', 'Search cancelled');
      else {
        this.showError(`The search could not run: ${err.code ? `${err.code}${err.path ? ` at ${err.path}` : ''}: ` : ''}${err.message}`);
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
    const job = this.pool.map(rows.map((r) => this.scenarios[r.candidate]), { budgetMs: POINT_BUDGET_MS });
    this.job = job;
    const outcomes = await job.promise;
    rows.forEach((r, k) => {
      const km = outcomes[k].result && (outcomes[k].result.key_metrics || []).find((m) => m.id === 'ttft_p99_ms');
      if (!km || !Number.isFinite(km.low) || !Number.isFinite(km.high)) return;
      r.key_metrics = (r.key_metrics || []).filter((m) => m.id !== 'ttft_p99_ms');
      r.key_metrics.push({ id: 'ttft_p99_ms', value: r.ttft_p99_ms, low: km.low, high: km.high });
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

  share() {
    if (!this.question) return;
    const box = $('search-share-box');
    box.hidden = false;
    $('search-share-text').value = this.onShare({ question: this.question, answer: answerSummary(this.answer) });
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

  drawAnswer(a) {
    const box = $('search-answer');
    box.hidden = !a;
    if (!a) return;
    const best = a.cheapest_meeting_slo;
    const text = $('search-answer-text');
    box.dataset.candidate = best ? String(best.candidate) : '';
    if (!best) {
      text.textContent = `No simulated deployment meets the SLO at ${display(a.target_qps)} req/s within ${a.max_gpus} GPUs.`;
    } else {
      const usd = metricOf(best, 'usd_per_million_tokens');
      const ttft = metricOf(best, 'ttft_p99_ms');
      // Cost per token at a rate the deployment keeps up with is set by that rate, not by kernel
      // speed, so its bounds can coincide: say so rather than print a zero-width range.
      const range = (m) => {
        if (!Number.isFinite(m.low) || !Number.isFinite(m.high)) return '';
        if (display(m.low) === display(m.high)) return ' (the same at both interval bounds: set by the target rate)';
        return ` (80%: ${display(m.low)}–${display(m.high)})`;
      };
      text.replaceChildren(
        cell('strong', best.deployment),
        document.createTextNode(`: ${best.gpus} GPUs, $`),
        metricSpan('search_usd_per_million_tokens', usd.value),
        document.createTextNode(` per million tokens${range(usd)}, P99 TTFT `),
        metricSpan('search_ttft_p99_ms', ttft.value),
        document.createTextNode(` ms${range(ttft)}, P99 TPOT ${display(best.tpot_p99_ms)} ms at ${display(a.target_qps)} req/s. `));
      const open = document.createElement('button');
      open.type = 'button';
      open.className = 'mini';
      open.id = 'search-open-best';
      open.textContent = 'Open as serving simulation';
      open.addEventListener('click', () => this.open(best.candidate));
      text.append(open);
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
    const acc = a.accuracy || {};
    $('search-answer-note').textContent = `${acc.tier ? `Cost model tier: ${acc.tier}` : ''}${Number.isFinite(acc.expected_error_pct) ? ` (expected error ±${display(acc.expected_error_pct)}%)` : ''}. ${a.criterion || ''}`;
  }

  drawChart(ranked) {
    const chart = chartView('search-pareto', $('chart-search-pareto'), { height: 300 });
    const point = (r) => ({ x: r.ttft_p99_ms, y: r.usd_per_million_tokens, label: r.deployment, candidate: r.candidate });
    const okRows = ranked.filter((r) => Number.isFinite(r.ttft_p99_ms) && Number.isFinite(r.usd_per_million_tokens));
    const front = okRows.filter((r) => r.pareto).map(point).sort((p, q) => p.x - q.x);
    const meets = okRows.filter((r) => !r.pareto && r.meets_slo).map(point);
    const misses = okRows.filter((r) => !r.meets_slo).map(point);
    if (!okRows.length) {
      chart.clear('$ per million tokens vs P99 TTFT: no deployments yet');
      return;
    }
    const intervals = [];
    for (const r of okRows.filter((row) => row.pareto)) {
      const usd = metricOf(r, 'usd_per_million_tokens');
      const ttft = metricOf(r, 'ttft_p99_ms');
      if (Number.isFinite(ttft.low) && Number.isFinite(ttft.high)) intervals.push([{ x: ttft.low, y: usd.value }, { x: ttft.high, y: usd.value }]);
      if (Number.isFinite(usd.low) && Number.isFinite(usd.high)) intervals.push([{ x: ttft.value, y: usd.low }, { x: ttft.value, y: usd.high }]);
    }
    const series = [
      { label: 'Pareto front (meets the SLO)', points: front, line: true, color: '#d9534f', pointRadius: 6, order: 0 },
      { label: 'Meets the SLO', points: meets, color: '#2f6fdb', order: 1 },
      { label: 'Misses the SLO', points: misses, color: '#9aa6b8', order: 2 },
      ...intervals.map((pts) => ({ label: '80% interval', points: pts, line: true, color: '#d9534f', pointRadius: 0, order: 3 })),
    ];
    const build = () => {
      const cfg = xyConfig({ series, xLabel: 'P99 TTFT (ms)', yLabel: '$ per million tokens' });
      // One legend entry for all the interval bars; a click on a point opens it.
      cfg.options.plugins.legend.labels.filter = (item, data) => item.datasetIndex <= 3 || !data.datasets.slice(3, item.datasetIndex).some((d) => d.label === item.text);
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
    chart.render(build, `$ per million tokens against P99 TTFT for ${okRows.length} deployments; Pareto front: ${front.map((p) => p.label).join(', ') || 'none'}`);
  }

  drawTable(ranked) {
    const head = $('search-table').querySelector('thead');
    const hr = document.createElement('tr');
    for (const [text, cls] of [['#', 'num'], ['Deployment', ''], ['GPUs', 'num'], ['$ / h', 'num'], ['$ / M tokens', 'num'],
      ['P99 TTFT ms', 'num'], ['P99 TPOT ms', 'num'], ['SLO attainment', 'num'], ['Verdict', ''], ['Pareto', '']]) {
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
      const th = cell('th', r.deployment || `candidate ${r.candidate}`);
      th.scope = 'row';
      if (r.error !== undefined) {
        tr.append(cell('td', String(k + 1), 'num'), th, cell('td', String(r.gpus ?? ''), 'num'), cell('td', '', 'num'));
        const err = cell('td', typeof r.error === 'string' ? r.error : JSON.stringify(r.error), 'status-error');
        err.colSpan = 6;
        tr.append(err);
        return tr;
      }
      const usd = metricOf(r, 'usd_per_million_tokens');
      const usdCell = cell('td', '', 'num');
      usdCell.append(metricSpan(`search_row_usd_${r.candidate}`, usd.value));
      if (Number.isFinite(usd.low) && Number.isFinite(usd.high)) usdCell.append(cell('span', ` (${display(usd.low)}–${display(usd.high)})`, 'muted'));
      tr.append(cell('td', String(k + 1), 'num'), th, cell('td', String(r.gpus), 'num'), cell('td', display(r.usd_per_hour), 'num'), usdCell,
        cell('td', display(r.ttft_p99_ms), 'num'), cell('td', display(r.tpot_p99_ms), 'num'), cell('td', percent(r.slo_attainment), 'num'),
        cell('td', `${r.meets_slo ? 'meets' : 'misses'} (${r.verdict || '—'})`), cell('td', r.pareto ? 'yes' : '', 'front'));
      return tr;
    });
    $('search-table').querySelector('tbody').replaceChildren(...rows);
  }
}
