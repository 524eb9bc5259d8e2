// The field table: FIELDS, each form field with the JSON pointer it edits, its
// kind and, where the plain mapping is not enough, how it shows and writes the
// scenario (toggled groups, the router, KV offload tiers, disaggregated pools,
// the SLO and its percentiles, training's recompute). The serving workload's
// fields come from form-workload.js; where each field sits from form-layout.js;
// ranges, defaults, choices and words (label, unit, help) from the engine's schema.
import { $ } from './dom.js';
import { getAt, setAt, sectionMatches, parseInteger, parseNumber, SIM } from './form-paths.js';
import { NO_LINK } from './form-controls.js';
import {
  tokensField, SESSIONS, sessionsToggle, turnsField, sessionTokensField, thinkFields, ARRIVAL, arrivalField,
  writeArrivalProcess, distFields, exclusive,
} from './form-workload.js';

// The empty choice of a precision select: the model's own dtype (its checkpoint's, else the
// activations'; the fields' help says so). A pasted config that states its quantization
// shows it as "From the config (mxfp4)" (custom.js).
export const FROM_THE_MODEL = 'From the model';

/** Speculative decoding and other toggled groups: the checkbox adds or removes the object. */
function toggleField(id, path, group) {
  return { id, path, kind: 'toggle', toggles: group, section: SIM, write: (s, on) => { if (!on) setAt(s, path, undefined); } };
}

/**
 * A checkbox for an engine option that is on when its object is present: checking it adds the
 * object ({} takes the engine's defaults), unchecking removes it; its own keys are kept while on.
 */
function blockField(id, path) {
  return {
    id, path, kind: 'bool', section: SIM,
    show: (s) => { const v = getAt(s, path); return Boolean(v && typeof v === 'object'); },
    write: (s, on) => {
      const v = getAt(s, path);
      setAt(s, path, on ? (v && typeof v === 'object' ? v : {}) : undefined);
    },
  };
}

/**
 * The router lives in serving.cluster; next to serving.parallelism the engine lays
 * the GPUs out as one pool of tp × pp replicas (no pools needed), so the page only
 * sets the router and leaves the layout to the engine.
 */
function writeRouter(s, v) {
  setAt(s, '/serving/cluster/router', v === NO_LINK ? undefined : v);
  const cluster = getAt(s, '/serving/cluster');
  if (cluster && typeof cluster === 'object' && !Object.keys(cluster).length) setAt(s, '/serving/cluster', undefined);
}

const KV_TIERS = '/serving/kv_cache/offload/tiers';

/**
 * The i-th KV offload tier (serving.kv_cache.offload.tiers[i]) as a kv_tiers
 * preset id; empty: none (and none after it). A tier written inline as an
 * object is kept as it is until its own select is changed.
 */
function kvTierField(i) {
  return {
    id: `sim_kv_tier${i + 1}`, path: `${KV_TIERS}/${i}`, kind: 'select', section: SIM, optional: true,
    show: (s) => {
      const t = getAt(s, `${KV_TIERS}/${i}`);
      return typeof t === 'string' ? t : NO_LINK;
    },
    write: (s, v) => {
      const current = getAt(s, KV_TIERS);
      const tiers = Array.isArray(current) ? current.slice() : [];
      if (v === NO_LINK) tiers.splice(i);
      else tiers[i] = v;
      if (tiers.some((t) => t === undefined)) return;  // a second tier without a first: left to the first's select
      if (tiers.length) setAt(s, KV_TIERS, tiers);
      else setAt(s, '/serving/kv_cache/offload', undefined);
    },
  };
}

const MOE = '/serving/moe';

/**
 * A serving.moe key: written as a plain field would, and the block removed once
 * no key is left in it (the engine refuses serving.moe, even empty, on a dense model).
 */
function moeField(id, key, kind, options = {}) {
  const path = `${MOE}/${key}`;
  // A box writes its key only when ticked: unticked is the engine's default.
  const parse = { int: parseInteger, number: parseNumber, select: (v) => v, bool: (v) => (v ? true : undefined) }[kind];
  return {
    id, path, kind, section: SIM, ...options,
    write: (s, v) => {
      setAt(s, path, typeof v === 'number' ? v : parse(v));
      const moe = getAt(s, MOE);
      if (moe && typeof moe === 'object' && !Object.keys(moe).length) setAt(s, MOE, undefined);
    },
  };
}

