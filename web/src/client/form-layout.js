// The scenario form's rows, each field once: where it sits (fieldset, row) and
// in what order; only layout is kept here. FIELDS (form-fields.js) says which
// JSON pointer a field edits and its kind, from which its control is made (a
// select, a number input with an integer or decimal keypad, a checkbox, a group
// of checkboxes). The engine's parameter schema (catalogue.js) gives, by that
// pointer, its range, default and choices and its words: label, unit and help
// (engine/scenario/parameter_words.cpp), which labelForm() writes once the
// catalogue is loaded; the custom GPU's fields, which are not FIELDS, take the
// words of the GPU document's keys they write (custom.js's customGpuPointer).
// The page keeps no words of a form field: every field edits a scenario key.
// The Search tab's question keeps the words of its own fields (target rate, GPU
// budget, the axes: a search question's, not a scenario's) in
// panels/search.html; its SLO fields edit the base scenario's serving.slo and
// take the schema's words (catalogue.js labelParameters).
// index.html holds only a placeholder per part (<div data-form-part="NAME">),
// which renderForm() replaces. tests/web/form_layout.test.mjs compares the
// rendered form with FIELDS, this layout and the schema's words.
import { FIELDS } from './form.js';
import { parameterWords, writeFieldWords } from './catalogue.js';
import { customGpuPointer } from './custom.js';

/**
 * A field: its id in FIELDS; options: section (when it differs from its
 * fieldset's), min, placeholder, inputmode (null: none), the options of a
 * checkbox group ([value, text]) and their name, `of` (which element of an
 * array the field edits, put before the schema's label: 'Prefill' replicas),
 * and kind, for a field that is not one of FIELDS (the custom GPU's).
 */
const field = (id, options = {}) => ({ type: 'field', id, ...options });
/** Fields side by side, in 2, 3 or 4 columns. */
const row = (columns, items) => ({ type: 'row', columns, items });
/** A fieldset shown for one form section ('serving', 'simulate', 'training') or for all. */
const fieldset = (legend, { section } = {}, items) => ({ type: 'fieldset', legend, section, items });
/** Any other element of the form (a note, a hint), with its attributes and its text or children. */
const el = (tag, attrs, content) => ({ type: 'el', tag, attrs, content });

// The rows of one length distribution (prompt or output, a turn's input or output),
// as form-workload.js's distFields gives FIELDS.
const lengthDistRows = (w) => [
  row(2, [field(`${w}_dist`)]),
  row(3, [field(`${w}_min`, { min: '1' }), field(`${w}_max`, { min: '1' }), field(`${w}_mean`, { min: '1' })]),
  row(3, [field(`${w}_stddev`, { min: '0' }), field(`${w}_cv`, { min: '0' }), field(`${w}_theta`, { min: '0' })]),
];

