// The Search tab's answer view: the ranked answer read as people say it (the
// cheapest deployment meeting the SLO, or the best one within the GPU budget,
// at the question's percentile, with its 80% intervals), its launch command,
// the Pareto chart and the ranked table. A clicked point or row opens that
// deployment as a serving simulation (search.js open).
import { canonical } from './share.js';
import { chartView } from './charts/registry.js';
import { xyConfig } from './charts/xy.js';
import { LAUNCH_ENGINES, launchCommand } from './launch.js';
import { deploymentName, deploymentSettingsText, clipAxis } from './search-words.js';
import { display, percent } from './format.js';
import { $, cell, metricSpan } from './dom.js';
import { download, slug } from './export.js';
import { renderCalibrated } from './headline.js';

/** {value, low, high} of a ranked row's metric (low/high only where the engine computed the interval). */
export function metricOf(row, id) {
  const km = Array.isArray(row.key_metrics) ? row.key_metrics.find((k) => k.id === id) : null;
  if (km) return { value: km.value, low: km.low, high: km.high };
  return { value: row[id] };
}

/**
 * What a share link keeps of an answer: the cheapest deployment meeting the SLO and its numbers,
 * its latencies at the question's percentiles (the engine's ids, question_latencies).
 */
export function answerSummary(a) {
  if (!a) return null;
  const b = a.cheapest_meeting_slo;
  if (!b) return { deployment: null };
  const summary = { deployment: b.deployment, gpus: b.gpus, usd_per_million_tokens: b.usd_per_million_tokens };
  for (const { id } of Object.values(a.question_latencies || {})) summary[id] = b[id];
  return summary;
}

export class SearchAnswer {
  /** @param {import('./search.js').Search} search the tab, whose question, plan, outcomes and answer this view draws */
  constructor(search) {
    this.search = search;
    this.launchFor = null;  // the candidate whose launch command shows
  }

  /** Wires the launch command's engine picker and download, and a click on a table row. */
  init() {
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
    $('search-table').addEventListener('click', (e) => {
      const tr = e.target.closest('tr[data-candidate]');
      if (tr) this.search.open(Number(tr.dataset.candidate));
    });
  }

  /** The ranked answer of the search on screen (none while one runs): the answer, the Pareto chart and the table. */
  draw() {
    const a = this.search.answer;
    const ranked = (a && Array.isArray(a.ranked)) ? a.ranked : [];
    $('search-table-title').textContent = a ? `Ranked deployments (${ranked.length} simulated, ${a.space ? a.space.pruned : 0} layouts pruned)` : 'Ranked deployments';
    this.drawAnswer(a);
    this.drawChart(ranked);
    this.drawTable(ranked);
  }

  /**
   * The percentile the question judges TTFT or TPOT at ('p90'), as the engine decided it and wrote
   * it in its answer (question_percentiles, engine/search/deployment_search.hpp
   * question_percentile); P99 before an answer.
   */
  sloPercentile(metric) {
    const asked = this.search.answer && this.search.answer.question_percentiles;
    return (asked && asked[metric]) || 'p99';
  }

