// Preset scenarios as people read them: grouped by mode (latency, serving
// simulation, training, validation against published runs), each with a plain
// name made from its title and what it runs ("Medium-load API: Llama-2-7B,
// 1×A100, 10 req/s"); the suite id (I2.2) stays a secondary label.
import { formSection } from './form.js';
import { rateText } from './format.js';

/** The page's modes, in tab order: [mode, tab label]. 'search' opens the Search tab, not a preset. */
export const MODES = [
  ['latency', 'Latency'],
  ['simulate', 'Serving simulation'],
  ['training', 'Training'],
  ['search', 'Deployment search'],
];

const GROUPS = {
  latency: 'Latency: one batch, no queue',
  simulate: 'Serving simulation: requests over time',
  training: 'Training: one optimizer step',
  validation: 'Published measurements (the prediction is checked against them)',
};

/** 'latency' | 'simulate' | 'training' of a scenario. */
export const modeOf = (scenario) => formSection(scenario);

/** Validation presets (V.*, and E.* from presets/validation) reproduce a published measurement. */
export const isValidation = (scenario) => typeof scenario.id === 'string' && /^[VE]\./.test(scenario.id);

function shortGpu(gpu, gpus) {
  if (gpu && typeof gpu === 'object') return String(gpu.name || gpu.id || 'custom GPU');
  const record = gpus.get(gpu);
  const name = String((record && record.name) || gpu || 'GPU').replace(/^(NVIDIA|AMD)\s+/, '');
  return name.split(/\s+/)[0];
}

function modelName(model, models) {
  const id = typeof model === 'string' ? model : model && typeof model === 'object' && model.preset;
  if (!id) return 'custom model';
  const record = models.get(id);
  return String((record && record.name) || id);
}

/** "Title: model, N×GPU, what it runs" for a preset scenario. */
export function plainName(s, { models = new Map(), gpus = new Map() } = {}) {
  const title = String(s.title || s.id || 'Scenario');
  if (isValidation(s)) return title;
  const hw = s.hardware || {};
  const count = (Number(hw.gpus_per_node) || 1) * (Number(hw.nodes) || 1);
  const parts = [modelName(s.model, models), `${count}×${shortGpu(hw.gpu, gpus)}`];
  const mode = modeOf(s);
  const w = (s.serving && s.serving.workload) || {};
  if (mode === 'simulate') {
    const rate = w.arrival && w.arrival.rate_qps;
    if (typeof rate === 'number') parts.push(rateText(rate));
    else if (w.arrival && w.arrival.process === 'all_at_once') parts.push('offline batch');
  } else if (mode === 'latency') {
    if (typeof w.prompt_tokens === 'number' && typeof w.output_tokens === 'number') parts.push(`${w.prompt_tokens}→${w.output_tokens} tokens`);
    if (typeof w.batch_size === 'number' && w.batch_size > 1) parts.push(`batch ${w.batch_size}`);
  } else {
    const seq = s.training && s.training.batch && s.training.batch.seq_len;
    if (typeof seq === 'number') parts.push(`${seq}-token sequences`);
  }
  return `${title}: ${parts.join(', ')}`;
}

function groupOf(s) {
  return isValidation(s) ? 'validation' : modeOf(s);
}

/** Fills the preset picker: one <optgroup> per mode, plain names, the suite id after them. */
export function fillPicker(select, scenarios, catalog) {
  const groups = new Map(Object.keys(GROUPS).map((g) => [g, []]));
  for (const s of scenarios) groups.get(groupOf(s)).push(s);
  const nodes = [];
  for (const [g, list] of groups) {
    if (!list.length) continue;
    const og = document.createElement('optgroup');
    og.label = GROUPS[g];
    for (const s of list) {
      const o = document.createElement('option');
      o.value = s.id;
      o.textContent = `${plainName(s, catalog)} · ${s.id}`;
      o.dataset.mode = modeOf(s);
      if (s.source) o.title = s.source;
      og.append(o);
    }
    nodes.push(og);
  }
  select.replaceChildren(...nodes);
}

/**
 * Scenarios and measurements of the validation presets (presets/validation): a
 * record either holds its scenario or names a scenario preset (V.*). Returns
 * {scenarios: the inline ones, as pickable presets; measured: Map(scenario id -> record)}.
 * Capacity rows ("check": "capacity", MLPerf Server) are left out: their check is a
 * max-QPS search of about a million requests, past the page's work budget, that
 * `sightline report-e2e --check capacity` runs natively.
 */
export function validationPresets(records) {
  const scenarios = [];
  const measured = new Map();
  for (const v of Array.isArray(records) ? records : []) {
    if (!v || typeof v !== 'object' || !Number.isFinite(v.measured) || typeof v.metric !== 'string') continue;
    if (v.check === 'capacity') continue;
    if (v.scenario && typeof v.scenario === 'object') {
      const s = { ...v.scenario, id: v.scenario.id || v.id, title: v.scenario.title || v.title, source: v.scenario.source || v.source };
      scenarios.push(s);
      measured.set(s.id, v);
    } else if (typeof v.scenario_preset === 'string') measured.set(v.scenario_preset, v);
  }
  return { scenarios, measured };
}