const TRAINING_PAR = '/training/parallelism';

const MAX_QPS = '/serving/max_qps_search';
const POOLS = '/serving/cluster/pools';

function disaggPools(s) {
  const pools = getAt(s, POOLS);
  if (!Array.isArray(pools)) return null;
  const prefill = pools.find((p) => p && p.role === 'prefill');
  const decode = pools.find((p) => p && p.role === 'decode');
  return prefill && decode ? { prefill, decode } : null;
}

/**
 * What the disaggregation inputs show: the scenario's pools; else, until the engine
 * has laid the scenario out (showLayout), its tp and empty replica counts.
 */
function disaggShown(s, key) {
  const d = disaggPools(s);
  if (d) return String(key === 'tp' ? (d.prefill.tp ?? 1) : (d[key].replicas ?? ''));
  return key === 'tp' ? String(Number(getAt(s, '/serving/parallelism/tp')) || 1) : '';
}

/** Rebuilds the cluster as a prefill pool and a decode pool from the disaggregation inputs. */
function writeDisagg(s) {
  const serving = s.serving || (s.serving = {});
  const tp = parseInteger($('disagg_tp').value) ?? 1;
  const pools = [
    { name: 'prefill', replicas: parseInteger($('disagg_prefill').value), tp, role: 'prefill' },
    { name: 'decode', replicas: parseInteger($('disagg_decode').value), tp, role: 'decode' },
  ];
  delete serving.parallelism;
  serving.cluster = { ...(serving.cluster || {}), pools };
}

/**
 * Unchecking disaggregation keeps the decode pool's tp × pp as serving.parallelism
 * and drops the pools: the engine lays the GPUs out as replicas of that layout.
 */
function writeDisaggToggle(s, on) {
  if (on) return writeDisagg(s);
  const d = disaggPools(s);
  if (!d) return undefined;
  const serving = s.serving;
  const cluster = { ...serving.cluster };
  delete cluster.pools;
  delete cluster.kv_transfer_link;
  if (Object.keys(cluster).length) serving.cluster = cluster;
  else delete serving.cluster;
  serving.parallelism = { tp: Number(d.decode.tp) || 1, pp: Number(d.decode.pp) || 1 };
  return undefined;
}

// The SLO: a bound per metric and how each is judged (serving.slo.percentiles):
// 'joint' (the default) counts it in the share of requests within every joint
// bound at once, which must reach `attainment`; p50…p99 judge it alone.
export const SLO = '/serving/slo';
export const SLO_METRICS = ['ttft', 'tpot', 'itl', 'e2e'];
export const SLO_JOINT = 'joint';

/** Whether the scenario's SLO keeps a bound judged jointly (only then does `attainment` apply). */
function sloJointLeft(s) {
  const slo = getAt(s, SLO);
  if (!slo || typeof slo !== 'object') return false;
  const pct = slo.percentiles && typeof slo.percentiles === 'object' ? slo.percentiles : {};
  return SLO_METRICS.some((m) => Number(slo[`${m}_ms`]) > 0 && (pct[m] === undefined || pct[m] === SLO_JOINT));
}

/** The percentile picker of one SLO bound: 'joint' removes the key (the engine's default). */
function sloPercentileField(metric) {
  const path = `${SLO}/percentiles/${metric}`;
  return {
    id: `sim_slo_${metric}_pct`, path, kind: 'select', section: SIM,
    show: (s) => { const v = getAt(s, path); return typeof v === 'string' ? v : SLO_JOINT; },
    write: (s, v) => {
      setAt(s, path, v === SLO_JOINT ? undefined : v);
      const pct = getAt(s, `${SLO}/percentiles`);
      if (pct && typeof pct === 'object' && !Object.keys(pct).length) setAt(s, `${SLO}/percentiles`, undefined);
      // Every bound now names its percentile: the joint share has nothing left to judge.
      if (!sloJointLeft(s)) setAt(s, `${SLO}/attainment`, undefined);
    },
  };
}

const RECOMPUTE = '/training/recompute';

function recomputeMode(s) {
  const r = getAt(s, RECOMPUTE);
  if (r && typeof r === 'object') return r.mode;
  return r;
}