export const FORM_PARTS = {
  model: [
    field('model'),
  ],
  gpu: [
    field('gpu'),
  ],
  hardware: [
    row(2, [field('gpus_per_node'), field('nodes')]),
    row(2, [field('intra_node'), field('inter_node')]),
    el('p', { id: 'follow-note', class: 'hint', role: 'status' }, ''),
  ],
  // The custom GPU's spec-sheet numbers (custom.js's fields, not the scenario form's FIELDS: `kind` says their control).
  'custom-gpu': [
    row(2, [field('cg_bf16', { kind: 'number', min: '0' }), field('cg_fp16', { kind: 'number', min: '0' })]),
    row(2, [field('cg_fp8', { kind: 'number', min: '0' }), field('cg_int8', { kind: 'number', min: '0' })]),
    row(2, [field('cg_memory', { kind: 'number', min: '0.25' }), field('cg_bandwidth', { kind: 'number', min: '1' })]),
    row(3, [
      field('cg_sms', { kind: 'int', min: '1' }),
      field('cg_link', { kind: 'number', min: '0' }),
      field('cg_tdp', { kind: 'number', min: '1' }),
    ]),
  ],
  settings: [
    fieldset('Parallelism', { section: 'serving' }, [
      row(2, [field('tp'), field('pp')]),
      el('div', { id: 'multinode-note', class: 'note', role: 'status', hidden: true }, [el('span', { id: 'multinode-text' }, ''), el('button', { type: 'button', id: 'multinode-apply', class: 'mini' }, 'Use several nodes')]),
    ]),
    fieldset('Workload', { section: 'serving' }, [
      row(3, [field('prompt_tokens'), field('output_tokens'), field('batch_size', { section: 'latency' })]),
    ]),
    fieldset('Traffic', { section: 'simulate' }, [
      row(3, [field('sim_arrival'), field('sim_rate'), field('sim_num_requests')]),
      row(2, [field('sim_duration', { min: '0', placeholder: 'none' }), field('sim_cv', { min: '0' })]),
      row(2, [field('sim_concurrency', { min: '1' }), field('sim_think_time', { min: '0', placeholder: '0' })]),
      ...lengthDistRows('prompt'),
      ...lengthDistRows('output'),
      el('p', { class: 'hint' }, 'A fixed length is the prompt or output token count above; typing a count there makes the length fixed.'),
      field('prefix_enabled'),
      row(3, [field('prefix_tokens'), field('prefix_fraction'), field('prefix_groups')]),
    ]),
    fieldset('Sessions (multi-turn)', { section: 'simulate' }, [
      field('sess_enabled'),
      row(3, [field('sess_num'), field('sess_turns_min', { min: '1' }), field('sess_turns_max', { min: '1' })]),
      row(2, [field('sess_system'), field('sess_first_tokens')]),
      row(2, [field('sess_in_tokens'), field('sess_out_tokens')]),
      ...lengthDistRows('sess_in'),
      ...lengthDistRows('sess_out'),
      row(3, [field('sess_think_dist'), field('sess_think_mean', { min: '0' }), field('sess_think_cv', { min: '0' })]),
      row(2, [field('sess_think_min', { min: '0' }), field('sess_think_max', { min: '0' })]),
    ]),
    fieldset('Cluster & scheduler', { section: 'simulate' }, [
      row(2, [field('sim_router'), field('sim_policy')]),
      row(2, [field('sim_priority'), field('sim_max_num_seqs', { placeholder: "the stack's" })]),
      row(2, [field('sim_max_batched', { placeholder: "the stack's, else auto" }), field('sim_chunk_size', { placeholder: "the stack's, else 512" })]),
    ]),
    fieldset('KV cache', { section: 'simulate' }, [
      row(3, [field('sim_kv_alloc'), field('sim_block_size'), field('sim_gpu_util')]),
      row(3, [field('sim_watermark'), field('sim_preemption'), field('sim_swap_space')]),
      row(2, [field('sim_kv_admission')]),
      field('sim_prefix_caching'),
      row(2, [field('sim_kv_tier1', { of: 'First' }), field('sim_kv_tier2', { of: 'Second' })]),
    ]),
    fieldset('Speculative decoding & SLO', { section: 'simulate' }, [
      field('spec_enabled'),
      row(3, [field('spec_method'), field('spec_k'), field('spec_accept')]),
      row(2, [field('spec_draft')]),
      row(2, [field('sim_slo_ttft', { placeholder: 'none' }), field('sim_slo_ttft_pct')]),
      row(2, [field('sim_slo_tpot', { placeholder: 'none' }), field('sim_slo_tpot_pct')]),
      row(2, [field('sim_slo_itl', { placeholder: 'none' }), field('sim_slo_itl_pct')]),
      row(2, [field('sim_slo_e2e', { placeholder: 'none' }), field('sim_slo_e2e_pct')]),
      row(2, [field('sim_slo_attainment')]),
      field('sim_steady_state'),
      field('sim_max_qps'),
    ]),
    fieldset('LoRA, MoE & disaggregation', { section: 'simulate' }, [
      field('srv_lora_enabled'),
      row(3, [field('srv_lora_adapters'), field('srv_lora_rank'), field('srv_lora_max_batch')]),
      row(3, [field('srv_moe_ep'), field('srv_moe_attn_dp'), field('srv_moe_redundant')]),
      row(2, [field('srv_moe_imbalance'), field('srv_moe_a2a')]),
      field('srv_moe_tbo'),
      field('disagg_enabled'),
      row(3, [field('disagg_prefill', { of: 'Prefill' }), field('disagg_decode', { of: 'Decode' }), field('disagg_tp')]),
    ]),
    fieldset('Training parallelism', { section: 'training' }, [
      row(4, [field('train_dp'), field('train_tp'), field('train_pp'), field('train_cp')]),
      row(3, [field('train_ep'), field('train_vstages'), field('train_zero')]),
      field('train_sp'),
    ]),
    fieldset('Batch', { section: 'training' }, [
      row(2, [field('train_seq_len'), field('train_mbs')]),
      row(2, [field('train_gbs', { placeholder: 'from accumulation' }), field('train_ga')]),
    ]),
    fieldset('Schedule & techniques', { section: 'training' }, [
      row(2, [field('train_schedule'), field('train_recompute')]),
      row(2, [field('train_every_n')]),
      field('train_rc_modules', { options: [["core_attn", "core attention"], ["layernorm", "layernorm"], ["mlp_act", "MLP activation"]], name: 'train_rc_module' }),
      row(2, [field('train_fp8'), field('train_optimizer')]),
      field('train_offload'),
      row(3, [field('train_attention'), field('train_moe_imbalance'), field('train_runtime')]),
    ]),
    fieldset('LoRA', { section: 'training' }, [
      field('lora_enabled'),
      row(2, [field('lora_rank'), field('lora_base_dtype')]),
      field('lora_targets', { options: [["q", "q"], ["k", "k"], ["v", "v"], ["o", "o"], ["up", "up"], ["gate", "gate"], ["down", "down"]], name: 'lora_target' }),
    ]),
    fieldset('Token budget & cost', { section: 'training' }, [
      row(2, [
        field('tokens_to_train', { inputmode: null, placeholder: 'none' }),
        field('gpu_hour_usd', { inputmode: null, placeholder: 'none' }),
      ]),
    ]),
    fieldset('Precision', {  }, [
      row(3, [field('weights'), field('activations'), field('kv_cache', { section: 'serving' })]),
    ]),
  ],
};