  /**
   * TTFT or TPOT at the question's percentile as the engine names it: its id in each row
   * ('tpot_p90_ms') and its words ('P90 TPOT'), from the answer, else the plan
   * (question_latencies, engine/search/deployment_search.hpp): the page spells neither. Every
   * latency the answer, the chart and the table quote is the engine's figure of this id: the page
   * computes none. Before a plan: no id, and the bare metric's name.
   */
  questionLatency(metric) {
    const named = (this.search.answer && this.search.answer.question_latencies)
      || (this.search.plan && this.search.plan.question_latencies);
    return (named && named[metric]) || { id: null, words: metric.toUpperCase() };
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
      const gpu = best.gpu || this.search.scenarios[best.candidate].hardware.gpu;
      const name = cell('strong', deploymentName(best, this.search.form.gpuName(gpu), this.search.form.gpuName(best.decode_gpu || gpu)));
      name.id = 'search-answer-name';
      const parts = [name, document.createTextNode(` (${best.gpus} GPU${best.gpus === 1 ? '' : 's'}; ${deploymentSettingsText(best)}): $`),
        metricSpan('search_usd_per_million_tokens', usd.value), document.createTextNode(` per million tokens${range(usd)}`)];
      if (budget) {
        const qps = metricOf(best, 'max_qps');
        parts.push(document.createTextNode(` at ${display(qps.value)} req/s${range(qps)}, its highest rate within the SLO.`));
      } else {
        // The latencies at the question's percentiles, with their 80% intervals, all the engine's.
        parts.push(document.createTextNode('; '));
        ['ttft', 'tpot'].forEach((m, k) => {
          const { id, words } = this.questionLatency(m);
          const v = metricOf(best, id);
          parts.push(document.createTextNode(`${k ? ', ' : ''}${words} `), metricSpan(`search_${id}`, v.value), document.createTextNode(` ms${range(v)}`));
        });
        parts.push(document.createTextNode(` at ${display(a.target_qps)} req/s. `));
      }
      const open = document.createElement('button');
      open.type = 'button';
      open.className = 'mini';
      open.id = 'search-open-best';
      open.textContent = 'Open as serving simulation';
      open.addEventListener('click', () => this.search.open(best.candidate));
      text.replaceChildren(...parts, open);
    }
    const shared = $('search-shared');
    const linked = this.search.shared && this.search.shared.answer;
    shared.hidden = !linked;
    if (linked) {
      const same = JSON.stringify(canonical(linked)) === JSON.stringify(canonical(answerSummary(a)));
      shared.dataset.same = String(same);
      const was = linked.deployment
        ? `${linked.deployment} at $${display(linked.usd_per_million_tokens)} per million tokens` : 'no deployment meeting the SLO';
      shared.textContent = `The shared link's answer: ${was}. ${same ? 'This page computed the same answer again.' : 'This page now computes a different answer (another engine version or calibration).'}`;
    }
    // "calibrated with NAME", from the engine's own result of the answer (every candidate ran with it).
    const priced = best && this.search.outcomes && this.search.outcomes[best.candidate];
    renderCalibrated($('search-calibrated'), priced && priced.result);
    const acc = a.accuracy || {};
    // How the answer was decided: the engine's own words for its rule (criterion_words), its
    // criterion in its keys as the tooltip, so a change of the rule changes the text here too.
    const how = a.criterion_words ? `How it was decided: ${a.criterion_words}` : '';
    const note = $('search-answer-note');
    note.textContent = `${acc.tier ? `Cost model tier: ${acc.tier}` : ''}${Number.isFinite(acc.expected_error_pct) ? ` (expected error ±${display(acc.expected_error_pct)}%)` : ''}.${how ? ` ${how}` : ''}`;
    note.title = a.criterion || '';
    this.launchFor = best ? best.candidate : null;
    $('search-launch').hidden = !best;
    this.showLaunch();
  }

  /** The chosen deployment's launch command, from the engine's resolved scenario. */
  async showLaunch() {
    const index = this.launchFor;
    const area = $('search-launch-text');
    if (!Number.isInteger(index) || !this.search.scenarios[index] || !this.search.pool) {
      area.value = '';
      return;
    }
    const scenario = this.search.scenarios[index];
    const engine = $('search-launch-engine').value;
    const row = this.search.answer && (this.search.answer.ranked || []).find((r) => r.candidate === index);
    let resolved;
    try {
      resolved = await this.search.pool.clients[0].validate(JSON.stringify(scenario));
    } catch (err) {
      area.value = `# The engine could not resolve this deployment: ${err.message}`;
      return;
    }
    if (this.launchFor !== index || $('search-launch-engine').value !== engine) return;  // changed meanwhile
    const model = this.search.form.models && this.search.form.models.get(scenario.model);
    // A mixed deployment's decode pool runs on its own GPU: name both.
    const other = scenario.serving.cluster.pools.find((p) => p.gpu && p.gpu !== scenario.hardware.gpu);
    const gpuName = other ? `${this.search.form.gpuName(scenario.hardware.gpu)} (prefill) and ${this.search.form.gpuName(other.gpu)} (${other.role || 'decode'})`
      : this.search.form.gpuName(scenario.hardware.gpu);
    area.value = launchCommand(engine, {
      resolved, label: row ? row.deployment : `candidate ${index}`, model, gpuName,
      router: resolved.serving && resolved.serving.cluster && resolved.serving.cluster.router,
    });
    area.dataset.candidate = String(index);
    area.dataset.engine = engine;
  }

  /**
   * The Pareto chart's x axis: the engine's front axis (pareto_axes[1]): the highest rate within the
   * SLO (the budget question), else TTFT at the question's percentile (a P90 question's front is
   * ranked and drawn on P90). {key, name, label, of(row), interval(row)}: each row's figure and its
   * 80% interval, both from the engine's answer.
   */
  chartAxis(budget) {
    if (budget) return { key: 'max_qps', name: 'highest rate', label: 'Highest rate within the SLO (req/s)', of: (r) => r.max_qps, interval: (r) => metricOf(r, 'max_qps') };
    const axes = this.search.answer && this.search.answer.pareto_axes;
    const key = (axes && axes[1]) || this.questionLatency('ttft').id;
    const name = this.questionLatency('ttft').words;
    return { key, name, label: `${name} (ms)`, of: (r) => r[key], interval: (r) => metricOf(r, key) };
  }

  drawChart(ranked) {
    const budget = this.search.answer ? !Number.isFinite(this.search.answer.target_qps) : this.search.question && !Number.isFinite(this.search.question.target_qps);
    const axis = this.chartAxis(budget);
    const title = budget ? '$ per million tokens vs highest rate within the SLO' : `$ per million tokens vs ${axis.name}`;
    $('search-pareto-title').textContent = title;
    const chart = chartView('search-pareto', $('chart-search-pareto'), { height: 300 });
    const chartEl = $('chart-search-pareto');
    chartEl.dataset.axis = axis.key;
    const okRows = ranked.filter((r) => Number.isFinite(axis.of(r)) && Number.isFinite(r.usd_per_million_tokens) && (!budget || axis.of(r) > 0));
    if (!okRows.length) {
      chart.clear(`$ per million tokens vs ${budget ? 'highest rate' : axis.name}: no deployments yet`);
      return;
    }
    // A miss far out (80 s beside answers under 1 s) would squash every other point against the
    // axis: the axis ends past the deployments that meet the SLO and the far misses sit at its edge.
    const slo = this.search.question && this.search.question.base.serving.slo;
    const clip = budget ? { max: null, clipped: 0 }
      : clipAxis(okRows.filter((r) => r.meets_slo).map(axis.of), okRows.map(axis.of), slo && slo.ttft_ms);
    const isFar = (r) => clip.max !== null && axis.of(r) > clip.max;
    const point = (r) => {
      const far = isFar(r);
      return { x: far ? clip.max : axis.of(r), y: r.usd_per_million_tokens, label: far ? `${r.deployment} (${axis.name} ${display(axis.of(r))} ms, past the axis)` : r.deployment, candidate: r.candidate };
    };
    const front = okRows.filter((r) => r.pareto).map(point).sort((p, q) => p.x - q.x);
    const meets = okRows.filter((r) => !r.pareto && r.meets_slo).map(point);
    const misses = okRows.filter((r) => !r.meets_slo && !isFar(r)).map(point);
    const far = okRows.filter((r) => !r.meets_slo && isFar(r)).map(point);
    const intervals = [];
    for (const r of okRows.filter((row) => row.pareto)) {
      const usd = metricOf(r, 'usd_per_million_tokens');
      const x = axis.interval(r);
      const cap = (v) => (clip.max !== null ? Math.min(v, clip.max) : v);
      if (Number.isFinite(x.low) && Number.isFinite(x.high)) intervals.push([{ x: cap(x.low), y: usd.value }, { x: cap(x.high), y: usd.value }]);
      if (Number.isFinite(usd.low) && Number.isFinite(usd.high)) intervals.push([{ x: cap(axis.of(r)), y: usd.low }, { x: cap(axis.of(r)), y: usd.high }]);
    }
    chartEl.dataset.xIntervals = String(intervals.filter((pts) => pts[0].y === pts[1].y).length);
    const series = [
      { label: 'Pareto front (meets the SLO)', points: front, line: true, color: '#d9534f', pointRadius: 6, order: 0 },
      { label: 'Meets the SLO', points: meets, color: '#2f6fdb', order: 1 },
      { label: 'Misses the SLO', points: misses, color: '#9aa6b8', order: 2 },
      { label: 'Misses, far past the axis (drawn at its edge)', points: far, color: '#9aa6b8', pointStyle: 'triangle', pointRadius: 6, order: 2 },
      ...intervals.map((pts) => ({ label: '80% interval', points: pts, line: true, color: '#d9534f', pointRadius: 0, pointStyle: 'line', order: 3 })),
    ];
    chartEl.dataset.clippedPoints = String(clip.clipped);
    chartEl.dataset.axisMax = clip.max === null ? '' : String(clip.max);
    $('search-pareto-note').textContent = `Red: the Pareto front among deployments meeting the SLO, with 80% intervals where computed. Blue: other deployments meeting it. Grey: deployments that miss it${clip.clipped ? `; the ${clip.clipped} triangle${clip.clipped === 1 ? '' : 's'} at the right edge ${clip.clipped === 1 ? 'is a miss' : 'are misses'} with a ${axis.name} past ${display(clip.max)} ms` : ''}. Click a point (or a table row) to open it as a serving simulation.${budget ? '' : this.askedNote()}`;
    const build = () => {
      const cfg = xyConfig({ series, xLabel: axis.label, yLabel: '$ per million tokens', range: clip.max !== null ? { x: [0, clip.max] } : {} });
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
        if (hit) this.search.open(hit.candidate);
      };
      return cfg;
    };
    chart.render(build, `$ per million tokens against ${budget ? 'the highest rate within the SLO' : axis.name} for ${okRows.length} deployments; Pareto front: ${front.map((p) => p.label).join(', ') || 'none'}`);
  }

  /** Beside the chart: the question's percentiles other than P99, which the front is ranked and drawn on. */
  askedNote() {
    const asked = ['ttft', 'tpot'].filter((m) => this.sloPercentile(m) !== 'p99').map((m) => this.questionLatency(m).words);
    if (!asked.length) return '';
    const ttft = this.sloPercentile('ttft');
    const drawn = ttft === 'p99' ? '' : ` The engine ranks its front on the question's ${ttft.toUpperCase()} TTFT, and the chart draws it there (its 80% interval from the Pareto deployments' runs at the low and high cost bounds).`;
    return `${drawn} The table and the answer quote the question's ${asked.join(' and ')}.`;
  }

  drawTable(ranked) {
    const budget = this.search.answer && !Number.isFinite(this.search.answer.target_qps);
    const latencies = budget ? [] : ['ttft', 'tpot'].map((m) => this.questionLatency(m));
    const head = $('search-table').querySelector('thead');
    const hr = document.createElement('tr');
    const cols = budget
      ? [['#', 'num'], ['Deployment', ''], ['GPUs', 'num'], ['$ / h', 'num'], ['$ / M tokens', 'num'], ['Highest rate req/s', 'num'], ['Verdict', ''], ['Pareto', '']]
      : [['#', 'num'], ['Deployment', ''], ['GPUs', 'num'], ['$ / h', 'num'], ['$ / M tokens', 'num'],
        ...latencies.map((l) => [`${l.words} ms`, 'num']), ['SLO attainment', 'num'], ['Verdict', ''], ['Pareto', '']];
    for (const [text, cls] of cols) {
      const th = cell('th', text, cls);
      th.scope = 'col';
      hr.append(th);
    }
    head.replaceChildren(hr);
    const nameOf = (r) => {
      const gpu = this.search.scenarios[r.candidate] ? this.search.scenarios[r.candidate].hardware.gpu : '';
      return gpu ? deploymentName(r, this.search.form.gpuName(gpu), this.search.form.gpuName(r.decode_gpu || gpu)) : r.deployment || `candidate ${r.candidate}`;
    };
    const names = ranked.map(nameOf);
    const rows = ranked.map((r, k) => {
      const tr = document.createElement('tr');
      tr.dataset.candidate = String(r.candidate);
      tr.title = 'Open this deployment as a serving simulation';
      tr.classList.toggle('on-front', Boolean(r.pareto));
      tr.classList.toggle('misses', !r.meets_slo);
      const th = cell('th', names[k]);
      th.title = `${r.deployment}: ${deploymentSettingsText(r)}`;
      // Rows of one layout that differ only in their settings (batch limit, chunking) say them.
      if (names.indexOf(names[k]) !== names.lastIndexOf(names[k])) th.append(cell('span', ` · ${deploymentSettingsText(r)}`, 'muted'));
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
        for (const l of latencies) tr.append(cell('td', display(r[l.id]), 'num'));
        tr.append(cell('td', percent(r.slo_attainment), 'num'));
      }
      tr.append(cell('td', `${r.meets_slo ? 'meets' : 'misses'} (${r.verdict || '—'})`), cell('td', r.pareto ? 'yes' : '', 'front'));
      return tr;
    });
    $('search-table').querySelector('tbody').replaceChildren(...rows);
  }
}
