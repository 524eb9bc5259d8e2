// The Search tab's question view: the form of a deployment-search question
// (workload, model, rate, SLO and how each bound is judged, the axes, the GPU
// types with their prices), filled from the engine's presets, from a workload
// preset or from a shared link, and read back as the question
// (search-question.js buildQuestion). The run is search.js's.
import { $ } from './dom.js';
import { defaultIntraNode, groupGpus, ownNodeGpus } from './gpu-links.js';
import { buildQuestion, formValuesOf, meanLength } from './search-question.js';
import { parameterAt, labelParameters } from './catalogue.js';

// Prices prefilled for a first question, as in examples/search-llama3-70b.json
// (the user's price is an input of the question, never a computed number).
const EXAMPLE_PRICES = new Map([['h100-sxm', 3.0], ['h200', 3.8], ['a100-80g-sxm', 1.8]]);

/** Selects `value` in the select `id` when it is one of its options (a link is untrusted), else 'joint'. */
function choose(id, value) {
  const select = $(id);
  select.value = [...select.options].some((o) => o.value === value) ? value : 'joint';
}

export class SearchForm {
  /** @param {{onModel: (id: string) => void}} options onModel shows what the engine understood of the model chosen. */
  constructor({ onModel }) {
    this.onModel = onModel;
    this.workloads = new Map();  // serving-simulation presets the workload comes from, by id
    this.models = new Map();
    this.gpus = new Map();
    this.gpuIds = [];
    this.links = [];
  }

  /** Fills the question form from the engine's presets, and shows the default workload's model, rate and SLO. */
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
    // The SLO's fields edit the base scenario's serving.slo: their words are the schema's, as in the serving form.
    labelParameters();
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

  /** The form's inputs as search-question.js buildQuestion reads them. */
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

  /** Fills the form from a question this page made (search-question.js isQuestion). */
  fill(question) {
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
  }

  /** The question in the form (a QuestionError names the input it cannot read). */
  readQuestion() {
    const question = buildQuestion(this.formValues());
    question.workload_from = $('q-workload').value;
    return question;
  }

  /** The GPU's name as people know it ("NVIDIA H200"), else its id. */
  gpuName(id) {
    const g = this.gpus && this.gpus.get(id);
    return (g && g.name) || id;
  }
}
