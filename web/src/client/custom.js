// Your own model and GPU. The model picker offers "Your own model": a Hugging
// Face config.json pasted or uploaded as published, sent to the engine as
// {"model": {"hf_config": {...}}}; a typed hub id gets an explanation (the page
// runs offline and cannot fetch it) and a link to the file. The GPU picker
// offers "Custom GPU": peaks per dtype, memory, bandwidth, SMs, link and power,
// sent as an inline GPU spec, which the engine prices on the cross-generation
// tier. Both live in the scenario, so they travel in share links. Text from
// the user only reaches the page through value / textContent.
import { $ } from './dom.js';
import { FROM_THE_MODEL } from './form.js';
import { groupThousands } from './format.js';
import { quoteNonstandardLiterals } from './json-literals.js';

export const HF_OPTION = '__hf_config__';
export const GPU_OPTION = '__custom_gpu__';
const CUSTOM_GPU_ID = 'custom-gpu';
const MAX_CONFIG_CHARS = 256 * 1024;

// [input id, key path in the GPU spec]; each field's words are the engine's for that key.
const GPU_FIELDS = [
  ['cg_bf16', ['peak_tflops', 'bf16']], ['cg_fp16', ['peak_tflops', 'fp16']], ['cg_fp8', ['peak_tflops', 'fp8']],
  ['cg_int8', ['peak_tflops', 'int8']], ['cg_memory', ['memory_GiB']], ['cg_bandwidth', ['hbm_bandwidth_GBps']],
  ['cg_sms', ['sm_count']], ['cg_link', ['nvlink_bandwidth_GBps']], ['cg_tdp', ['tdp_W']],
];

/** The scenario pointer the custom GPU's field `id` writes (its words' key in the schema), or null. */
export function customGpuPointer(id) {
  const found = GPU_FIELDS.find(([fieldId]) => fieldId === id);
  return found ? `/hardware/gpu/${found[1].join('/')}` : null;
}

let gpuPresets = new Map();
let modelPresets = new Map();
let baseGpu = null;       // the spec the custom GPU starts from (a preset's, or the scenario's own)
let lastPresetGpu = null; // the preset chosen before "Custom GPU"
let problem = null;       // a located error of the inputs here, shown instead of running

function option(value, text) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = text;
  return o;
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Adds the two options and wires the panels. */
export function init({ gpus, models = [] }) {
  gpuPresets = new Map(gpus.map((g) => [g.id, g]));
  modelPresets = new Map(models.map((m) => [m.id, m]));
  $('model').append(option(HF_OPTION, 'Your own model: Hugging Face config.json…'));
  $('gpu').append(option(GPU_OPTION, 'Custom GPU: your own numbers…'));
  $('gpu').addEventListener('focus', () => { if (gpuPresets.has($('gpu').value)) lastPresetGpu = $('gpu').value; });
  $('gpu').addEventListener('change', () => {
    if ($('gpu').value === GPU_OPTION) startCustomGpu();
    else lastPresetGpu = $('gpu').value;
    showPanels();
  });
  $('model').addEventListener('change', showPanels);
  // A model preset that carries its checkpoint's quantization (gpt-oss's mxfp4) runs in it, as a pasted config does.
  $('model').addEventListener('change', () => {
    const m = modelPresets.get($('model').value);
    if (m) adoptCheckpointPrecision(checkpointQuant(m));
  });
  $('hf_id').addEventListener('input', explainHubId);
  $('hf_config').addEventListener('input', () => notePrecision({ adopt: true }));
  $('hf-upload').addEventListener('click', () => $('hf-file').click());
  $('hf-file').addEventListener('change', async (e) => {
    const file = e.target.files && e.target.files[0];
    e.target.value = '';
    if (!file) return;
    $('hf_config').value = file.size > MAX_CONFIG_CHARS ? '' : await file.text();
    // A file past the limit is refused with this message (the note below would clear it).
    if (file.size > MAX_CONFIG_CHARS) $('hf-note').textContent = `${file.name} is larger than a config.json can be (${MAX_CONFIG_CHARS / 1024} KiB).`;
    else notePrecision({ adopt: true });
    $('hf_config').dispatchEvent(new Event('change', { bubbles: true }));
  });
}

function showPanels() {
  $('hf-panel').hidden = $('model').value !== HF_OPTION;
  $('gpu-panel').hidden = $('gpu').value !== GPU_OPTION;
  nameWeightsSource();
}