/** A recompute option (every_n_layers of full, modules of selective) turns the mode string into an object. */
function recomputeOption(mode, key, parse) {
  return (s, v) => {
    if (recomputeMode(s) !== mode) return;  // the option of another mode stays out
    const value = parse(v);
    const r = getAt(s, RECOMPUTE);
    const obj = r && typeof r === 'object' ? { ...r } : { mode };
    if (value === undefined) delete obj[key];
    else obj[key] = value;
    setAt(s, RECOMPUTE, Object.keys(obj).length === 1 ? mode : obj);
  };
}

/**
 * Each form field edits one JSON pointer of the scenario. `kind`:
 *   int     – integer input; empty removes the key (engine default), non-integers
 *             are passed through as text so the engine reports a located type error
 *   number  – like int, for any number (1e12 tokens, 2.5 USD)
 *   select  – string value; `optional` selects remove the key when empty
 *   bool    – checkbox
 *   targets – a group of checkboxes giving a list of strings
 *   lora    – checkbox that adds or removes a whole object (the fields of its
 *             `group` are enabled only while it is checked)
 * `section`: 'serving' | 'training' (absent: every scenario). `showDefault`: the
 * input shows the engine's default (its parameter schema, catalogue.js) when the
 * scenario lacks the key. `def`: the value a key the engine requires (the schema
 * has no default for it) starts with when the form adds its section. Ranges
 * (min/max), placeholders of defaults and the choices of selects without a preset
 * or policy list come from the schema too, by `path` (or `schema`). `show` and
 * `write` replace the plain path mapping; `aliases` are other paths whose errors
 * point at this field; `clears` names an input emptied when this one is edited.
 */
