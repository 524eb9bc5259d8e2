// The scenario form's rows, each field once: where it sits (fieldset, row), its
// label, unit and help text (the label's and the input's tooltip). FIELDS
// (form.js) says which JSON pointer a field edits and its kind, from which its
// control is made (a select, a number input with an integer or decimal keypad,
// a checkbox, a group of checkboxes); the engine's parameter schema gives its
// range, default and choices when the form is populated. index.html holds only
// a placeholder per part (<div data-form-part="NAME">), which renderForm()
// replaces. tests/web/form_layout.test.mjs compares the rendered form with
// FIELDS and this table.
import { FIELDS } from './form.js';

/**
 * A field: its id in FIELDS, label, unit (null: none) and help; options:
 * section (when it differs from its fieldset's), min, placeholder, inputmode
 * (null: none), the options of a checkbox group ([value, text]) and their
 * name, and kind, for a field that is not one of FIELDS (the custom GPU's).
 */
const field = (id, label, unit, help, options = {}) => ({ type: 'field', id, label, unit, help, ...options });
/** Fields side by side, in 2, 3 or 4 columns. */
const row = (columns, items) => ({ type: 'row', columns, items });
/** A fieldset shown for one form section ('serving', 'simulate', 'training') or for all. */
const fieldset = (legend, { section } = {}, items) => ({ type: 'fieldset', legend, section, items });
/** Any other element of the form (a note, a hint), with its attributes and its text or children. */
const el = (tag, attrs, content) => ({ type: 'el', tag, attrs, content });

// The rows of one length distribution (prompt or output): the same fields,
// labels and help for both, as form.js's distFields gives FIELDS.
const lengthDistRows = (w, W, noun = w, per = 'request') => [
  row(2, [
    field(`${w}_dist`, `${W} length distribution`, null, `How ${noun} lengths are drawn per ${per}: fixed (the token count above), uniform, normal, lognormal or zipf`),
  ]),
  row(3, [
    field(`${w}_min`, `${W} min`, 'tokens', `Shortest ${noun} length drawn (uniform and zipf: required; normal and lognormal: default 1)`, { min: '1' }),
    field(`${w}_max`, `${W} max`, 'tokens', `Longest ${noun} length drawn (uniform and zipf: required; normal and lognormal: default the max model length)`, { min: '1' }),
    field(`${w}_mean`, `${W} mean`, 'tokens', `Mean ${noun} length of the normal or lognormal distribution`, { min: '1' }),
  ]),
  row(3, [
    field(`${w}_stddev`, `${W} std. dev.`, 'tokens', `Standard deviation of the normal ${noun} length distribution`, { min: '0' }),
    field(`${w}_cv`, `${W} CV`, 'ratio', `Coefficient of variation (std. dev. / mean) of the lognormal ${noun} length distribution`, { min: '0' }),
    field(`${w}_theta`, `${W} theta`, 'exponent', `Zipf exponent of the ${noun} length distribution: higher favours short lengths (default 1)`, { min: '0' }),
  ]),
];