/**
 * The Weights field's empty choice says where the precision comes from: a pasted
 * config that states its quantization, "From the config (mxfp4)"; else "From the model".
 */
function nameWeightsSource() {
  const empty = $('weights').querySelector('option[value=""]');
  if (!empty) return;
  let q = null;
  if ($('model').value === HF_OPTION) {
    try {
      q = checkpointQuant(JSON.parse($('hf_config').value));
    } catch (_) { /* no config yet */ }
  }
  empty.textContent = q ? `From the config${typeof q.quant_method === 'string' ? ` (${q.quant_method})` : ''}` : FROM_THE_MODEL;
}

/** The custom GPU starts from the preset chosen before it (its numbers are a fair template). */
function startCustomGpu() {
  const from = gpuPresets.get(lastPresetGpu) || gpuPresets.values().next().value || null;
  if (!baseGpu && from) {
    // The preset's measured kernel data (its `calibration`) belong to that part:
    // a custom GPU is its typed numbers and is priced from its spec sheet alone.
    const { id, source, name, calibration, ...spec } = structuredClone(from);
    baseGpu = { ...spec, name: `Custom (from ${name || id})` };
    showGpu(baseGpu);
  }
}

function showGpu(spec) {
  $('cg_name').value = String(spec.name || '');
  for (const [id, keys] of GPU_FIELDS) {
    const v = keys.reduce((o, k) => (isObject(o) ? o[k] : undefined), spec);
    $(id).value = typeof v === 'number' ? String(v) : '';
  }
}

/** Shows a scenario's own model and GPU in the panels when they are inline. */
export function fill(scenario) {
  const model = scenario && scenario.model;
  if (isObject(model) && isObject(model.hf_config)) {
    $('model').value = HF_OPTION;
    $('hf_config').value = JSON.stringify(model.hf_config, null, 2);
    notePrecision();
  }
  const gpu = scenario && scenario.hardware && scenario.hardware.gpu;
  if (isObject(gpu)) {
    $('gpu').value = GPU_OPTION;
    baseGpu = structuredClone(gpu);
    showGpu(baseGpu);
  } else {
    if (typeof gpu === 'string') lastPresetGpu = gpu;
    baseGpu = null;
  }
  showPanels();
}

function numberOf(id) {
  const t = $(id).value.trim();
  if (t === '') return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : t;  // not a number: the engine reports a located type error
}

/** The custom GPU spec from the inputs. */
function customGpu() {
  const spec = structuredClone(baseGpu || {});
  spec.id = CUSTOM_GPU_ID;
  const name = $('cg_name').value.trim();
  if (name) spec.name = name;
  else delete spec.name;
  spec.peak_tflops = isObject(spec.peak_tflops) ? spec.peak_tflops : {};
  for (const [id, keys] of GPU_FIELDS) {
    const target = keys.length === 2 ? spec.peak_tflops : spec;
    const key = keys[keys.length - 1];
    const v = numberOf(id);
    if (v === undefined) delete target[key];
    else target[key] = v;
  }
  return spec;
}

/** A Hugging Face model id: org/model. */
const HUB_ID = /^([\w.-]+)\/([\w.-]+)$/;

/** Reads the config.json text: {config} or {error} located at /model/hf_config. */
function parseConfig() {
  const text = $('hf_config').value.trim();
  const at = (message, code = 'invalid_value') => ({ error: { code, path: '/model/hf_config', message } });
  if (!text) {
    const id = $('hf_id').value.trim();
    return at(id ? `the page cannot fetch ${id} from the Hugging Face hub: download its config.json and paste or upload it`
      : 'paste or upload the model\'s config.json', 'missing_key');
  }
  if (text.length > MAX_CONFIG_CHARS) return at(`config.json is longer than ${MAX_CONFIG_CHARS / 1024} KiB`);
  let config;
  try {
    config = JSON.parse(text);
  } catch (err) {
    // Python's json module writes Infinity and NaN, and some published files
    // carry them (Nemotron-H): read them as strings, as the engine does, which
    // warns about them.
    const quoted = quoteNonstandardLiterals(text);
    try {
      if (quoted === text) throw err;
      config = JSON.parse(quoted);
    } catch (_) {
      return at(`config.json is not valid JSON: ${err.message}`, 'invalid_json');
    }
  }
  if (!isObject(config)) return at('config.json must be a JSON object', 'type_error');
  return { config };
}