export const FIELDS = [
  { id: 'model', path: '/model', kind: 'model' },
  { id: 'gpu', path: '/hardware/gpu', kind: 'select' },
  { id: 'gpus_per_node', path: '/hardware/gpus_per_node', kind: 'int' },
  { id: 'nodes', path: '/hardware/nodes', kind: 'int' },
  { id: 'intra_node', path: '/hardware/intra_node', kind: 'select', optional: true },
  { id: 'inter_node', path: '/hardware/inter_node', kind: 'select', optional: true },
  { id: 'tp', path: '/serving/parallelism/tp', kind: 'int', section: 'serving' },
  { id: 'pp', path: '/serving/parallelism/pp', kind: 'int', section: 'serving' },
  tokensField('prompt_tokens', '/serving/workload/prompt_tokens'),
  tokensField('output_tokens', '/serving/workload/output_tokens'),
  ...distFields('prompt', '/serving/workload/prompt_tokens'),
  ...distFields('output', '/serving/workload/output_tokens'),
  { id: 'batch_size', path: '/serving/workload/batch_size', kind: 'int', section: 'latency' },

  // serving simulation (serving.mode "simulate")
  { id: 'sim_arrival', path: `${ARRIVAL}/process`, kind: 'select', section: SIM, def: 'poisson', write: writeArrivalProcess },
  arrivalField('sim_rate', 'rate_qps', 'number'),
  {
    id: 'sim_num_requests', path: '/serving/workload/num_requests', kind: 'int', section: SIM, clears: 'sim_duration',
    write: exclusive('/serving/workload/num_requests', '/serving/workload/duration_s', parseInteger),
  },
  {
    id: 'sim_duration', path: '/serving/workload/duration_s', kind: 'number', section: SIM, clears: 'sim_num_requests',
    write: exclusive('/serving/workload/duration_s', '/serving/workload/num_requests', parseNumber),
  },
  arrivalField('sim_cv', 'cv', 'number'),
  arrivalField('sim_concurrency', 'concurrency', 'int'),
  arrivalField('sim_think_time', 'think_time_s', 'number'),
  toggleField('prefix_enabled', '/serving/workload/shared_prefix', 'prefix'),
  { id: 'prefix_tokens', path: '/serving/workload/shared_prefix/tokens', kind: 'int', section: SIM, group: 'prefix', def: 512 },
  { id: 'prefix_fraction', path: '/serving/workload/shared_prefix/request_fraction', kind: 'number', section: SIM, group: 'prefix', showDefault: true },
  { id: 'prefix_groups', path: '/serving/workload/shared_prefix/groups', kind: 'int', section: SIM, group: 'prefix', showDefault: true },
  // Multi-turn sessions, after the per-request fields they replace (their toggle removes them).
  sessionsToggle(),
  { id: 'sess_num', path: '/serving/workload/num_sessions', kind: 'int', section: SIM, group: 'sessions', def: 100 },
  turnsField('sess_turns_min', 'min', 2),
  turnsField('sess_turns_max', 'max', 8),
  { id: 'sess_system', path: `${SESSIONS}/system_prompt_tokens`, kind: 'int', section: SIM, group: 'sessions', showDefault: true },
  sessionTokensField('sess_first_tokens', 'first_input_tokens', 1000),
  sessionTokensField('sess_in_tokens', 'input_tokens', 500),
  ...distFields('sess_in', `${SESSIONS}/input_tokens`).map((f) => ({ ...f, group: 'sessions' })),
  sessionTokensField('sess_out_tokens', 'output_tokens', 200),
  ...distFields('sess_out', `${SESSIONS}/output_tokens`).map((f) => ({ ...f, group: 'sessions' })),
  ...thinkFields(),
  { id: 'sim_router', path: '/serving/cluster/router', kind: 'select', section: SIM, optional: true, write: writeRouter },
  { id: 'sim_policy', path: '/serving/scheduler/policy', kind: 'select', section: SIM, optional: true },
  { id: 'sim_priority', path: '/serving/scheduler/priority', kind: 'select', section: SIM, optional: true },
  { id: 'sim_max_num_seqs', path: '/serving/scheduler/max_num_seqs', kind: 'int', section: SIM },
  { id: 'sim_max_batched', path: '/serving/scheduler/max_num_batched_tokens', kind: 'int', section: SIM },
  { id: 'sim_chunk_size', path: '/serving/scheduler/chunk_size', kind: 'int', section: SIM },
  { id: 'sim_kv_alloc', path: '/serving/kv_cache/allocation', kind: 'select', section: SIM, showDefault: true },
  { id: 'sim_block_size', path: '/serving/kv_cache/block_size', kind: 'int', section: SIM, showDefault: true },
  { id: 'sim_gpu_util', path: '/serving/kv_cache/gpu_memory_utilization', kind: 'number', section: SIM, showDefault: true },
  { id: 'sim_watermark', path: '/serving/kv_cache/watermark', kind: 'number', section: SIM, showDefault: true },
  { id: 'sim_preemption', path: '/serving/kv_cache/preemption', kind: 'select', section: SIM, showDefault: true },
  { id: 'sim_kv_admission', path: '/serving/kv_cache/admission', kind: 'select', section: SIM, optional: true },
  { id: 'sim_swap_space', path: '/serving/kv_cache/swap_space_GiB', kind: 'number', section: SIM, showDefault: true },
  { id: 'sim_prefix_caching', path: '/serving/kv_cache/prefix_caching', kind: 'bool', section: SIM, showDefault: true },
  kvTierField(0),
  kvTierField(1),
  toggleField('spec_enabled', '/serving/speculative', 'spec'),
  { id: 'spec_method', path: '/serving/speculative/method', kind: 'select', section: SIM, group: 'spec', def: 'ngram' },
  { id: 'spec_k', path: '/serving/speculative/k', kind: 'int', section: SIM, group: 'spec', showDefault: true },
  { id: 'spec_accept', path: '/serving/speculative/acceptance_rate', kind: 'number', section: SIM, group: 'spec', showDefault: true },
  {
    id: 'spec_draft', path: '/serving/speculative/draft_model', kind: 'select', section: SIM, group: 'spec', optional: true,
    show: (s) => modelPresetId(getAt(s, '/serving/speculative/draft_model')) || NO_LINK,
    write: (s, v) => {
      // Only the draft method takes a draft model.
      const draft = getAt(s, '/serving/speculative/method') === 'draft';
      setAt(s, '/serving/speculative/draft_model', draft && v !== NO_LINK ? v : undefined);
    },
  },
  ...SLO_METRICS.map((m) => ({ id: `sim_slo_${m}`, path: `${SLO}/${m}_ms`, kind: 'number', section: SIM })),
  ...SLO_METRICS.map(sloPercentileField),
  { id: 'sim_slo_attainment', path: `${SLO}/attainment`, kind: 'number', section: SIM, showDefault: true },
  blockField('sim_steady_state', '/serving/steady_state'),
  blockField('sim_max_qps', MAX_QPS),
  toggleField('srv_lora_enabled', '/serving/lora', 'slora'),
  { id: 'srv_lora_adapters', path: '/serving/lora/adapters', kind: 'int', section: SIM, group: 'slora', def: 8 },
  { id: 'srv_lora_rank', path: '/serving/lora/rank', kind: 'int', section: SIM, group: 'slora', showDefault: true },
  { id: 'srv_lora_max_batch', path: '/serving/lora/max_adapters_per_batch', kind: 'int', section: SIM, group: 'slora', showDefault: true },
  // Wide EP and expert placement (serving.moe): EP, attention DP and redundant experts show the
  // engine's defaults; the pickers and counts write their key and drop an emptied block.
  moeField('srv_moe_ep', 'expert_parallel', 'int', { showDefault: true }),
  moeField('srv_moe_attn_dp', 'attention_data_parallel', 'int', { showDefault: true }),
  moeField('srv_moe_redundant', 'redundant_experts', 'int', { showDefault: true }),
  moeField('srv_moe_imbalance', 'load_imbalance', 'number'),
  moeField('srv_moe_a2a', 'all_to_all', 'select', { showDefault: true }),
  moeField('srv_moe_tbo', 'two_batch_overlap', 'bool'),
  {
    id: 'disagg_enabled', path: POOLS, kind: 'toggle', toggles: 'disagg', section: SIM,
    show: (s) => Boolean(disaggPools(s)), write: writeDisaggToggle,
  },
  {
    id: 'disagg_prefill', path: `${POOLS}/0/replicas`, kind: 'int', section: SIM, group: 'disagg',
    show: (s) => disaggShown(s, 'prefill'), write: (s) => writeDisagg(s),
  },
  {
    id: 'disagg_decode', path: `${POOLS}/1/replicas`, kind: 'int', section: SIM, group: 'disagg',
    show: (s) => disaggShown(s, 'decode'), write: (s) => writeDisagg(s),
  },
  {
    id: 'disagg_tp', path: `${POOLS}/0/tp`, kind: 'int', section: SIM, group: 'disagg', aliases: [`${POOLS}/1/tp`],
    show: (s) => disaggShown(s, 'tp'), write: (s) => writeDisagg(s),
  },
  // Weights and KV cache default to the model's own (a checkpoint's quantization, else
  // the activations' dtype): the empty choice leaves the key out for the engine to decide.
  { id: 'weights', path: '/precision/weights', kind: 'select', optional: true, emptyLabel: FROM_THE_MODEL },
  { id: 'activations', path: '/precision/activations', kind: 'select' },
  { id: 'kv_cache', path: '/precision/kv_cache', kind: 'select', section: 'serving', optional: true, emptyLabel: FROM_THE_MODEL },

  // training: parallelism
  { id: 'train_dp', path: `${TRAINING_PAR}/dp`, kind: 'int', section: 'training', showDefault: true, gpus: true },
  { id: 'train_tp', path: `${TRAINING_PAR}/tp`, kind: 'int', section: 'training', showDefault: true, gpus: true },
  { id: 'train_pp', path: `${TRAINING_PAR}/pp`, kind: 'int', section: 'training', showDefault: true, gpus: true },
  { id: 'train_cp', path: `${TRAINING_PAR}/cp`, kind: 'int', section: 'training', showDefault: true, gpus: true },
  { id: 'train_ep', path: `${TRAINING_PAR}/ep`, kind: 'int', section: 'training', showDefault: true },
  { id: 'train_vstages', path: `${TRAINING_PAR}/virtual_stages`, kind: 'int', section: 'training', showDefault: true },
  {
    id: 'train_zero', path: `${TRAINING_PAR}/zero_stage`, kind: 'select', section: 'training',
    aliases: [`${TRAINING_PAR}/fsdp`],
    show: (s) => {
      const par = getAt(s, TRAINING_PAR) || {};
      if (par.fsdp === true && par.zero_stage === undefined) return '3';
      return par.zero_stage === undefined || par.zero_stage === null ? '0' : String(par.zero_stage);
    },
    write: (s, v) => {
      setAt(s, `${TRAINING_PAR}/fsdp`, undefined);
      setAt(s, `${TRAINING_PAR}/zero_stage`, /^\d+$/.test(v) ? Number(v) : v);
    },
  },
  { id: 'train_sp', path: `${TRAINING_PAR}/sequence_parallel`, kind: 'bool', section: 'training', showDefault: true },

  // training: batch
  { id: 'train_seq_len', path: '/training/batch/seq_len', kind: 'int', section: 'training' },
  { id: 'train_mbs', path: '/training/batch/micro_batch_size', kind: 'int', section: 'training', showDefault: true },
  {
    id: 'train_gbs', path: '/training/batch/global_batch_size', kind: 'int', section: 'training', clears: 'train_ga',
    write: (s, v) => {
      const n = parseInteger(v);
      setAt(s, '/training/batch/global_batch_size', n);
      if (n !== undefined) setAt(s, '/training/batch/gradient_accumulation', undefined);
    },
  },
  {
    id: 'train_ga', path: '/training/batch/gradient_accumulation', kind: 'int', section: 'training', clears: 'train_gbs',
    write: (s, v) => {
      const n = parseInteger(v);
      setAt(s, '/training/batch/gradient_accumulation', n);
      if (n !== undefined) setAt(s, '/training/batch/global_batch_size', undefined);
    },
  },

  // training: techniques
  { id: 'train_schedule', path: '/training/schedule', kind: 'select', section: 'training', showDefault: true },
  {
    id: 'train_recompute', path: '/training/recompute', schema: '/training/recompute/mode', kind: 'select', section: 'training', def: 'none',
    show: (s) => {
      const r = getAt(s, '/training/recompute');
      if (r && typeof r === 'object' && typeof r.mode === 'string') return r.mode;
      return typeof r === 'string' ? r : 'none';
    },
  },
  {
    id: 'train_every_n', path: `${RECOMPUTE}/every_n_layers`, kind: 'int', section: 'training', def: 1,
    write: recomputeOption('full', 'every_n_layers', parseInteger),
  },
  {
    id: 'train_rc_modules', path: `${RECOMPUTE}/modules`, kind: 'targets', section: 'training', def: ['core_attn'],
    write: recomputeOption('selective', 'modules', (v) => [...v]),
  },
  { id: 'train_attention', path: '/training/attention', kind: 'select', section: 'training', showDefault: true },
  { id: 'train_fp8', path: '/training/fp8', kind: 'select', section: 'training', showDefault: true },
  { id: 'train_moe_imbalance', path: '/training/moe/load_imbalance', kind: 'number', section: 'training', showDefault: true },
  { id: 'train_runtime', path: '/training/runtime_overhead_GiB', kind: 'number', section: 'training', showDefault: true },
  { id: 'train_optimizer', path: '/training/optimizer/type', kind: 'select', section: 'training', showDefault: true },
  { id: 'train_offload', path: '/training/optimizer/cpu_offload', kind: 'bool', section: 'training', showDefault: true },

  // training: LoRA
  {
    id: 'lora_enabled', path: '/training/lora', kind: 'toggle', toggles: 'lora', section: 'training',
    write: (s, on) => { if (!on) setAt(s, '/training/lora', undefined); },
  },
  { id: 'lora_rank', path: '/training/lora/rank', kind: 'int', section: 'training', group: 'lora', def: 16 },
  { id: 'lora_targets', path: '/training/lora/targets', kind: 'targets', section: 'training', group: 'lora', def: ['q', 'v'] },
  { id: 'lora_base_dtype', path: '/training/lora/base_dtype', kind: 'select', section: 'training', group: 'lora', showDefault: true },

  // training: token budget and cost
  { id: 'tokens_to_train', path: '/training/tokens_to_train', kind: 'number', section: 'training' },
  { id: 'gpu_hour_usd', path: '/cost_model/gpu_hour_usd', kind: 'number', section: 'training' },
];

/** The fields a scenario of `section` shows ('latency' | 'simulate' | 'training'; 'serving' means latency). */
export function fieldsOf(section) {
  return FIELDS.filter((f) => sectionMatches(f.section, section));
}

export const TOGGLES = () => FIELDS.filter((f) => f.kind === 'toggle');

/** The preset id a scenario's `model` refers to, or null for an inline model. */
export function modelPresetId(model) {
  if (typeof model === 'string') return model;
  if (model && typeof model === 'object' && typeof model.preset === 'string') return model.preset;
  return null;
}