const KEYPAD = { int: ['1', 'numeric'], number: ['any', 'decimal'] };
const ROW_CLASS = { 2: 'row', 3: 'row three', 4: 'row four' };

function make(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === true) node.setAttribute(k, '');
    else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, String(v));
  }
  node.append(...children);
  return node;
}

/** The .field block of layout entry `f`, its control made from its FIELDS kind; labelForm() writes its words. */
function fieldBlock(f, kind) {
  const at = { class: 'field', 'data-section': f.section };
  if (kind === 'bool' || kind === 'toggle') {
    return make('div', { ...at, class: 'field check-field' }, [
      make('input', { id: f.id, name: f.id, type: 'checkbox' }), make('label', { for: f.id })]);
  }
  if (kind === 'targets') {
    const boxes = f.options.map(([value, text]) => make('label', { class: 'check' }, [make('input', { type: 'checkbox', name: f.name, value }), ` ${text}`]));
    return make('div', at, [make('span', { id: `${f.id}-label`, class: 'label' }),
      make('div', { id: f.id, class: 'checks', role: 'group', 'aria-labelledby': `${f.id}-label` }, boxes)]);
  }
  let control;
  if (KEYPAD[kind]) {
    const [step, keypad] = KEYPAD[kind];
    control = make('input', { id: f.id, name: f.id, type: 'number', min: f.min, step,
      inputmode: f.inputmode === null ? null : keypad, placeholder: f.placeholder });
  } else control = make('select', { id: f.id, name: f.id });
  return make('div', at, [make('label', { for: f.id }), control]);
}

function build(item, kinds) {
  switch (item.type) {
    case 'field': {
      const kind = kinds.get(item.id) || item.kind;
      if (!kind) throw new Error(`form-layout.js: no field '${item.id}' in FIELDS`);
      return fieldBlock(item, kind);
    }
    case 'row': return make('div', { class: ROW_CLASS[item.columns] }, item.items.map((i) => build(i, kinds)));
    case 'fieldset':
      return make('fieldset', { 'data-section': item.section, hidden: Boolean(item.section) && item.section !== 'serving' },
        [make('legend', {}, [item.legend]), ...item.items.map((i) => build(i, kinds))]);
    default:
      return make(item.tag, item.attrs, typeof item.content === 'string' ? (item.content ? [item.content] : [])
        : item.content.map((i) => build(i, kinds)));
  }
}

/** Every field entry of the layout, in order. */
export function layoutFields(items = Object.values(FORM_PARTS).flat()) {
  return items.flatMap((i) => (i.type === 'field' ? [i] : i.items ? layoutFields(i.items) : []));
}

/** Every field id of the layout, in order. */
export function layoutFieldIds() {
  return layoutFields().map((f) => f.id);
}

/** Replaces each <div data-form-part="NAME"> under `root` with that part's fieldsets, rows and fields. */
export function renderForm(root = document) {
  const kinds = new Map(FIELDS.map((f) => [f.id, f.kind]));
  for (const slot of root.querySelectorAll('[data-form-part]')) {
    const part = FORM_PARTS[slot.dataset.formPart];
    if (!part) throw new Error(`form-layout.js: no form part '${slot.dataset.formPart}'`);
    slot.replaceWith(...part.map((i) => build(i, kinds)));
  }
}

const fieldsById = () => new Map(FIELDS.map((f) => [f.id, f]));

/**
 * The scenario key layout field `f` edits, as a schema pointer: its FIELDS
 * entry's (`schema` or `path`), or the custom GPU's key; null for none.
 */
export function fieldPointer(f, fields = fieldsById()) {
  const field = fields.get(f.id);
  return field ? (field.schema || field.path) : customGpuPointer(f.id);
}

/**
 * The words {label, unit (null: none), help} of layout field `f`: the engine's
 * schema entry of the key it edits (array indices as '*'), with `of` before the
 * label. A field with no key, or a key without words, is a bug: it throws.
 */
export function fieldWords(f, fields = fieldsById()) {
  const pointer = fieldPointer(f, fields);
  if (!pointer) throw new Error(`form-layout.js: field '${f.id}' edits no scenario key, so it has no words`);
  const w = parameterWords(pointer);
  return f.of ? { ...w, label: `${f.of} ${w.label[0].toLowerCase()}${w.label.slice(1)}` } : w;
}

/** Writes each rendered field's words (after the catalogue is set): its label's text and unit, and the help as both tooltips. */
export function labelForm(root = document) {
  const fields = fieldsById();
  for (const f of layoutFields()) {
    const label = root.querySelector(`label[for="${f.id}"], #${f.id}-label`);
    if (label) writeFieldWords(label, root.querySelector(`#${f.id}`), fieldWords(f, fields));
  }
}