/**
 * Puts the model and GPU of the panels into `scenario` (the form wrote the
 * option values there). Returns the scenario; problem() tells what stops it.
 */
export function apply(scenario) {
  problem = null;
  if ($('model').value === HF_OPTION) {
    const r = parseConfig();
    if (r.error) problem = r.error;
    else {
      // A typed hub id names the model in the results, as transformers records it (`_name_or_path`),
      // unless the file names itself.
      const id = $('hf_id').value.trim();
      if (HUB_ID.test(id) && r.config._name_or_path === undefined) r.config._name_or_path = id;
      scenario.model = { hf_config: r.config };
    }
  }
  if ($('gpu').value === GPU_OPTION) {
    scenario.hardware = isObject(scenario.hardware) ? scenario.hardware : {};
    scenario.hardware.gpu = customGpu();
  }
  return scenario;
}

export const currentProblem = () => problem;

/** Highlights the panel input an error path points at; returns its id or null. */
export function markInvalid(path) {
  let id = null;
  if (typeof path === 'string') {
    if (path.startsWith('/model/hf_config')) id = 'hf_config';
    const m = path.match(/^\/hardware\/gpu\/(.+)$/);
    if (m) {
      const keys = m[1].split('/');
      const found = GPU_FIELDS.find(([, k]) => k.join('/') === keys.slice(0, k.length).join('/'));
      id = found ? found[0] : (keys[0] === 'name' ? 'cg_name' : null);
    }
  }
  for (const input of document.querySelectorAll('#hf-panel .invalid, #gpu-panel .invalid')) {
    input.classList.remove('invalid');
    input.removeAttribute('aria-invalid');
  }
  if (!id || $(id).closest('[hidden]')) return null;
  $(id).classList.add('invalid');
  $(id).setAttribute('aria-invalid', 'true');
  return id;
}

/** A typed hub id: say why the page cannot fetch it and where the file is. */
function explainHubId() {
  const id = $('hf_id').value.trim();
  const note = $('hf-id-note');
  const m = id.match(HUB_ID);
  note.hidden = !id;
  if (!id) return;
  if (!m) {
    note.textContent = 'A Hugging Face model id looks like org/model (for example meta-llama/Llama-3.1-8B).';
    return;
  }
  const url = `https://huggingface.co/${encodeURIComponent(m[1])}/${encodeURIComponent(m[2])}/blob/main/config.json`;
  const link = document.createElement('a');
  link.href = url;
  link.target = '_blank';
  link.rel = 'noopener noreferrer';
  link.textContent = url;
  note.replaceChildren(
    'This page runs entirely in your browser and cannot download from the Hugging Face hub. Download ',
    link, ' (gated models need you to sign in there), then paste it or upload it below.');
}

/**
 * What the config says about its weights. A checkpoint that states its own
 * quantization (gpt-oss's mxfp4, DeepSeek-V3's fp8 blocks) runs in it: the
 * Weights (and, when the config states one, KV cache) choice goes back to
 * "From the model", which leaves the key out for the engine to take the
 * config's; choosing a dtype afterwards overrides it. `adopt`: only when the
 * user pastes or uploads a config (a scenario loaded with its own precision keeps it).
 */
function notePrecision({ adopt = false } = {}) {
  let config = null;
  try {
    config = JSON.parse($('hf_config').value);
  } catch (_) { /* said when it runs */ }
  const parts = [];
  if (isObject(config)) {
    if (typeof config.torch_dtype === 'string') parts.push(`torch_dtype ${config.torch_dtype}`);
    const q = checkpointQuant(config);
    if (q) {
      const bits = q.bits ?? q.w_bit ?? (q.load_in_4bit ? 4 : q.load_in_8bit ? 8 : undefined);
      parts.push(`quantization ${[q.quant_method, bits !== undefined ? `${bits}-bit` : '', q.group_size ?? q.q_group_size ? `group ${q.group_size ?? q.q_group_size}` : '']
        .filter(Boolean).join(', ')}: Weights follow it ("From the config"); choose a dtype to override`);
      if (adopt) adoptCheckpointPrecision(q);
    }
  }
  $('hf-note').textContent = parts.length ? `The config says ${parts.join('; ')}.` : '';
  nameWeightsSource();
}