export const FORM_PARTS = {
  model: [
    field('model', 'Model', null, 'Model architecture preset (layers, hidden size, heads, MoE…)'),
  ],
  gpu: [
    field('gpu', 'GPU', null, 'GPU preset: peak TFLOPS per dtype, HBM capacity and bandwidth, SM count'),
  ],
  hardware: [
    row(2, [
      field('gpus_per_node', 'GPUs per node', 'count', 'GPUs in each node; GPUs per node × nodes must equal TP × PP (serving) or DP × TP × PP × CP (training)'),
      field('nodes', 'Nodes', 'count', 'Number of nodes (servers); empty means 1'),
    ]),
    row(2, [
      field('intra_node', 'Intra-node link', null, 'Link between GPUs in a node (required when GPUs per node > 1)'),
      field('inter_node', 'Inter-node network', null, 'Network between nodes (required when nodes > 1)'),
    ]),
    el('p', { id: 'follow-note', class: 'hint', role: 'status' }, ''),
  ],
  // The custom GPU's spec-sheet numbers (custom.js's fields, not the scenario form's FIELDS: `kind` says their control).
  'custom-gpu': [
    row(2, [
      field('cg_bf16', 'BF16 peak', 'TFLOP/s', 'Dense (no sparsity) BF16 tensor-core peak', { kind: 'number', min: '0' }),
      field('cg_fp16', 'FP16 peak', 'TFLOP/s', 'Dense FP16 tensor-core peak', { kind: 'number', min: '0' }),
    ]),
    row(2, [
      field('cg_fp8', 'FP8 peak', 'TFLOP/s', 'Dense FP8 tensor-core peak; 0 when the GPU has no FP8', { kind: 'number', min: '0' }),
      field('cg_int8', 'INT8 peak', 'TOP/s', 'Dense INT8 tensor-core peak', { kind: 'number', min: '0' }),
    ]),
    row(2, [
      field('cg_memory', 'Memory', 'GiB', 'Memory capacity per GPU', { kind: 'number', min: '0.25' }),
      field('cg_bandwidth', 'Bandwidth', 'GB/s', 'Peak memory (HBM/GDDR) bandwidth', { kind: 'number', min: '1' }),
    ]),
    row(3, [
      field('cg_sms', 'SMs', 'count', 'Streaming multiprocessors (wave quantization of kernels)', { kind: 'int', min: '1' }),
      field('cg_link', 'Link', 'GB/s', 'GPU-to-GPU link bandwidth, total bidirectional per GPU (NVLink); 0 for none', { kind: 'number', min: '0' }),
      field('cg_tdp', 'TDP', 'W', 'Board power, for the energy figures', { kind: 'number', min: '1' }),
    ]),
  ],
  settings: [
    fieldset('Parallelism', { section: 'serving' }, [
      row(2, [
        field('tp', 'Tensor parallel', 'GPUs', 'Tensor parallelism: GPUs each layer is split across; must divide the number of attention heads'),
        field('pp', 'Pipeline parallel', 'stages', 'Pipeline parallelism: stages the layers are split into; must divide the number of layers'),
      ]),
      el('div', { id: 'multinode-note', class: 'note', role: 'status', hidden: true }, [el('span', { id: 'multinode-text' }, ''), el('button', { type: 'button', id: 'multinode-apply', class: 'mini' }, 'Use several nodes')]),
    ]),
    fieldset('Workload', { section: 'serving' }, [
      row(3, [
        field('prompt_tokens', 'Prompt', 'tokens', 'Input length of each request, in tokens (prefill)'),
        field('output_tokens', 'Output', 'tokens', 'Tokens generated per request (decode steps)'),
        field('batch_size', 'Batch size', 'req', 'Requests processed together in one batch', { section: 'latency' }),
      ]),
    ]),
    fieldset('Traffic', { section: 'simulate' }, [
      row(3, [
        field('sim_arrival', 'Arrivals', null, 'How requests arrive: Poisson, gamma (bursty), fixed interval, all at once (offline batch), a trace, or a closed loop of clients'),
        field('sim_rate', 'Rate', 'req/s', 'Mean arrival rate in requests per second (poisson, gamma and fixed arrivals)'),
        field('sim_num_requests', 'Requests', 'count', 'Number of requests simulated'),
      ]),
      row(2, [
        field('sim_duration', 'Duration', 's', 'Simulated arrival window in seconds, instead of a request count (needs a rate); setting it clears the request count', { min: '0', placeholder: 'none' }),
        field('sim_cv', 'Arrival CV', 'ratio', 'Coefficient of variation of the gaps between gamma arrivals: 1 is Poisson, above 1 is bursty', { min: '0' }),
      ]),
      row(2, [
        field('sim_concurrency', 'Clients', 'count', 'Closed loop: clients each sending their next request when the last one ends (a benchmark\'s max concurrency)', { min: '1' }),
        field('sim_think_time', 'Think time', 's', 'Closed loop: pause between a client\'s request ending and its next one; empty: 0', { min: '0', placeholder: '0' }),
      ]),
      ...lengthDistRows('prompt', 'Prompt'),
      ...lengthDistRows('output', 'Output'),
      el('p', { class: 'hint' }, 'A fixed length is the prompt or output token count above; typing a count there makes the length fixed.'),
      field('prefix_enabled', 'Shared prefix (prompts start with a shared system prompt)', null, 'Prompts start with one of a few shared prefixes (system prompts, few-shot examples) that prefix caching can reuse'),
      row(3, [
        field('prefix_tokens', 'Prefix length', 'tokens', 'Tokens of each shared prefix'),
        field('prefix_fraction', 'Requests with prefix', 'fraction', 'Share of requests that start with a shared prefix, 0 to 1'),
        field('prefix_groups', 'Prefix groups', 'count', 'Number of distinct shared prefixes, drawn uniformly'),
      ]),
    ]),
    fieldset('Sessions (multi-turn)', { section: 'simulate' }, [
      field('sess_enabled', 'Sessions: multi-turn conversations or agent runs', null, 'The workload is sessions of several turns, each turn re-sending the whole context so far; they replace the request count, lengths and shared prefix above'),
      row(3, [
        field('sess_num', 'Sessions', 'count', 'Number of sessions simulated; they arrive at the traffic rate above'),
        field('sess_turns_min', 'Turns, min', 'count', 'Fewest turns in a session (drawn uniformly between min and max)', { min: '1' }),
        field('sess_turns_max', 'Turns, max', 'count', 'Most turns in a session', { min: '1' }),
      ]),
      row(2, [
        field('sess_system', 'System prompt', 'tokens', 'Tokens every session starts with (instructions, tool schemas), the same for all sessions: prefix caching can share them'),
        field('sess_first_tokens', 'First turn input', 'tokens', 'New tokens of a session\'s first turn (the task or question), after the system prompt'),
      ]),
      row(2, [
        field('sess_in_tokens', 'Turn input', 'tokens', 'New tokens each later turn adds (a user message or a tool result), in tokens'),
        field('sess_out_tokens', 'Turn output', 'tokens', 'Tokens each turn generates (an answer or a tool call)'),
      ]),
      ...lengthDistRows('sess_in', 'Turn input', 'turn input', 'turn'),
      ...lengthDistRows('sess_out', 'Turn output', 'turn output', 'turn'),
      row(3, [
        field('sess_think_dist', 'Think / tool time', null, 'How the pause between a turn\'s answer and the next turn is drawn: fixed, uniform, exponential or lognormal'),
        field('sess_think_mean', 'Mean', 's', 'Mean pause (fixed: the pause itself), in seconds', { min: '0' }),
        field('sess_think_cv', 'CV', 'ratio', 'Coefficient of variation of the lognormal pause', { min: '0' }),
      ]),
      row(2, [
        field('sess_think_min', 'Shortest', 's', 'Shortest pause of the uniform draw, in seconds', { min: '0' }),
        field('sess_think_max', 'Longest', 's', 'Longest pause of the uniform draw, in seconds', { min: '0' }),
      ]),
    ]),
    fieldset('Cluster & scheduler', { section: 'simulate' }, [
      row(2, [
        field('sim_router', 'Router', null, 'How the cluster sends each request to a replica (choosing one turns TP/PP into a pool of replicas)'),
        field('sim_policy', 'Scheduler', null, 'Batching policy of each replica: continuous (vLLM), chunked prefill (Sarathi) or static batches'),
      ]),
      row(2, [
        field('sim_priority', 'Priority', null, 'Which work a step serves first: prefill first, decode first (stall-free) or first come first served'),
        field('sim_max_num_seqs', 'Max sequences', 'seq', 'Most requests running at once in a replica (vLLM max_num_seqs)'),
      ]),
      row(2, [
        field('sim_max_batched', 'Max batched tokens', 'tokens', 'Most tokens one step may process (vLLM max_num_batched_tokens); empty: max(max model length, 2048)', { placeholder: 'auto' }),
        field('sim_chunk_size', 'Chunk size', 'tokens', 'Chunked prefill: token budget of each step'),
      ]),
    ]),
    fieldset('KV cache', { section: 'simulate' }, [
      row(3, [
        field('sim_kv_alloc', 'Allocation', null, 'Paged: KV blocks on demand; contiguous: the max model length reserved per request'),
        field('sim_block_size', 'Block size', 'tokens', 'Tokens per KV-cache block'),
        field('sim_gpu_util', 'GPU memory use', 'fraction', 'Share of GPU memory the server may use (weights, activations and KV cache), 0 to 1'),
      ]),
      row(3, [
        field('sim_watermark', 'Watermark', 'fraction', 'Share of KV blocks kept free when admitting new requests (vLLM watermark), 0 to 0.5'),
        field('sim_preemption', 'Preemption', null, 'What happens to a request evicted when KV blocks run out: recompute its KV later, or swap it to host memory over PCIe'),
        field('sim_swap_space', 'Swap space', 'GiB', 'Host memory per GPU for swapped-out KV blocks (swap preemption)'),
      ]),
      field('sim_prefix_caching', 'Prefix caching (share full prefix blocks by hash)', null, 'Requests that start with the same tokens share their KV blocks; evicted least recently used'),
      row(2, [
        field('sim_kv_tier1', 'Offload tier', null, 'Where KV blocks evicted from HBM go, to be reloaded over its link instead of recomputed (host DRAM over PCIe or C2C, local NVMe); needs prefix caching'),
        field('sim_kv_tier2', 'Second offload tier', null, 'Where blocks evicted from the first offload tier go (for example local NVMe behind host DRAM)'),
      ]),
    ]),
    fieldset('Speculative decoding & SLO', { section: 'simulate' }, [
      field('spec_enabled', 'Speculative decoding', null, 'Draft tokens are proposed and verified in one pass over k+1 tokens; acceptance drawn per token'),
      row(3, [
        field('spec_method', 'Method', null, 'Draft model (needs a draft model in the scenario) or n-gram lookup'),
        field('spec_k', 'Draft tokens', 'k', 'Tokens proposed per step'),
        field('spec_accept', 'Acceptance', 'fraction', 'Probability that each drafted token is accepted, 0 to 1'),
      ]),
      row(2, [
        field('spec_draft', 'Draft model', null, 'Model preset that proposes the draft tokens (draft method only); it shares the GPUs with the target model'),
      ]),
      row(2, [
        field('sim_slo_ttft', 'TTFT SLO', 'ms', 'Time-to-first-token bound of the SLO; empty: none', { placeholder: 'none' }),
        field('sim_slo_ttft_pct', 'TTFT judged at', null, 'How the TTFT bound is judged: P50/P90/P95/P99 alone (that share of requests within it, as MLPerf and vllm bench serve state it), or Joint (counted in the share of requests within every joint bound at once, which must reach the attainment)'),
      ]),
      row(2, [
        field('sim_slo_tpot', 'TPOT SLO', 'ms', 'Time-per-output-token bound of the SLO (per request, after the first token); empty: none', { placeholder: 'none' }),
        field('sim_slo_tpot_pct', 'TPOT judged at', null, 'How the TPOT bound is judged: P50/P90/P95/P99 alone (that share of requests within it), or Joint (counted in the share of requests within every joint bound at once, which must reach the attainment)'),
      ]),
      row(2, [
        field('sim_slo_itl', 'ITL SLO', 'ms', 'Inter-token latency bound of the SLO (each gap between two output tokens); empty: none', { placeholder: 'none' }),
        field('sim_slo_itl_pct', 'ITL judged at', null, 'How the ITL bound is judged: P50/P90/P95/P99 alone (that share of the gaps between tokens within it), or Joint (a request meets it when every gap does, counted in the attainment share)'),
      ]),
      row(2, [
        field('sim_slo_e2e', 'E2E SLO', 'ms', 'End-to-end latency bound of the SLO (arrival to last token); empty: none', { placeholder: 'none' }),
        field('sim_slo_e2e_pct', 'E2E judged at', null, 'How the E2E bound is judged: P50/P90/P95/P99 alone (that share of requests within it), or Joint (counted in the share of requests within every joint bound at once, which must reach the attainment)'),
      ]),
      row(2, [
        field('sim_slo_attainment', 'SLO attainment', 'fraction', 'Share of requests that must meet every joint bound at once (the bounds judged Joint) for the run to pass (default 0.9); a bound judged at a percentile sets its own share'),
      ]),
      field('sim_steady_state', 'Run until the SLO verdict is decided', null, 'While the steady-state verdict is undecided, rerun longer: to the requests the measured queue asks for, at least doubling, at most 3 times, up to 60,000 requests (serving.steady_state; needs an SLO and a rate). The results are those of the longest run'),
      field('sim_max_qps', 'Search the highest QPS that meets the SLO', null, 'Max-QPS search: doubling then bisection over the arrival rate for the highest rate whose SLO attainment holds (needs an SLO and a rate)'),
    ]),
    fieldset('LoRA, MoE & disaggregation', { section: 'simulate' }, [
      field('srv_lora_enabled', 'Serve LoRA adapters (multi-LoRA)', null, 'Requests use one of several LoRA adapters: their GEMMs are added to each step, and adapters load over PCIe'),
      row(3, [
        field('srv_lora_adapters', 'Adapters', 'count', 'Number of distinct LoRA adapters requests are spread over'),
        field('srv_lora_rank', 'Adapter rank', 'r', 'Rank of each LoRA adapter (its inner dimension)'),
        field('srv_lora_max_batch', 'Adapters per batch', 'count', 'Most distinct adapters one step may batch together (max_loras)'),
      ]),
      row(2, [
        field('srv_moe_imbalance', 'MoE load imbalance', 'ratio', 'MoE models under expert parallelism: routed tokens on the busiest GPU / the mean (hot experts); expert kernels and the all-to-all run at the busiest load. Empty: the published default (DeepSeek-R1 routing statistics); 1 = perfectly balanced'),
      ]),
      field('disagg_enabled', 'Disaggregated prefill / decode pools', null, 'Split the cluster into a prefill pool and a decode pool; the prompt KV cache moves from prefill to decode replicas over the KV-transfer link'),
      row(3, [
        field('disagg_prefill', 'Prefill replicas', 'count', 'Replicas that only run prefill (role prefill)'),
        field('disagg_decode', 'Decode replicas', 'count', 'Replicas that only decode (role decode)'),
        field('disagg_tp', 'Pool TP', 'GPUs', 'Tensor parallelism of each replica in both pools; (prefill + decode replicas) × TP = GPUs'),
      ]),
    ]),
    fieldset('Training parallelism', { section: 'training' }, [
      row(4, [
        field('train_dp', 'DP', 'GPUs', 'Data parallel: model replicas, each on its share of the batch; DP × TP × PP × CP = GPUs'),
        field('train_tp', 'TP', 'GPUs', 'Tensor parallel: GPUs each layer is split across; divides the attention heads and fits inside a node'),
        field('train_pp', 'PP', 'stages', 'Pipeline parallel: stages the layers are split into; PP × virtual stages divides the layers'),
        field('train_cp', 'CP', 'GPUs', 'Context parallel (ring attention): GPUs each sequence is split across'),
      ]),
      row(3, [
        field('train_ep', 'EP', 'GPUs', 'Expert parallel (MoE models only): a subgroup of the DP ranks the experts are spread over; divides DP and the expert count'),
        field('train_vstages', 'Virtual stages', null, 'Model chunks per pipeline rank (interleaved 1F1B only): more chunks, smaller bubble, more transfers'),
        field('train_zero', 'ZeRO stage', null, 'ZeRO / FSDP sharding over the data-parallel ranks: 1 optimizer states, 2 also gradients, 3 also parameters (FSDP)'),
      ]),
      field('train_sp', 'Sequence parallel (needs TP ≥ 2)', null, 'Megatron sequence parallelism: norms, residuals and stored layer inputs sharded over TP; all-gather + reduce-scatter instead of all-reduce'),
    ]),
    fieldset('Batch', { section: 'training' }, [
      row(2, [
        field('train_seq_len', 'Sequence length', 'tokens', "Tokens per training sequence (at most the model's max context)"),
        field('train_mbs', 'Micro-batch', 'seq', 'Sequences per micro-batch on each model replica'),
      ]),
      row(2, [
        field('train_gbs', 'Global batch', 'seq', 'Sequences per optimizer step, all replicas; a multiple of DP × micro-batch (editing it clears gradient accumulation)', { placeholder: 'from accumulation' }),
        field('train_ga', 'Grad. accumulation', null, 'Micro-batches per replica per optimizer step (editing it clears the global batch); at least PP'),
      ]),
    ]),
    fieldset('Schedule & techniques', { section: 'training' }, [
      row(2, [
        field('train_schedule', 'Pipeline schedule', null, 'Order of forward and backward passes on the pipeline ranks, simulated pass by pass'),
        field('train_recompute', 'Recomputation', null, 'Activation recomputation: what the backward pass recomputes instead of storing'),
      ]),
      row(2, [
        field('train_every_n', 'Recompute every', 'layers', 'Full recomputation: checkpoint every n-th layer (1 = every layer)'),
      ]),
      field('train_rc_modules', 'Recomputed modules', null, 'Selective recomputation: the parts of each layer recomputed in the backward pass (default core attention)', { options: [["core_attn", "core attention"], ["layernorm", "layernorm"], ["mlp_act", "MLP activation"]], name: 'train_rc_module' }),
      row(2, [
        field('train_fp8', 'FP8 GEMMs', null, 'Which GEMMs run in FP8 (needs FP8 tensor cores); master weights and optimizer states keep higher precision'),
        field('train_optimizer', 'Optimizer', null, 'Optimizer and the states it keeps per parameter'),
      ]),
      field('train_offload', 'Optimizer states in CPU memory', null, 'CPU offload: optimizer states and master weights live in host memory; the update is priced over PCIe'),
      row(3, [
        field('train_attention', 'Attention', null, 'Attention kernel: FlashAttention (fused, no score matrix) or standard (materialized scores)'),
        field('train_moe_imbalance', 'MoE load imbalance', 'ratio', 'MoE models: tokens on the busiest expert rank / the mean; scales the expert GEMMs and the all-to-all (1 = balanced)'),
        field('train_runtime', 'Runtime overhead', 'GiB', 'Memory per GPU for the CUDA context, workspaces and NCCL buffers (default 2)'),
      ]),
    ]),
    fieldset('LoRA', { section: 'training' }, [
      field('lora_enabled', 'Train LoRA adapters (frozen base)', null, 'LoRA: the base model is frozen and only low-rank adapters are trained; int4/int8 base is QLoRA'),
      row(2, [
        field('lora_rank', 'Rank', 'r', 'Rank of each adapter (its inner dimension)'),
        field('lora_base_dtype', 'Base weights', null, 'Data type of the frozen base weights; int4 / int8 is QLoRA (with dequantization kernels)'),
      ]),
      field('lora_targets', 'Adapter targets', null, 'Projections that get an adapter: attention q, k, v, o and MLP up, gate, down', { options: [["q", "q"], ["k", "k"], ["v", "v"], ["o", "o"], ["up", "up"], ["gate", "gate"], ["down", "down"]], name: 'lora_target' }),
    ]),
    fieldset('Token budget & cost', { section: 'training' }, [
      row(2, [
        field('tokens_to_train', 'Tokens to train', 'tokens', 'Training tokens of the whole run (e.g. 1e12); enables time, GPU-hours and energy to train. Empty: no run totals', { inputmode: null, placeholder: 'none' }),
        field('gpu_hour_usd', 'GPU price', 'USD/GPU·h', 'Price of one GPU-hour; with tokens to train, gives the cost of the run', { inputmode: null, placeholder: 'none' }),
      ]),
    ]),
    fieldset('Precision', {  }, [
      row(3, [
        field('weights', 'Weights', null, 'Data type the model weights are stored in (int8/int4: weight-only quantization). From the model: the quantization its config states (a pasted one: From the config), else the activations\' dtype'),
        field('activations', 'Activations', null, 'Data type of activations and of the math (tensor-core dtype)'),
        field('kv_cache', 'KV cache', null, 'Data type of the attention key/value cache. From the model: the KV dtype its config states, else the activations\'', { section: 'serving' }),
      ]),
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

/** A field's label: its text, then its unit. */
function label(f, attrs) {
  return make('label', attrs, f.unit ? [`${f.label} `, make('span', { class: 'unit' }, [f.unit])] : [f.label]);
}

/** The .field block of layout entry `f`, its control made from its FIELDS kind. */
function fieldBlock(f, kind) {
  const at = { class: 'field', 'data-section': f.section };
  if (kind === 'bool' || kind === 'toggle') {
    return make('div', { ...at, class: 'field check-field' }, [
      make('input', { id: f.id, name: f.id, type: 'checkbox', title: f.help }), label(f, { for: f.id, title: f.help })]);
  }
  if (kind === 'targets') {
    const boxes = f.options.map(([value, text]) => make('label', { class: 'check' }, [make('input', { type: 'checkbox', name: f.name, value }), ` ${text}`]));
    return make('div', at, [make('span', { id: `${f.id}-label`, class: 'label', title: f.help }, [f.label]),
      make('div', { id: f.id, class: 'checks', role: 'group', 'aria-labelledby': `${f.id}-label`, title: f.help }, boxes)]);
  }
  let control;
  if (KEYPAD[kind]) {
    const [step, keypad] = KEYPAD[kind];
    control = make('input', { id: f.id, name: f.id, type: 'number', min: f.min, step,
      inputmode: f.inputmode === null ? null : keypad, placeholder: f.placeholder, title: f.help });
  } else control = make('select', { id: f.id, name: f.id, title: f.help });
  return make('div', at, [label(f, { for: f.id, title: f.help }), control]);
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

/** Every field id of the layout, in order. */
export function layoutFieldIds(items = Object.values(FORM_PARTS).flat()) {
  return items.flatMap((i) => (i.type === 'field' ? [i.id] : i.items ? layoutFieldIds(i.items) : []));
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