/** The quantization block a config or model preset carries, or null. */
function checkpointQuant(config) {
  if (!isObject(config)) return null;
  if (isObject(config.quantization_config)) return config.quantization_config;
  return isObject(config.compression_config) ? config.compression_config : null;
}

/** Weights (and a stated KV cache dtype) back to "From the model" for a quantized checkpoint. */
function adoptCheckpointPrecision(q) {
  if (!q) return;
  fromTheModel('weights');
  if (isObject(q.kv_cache_scheme) || typeof q.kv_cache_quant_algo === 'string') fromTheModel('kv_cache');
}

/** Sets a precision select to its "From the model" choice, as the user would. */
function fromTheModel(id) {
  const select = $(id);
  if (!select || select.value === '' || ![...select.options].some((o) => o.value === '')) return;
  select.value = '';
  select.dispatchEvent(new Event('change', { bubbles: true }));
}

const fmtB = (v) => `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} B`;

/**
 * "What was understood" of the scenario's model (a pasted config, a preset or
 * an architecture): family, layers by kind, heads, experts, parameters (the
 * embedding apart), KV bytes per token at 4K / 32K / 128K, the weight format
 * from the config, and what was ignored and why; the summary line says the gist while
 * the list is folded. `m` is api::inspect_model's result; null hides the panel.
 * A pasted config opens the list. Text only (textContent). `prefix` names
 * another panel of the same shape (the Search tab's: 'q-').
 */
export function showUnderstood(m, prefix = '') {
  const details = $(`${prefix}understood`);
  const box = $(`${prefix}hf-understood`);
  if (!m) {
    details.hidden = true;
    box.hidden = true;
    box.replaceChildren();
    return;
  }
  const line = (label, text) => {
    const p = document.createElement('p');
    p.dataset.item = label;
    const b = document.createElement('strong');
    b.textContent = `${label}: `;
    p.append(b, text);
    return p;
  };
  const layers = m.layers_by_kind.map((g) => `${g.count} × ${g.mixer}${g.attention ? ` (${g.attention})` : ''} + ${g.ffn}`).join(', ');
  const h = m.heads;
  const family = m.family === 'architecture' ? 'given as an architecture' : m.family;
  const rows = [];
  if (m.name) rows.push(line('Model', m.name));
  rows.push(
    line('Family', `${family} (${m.layers} layers)`),
    line('Layers', layers),
    line('Heads', `${h.query} query / ${h.kv} KV (${h.kind}), head dim ${h.head_dim}${h.attention_sinks ? ', attention sinks' : ''}`),
  );
  if (m.experts) rows.push(line('Experts', `${m.experts.routed} routed, ${m.experts.shared} shared, top-${m.experts.top_k}`));
  if (m.mtp_layers > 0) rows.push(line('MTP layers', String(m.mtp_layers)));
  const params = `${fmtB(m.params.total_B)} total, ${fmtB(m.params.active_B)} active, embedding ${fmtB(m.params.embedding_B)} (not in active)`;
  rows.push(line('Parameters', params));
  const kv = ['4K', '32K', '128K'].map((k) => `${k}: ${groupThousands(m.kv_cache.at[k].bytes_per_token)}`).join(', ');
  rows.push(line('KV bytes/token', `${kv} (${m.kv_cache.dtype}, one GPU)`));
  rows.push(line('Weights', `${m.weights.dtype}${m.weights.from_config ? ` — ${m.weights.from_config}` : ''}`));
  if (m.ignored_parts.length) rows.push(line('Ignored', m.ignored_parts.join('; ')));
  // The keys set aside, with why (grouped by reason, as the CLI prints them).
  if (m.ignored_keys.length) rows.push(line('Keys without effect', (m.ignored_why.length ? m.ignored_why : m.ignored_keys).join('; ')));
  for (const w of m.warnings) rows.push(line('Warning', w));
  box.replaceChildren(...rows);
  box.hidden = false;
  const who = m.name || m.family;
  $(`${prefix}understood-summary`).textContent = `Understood: ${who}, ${m.layers} layers, ${fmtB(m.params.total_B)} parameters` +
    `${m.experts ? ` (${fmtB(m.params.active_B)} active)` : ''}, ${m.weights.dtype} weights` +
    `${m.warnings.length ? `, ${m.warnings.length} warning${m.warnings.length > 1 ? 's' : ''}` : ''}`;
  if (!prefix && $('model').value === HF_OPTION) details.open = true;
  details.hidden = false;
}
