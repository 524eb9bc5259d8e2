// A deployment as a launch command for a serving engine (vLLM, SGLang or
// TensorRT-LLM), with the settings the simulation assumed: tensor and pipeline
// split, batch limit, scheduler (chunked prefill and its token budget), KV block
// size, memory share, context length, weight and KV dtypes, and the replica
// count. It reads the engine's resolved scenario (api::validate_scenario: every
// default filled in by the engine), so no default is restated here. Nothing here
// touches the DOM, so Node tests import it.

export const LAUNCH_ENGINES = [
  ['vllm', 'vLLM'],
  ['sglang', 'SGLang'],
  ['trtllm', 'TensorRT-LLM'],
];

/**
 * The Hugging Face repository of a model preset, from its source note ("HF config.json of
 * meta-llama/Meta-Llama-3-70B (2024)"); null when the source names none.
 */
export function modelRepo(model) {
  const text = model && typeof model.source === 'string' ? model.source : '';
  const m = /(?:config\.json of|huggingface\.co\/)\s*([A-Za-z0-9][\w.-]*\/[\w.-]*\w)/.exec(text);
  return m ? m[1] : null;
}

const TORCH_DTYPE = { bf16: 'bfloat16', fp16: 'float16', fp32: 'float32' };

/** One line per flag, joined with shell continuations. */
const command = (head, flags) => [head, ...flags.map((f) => `  ${f}`)].join(' \\\n');

/**
 * The settings of a resolved serving scenario that a launch command carries.
 * `resolved`: the engine's resolved scenario; `label`: the deployment's name.
 */
export function deploymentSettings(resolved) {
  const sv = resolved.serving || {};
  const pools = (sv.cluster && Array.isArray(sv.cluster.pools)) ? sv.cluster.pools : [];
  const sched = sv.scheduler || {};
  const kv = sv.kv_cache || {};
  const precision = resolved.precision || {};
  const chunked = sched.policy === 'chunked_prefill';
  return {
    pools: pools.map((p) => ({ name: p.name, role: p.role, replicas: p.replicas, tp: p.tp, pp: p.pp })),
    maxNumSeqs: sched.max_num_seqs,
    chunked,
    tokenBudget: chunked ? sched.chunk_size : sched.max_num_batched_tokens,
    blockSize: kv.block_size,
    memoryShare: kv.gpu_memory_utilization,
    prefixCaching: Boolean(kv.prefix_caching),
    maxModelLen: kv.max_model_len,
    // Wide expert parallelism: attention data-parallel groups of this many replicas (1: none).
    attentionDp: (sv.moe && sv.moe.attention_data_parallel) || 1,
    expertParallel: (sv.moe && sv.moe.expert_parallel) || 1,
    weights: precision.weights || 'bf16',
    kvCache: precision.kv_cache || precision.weights || 'bf16',
  };
}

function weightFlags(engine, weights) {
  if (TORCH_DTYPE[weights]) return [engine === 'trtllm' ? null : `--dtype ${TORCH_DTYPE[weights]}`].filter(Boolean);
  if (weights === 'fp8') return [engine === 'trtllm' ? null : '--quantization fp8'].filter(Boolean);
  return [];  // int8 / int4: a pre-quantized checkpoint carries its own format
}

function launchLine(engine, repo, s, pool) {
  const kvFp8 = s.kvCache === 'fp8';
  const len = Number.isFinite(s.maxModelLen) && s.maxModelLen > 0 ? s.maxModelLen : null;
  if (engine === 'vllm') {
    return command(`vllm serve ${repo}`, [
      `--tensor-parallel-size ${pool.tp}`,
      `--pipeline-parallel-size ${pool.pp}`,
      `--max-num-seqs ${s.maxNumSeqs}`,
      s.chunked ? '--enable-chunked-prefill' : '--no-enable-chunked-prefill',
      `--max-num-batched-tokens ${s.tokenBudget}`,
      `--block-size ${s.blockSize}`,
      `--gpu-memory-utilization ${s.memoryShare}`,
      ...(len ? [`--max-model-len ${len}`] : []),
      ...weightFlags(engine, s.weights),
      `--kv-cache-dtype ${kvFp8 ? 'fp8' : 'auto'}`,
      s.prefixCaching ? '--enable-prefix-caching' : '--no-enable-prefix-caching',
    ]);
  }
  if (engine === 'sglang') {
    return command(`python -m sglang.launch_server --model-path ${repo}`, [
      `--tp-size ${pool.tp}`,
      `--pp-size ${pool.pp}`,
      `--max-running-requests ${s.maxNumSeqs}`,
      // SGLang always batches prefill with decode; -1 turns chunking off.
      `--chunked-prefill-size ${s.chunked ? s.tokenBudget : -1}`,
      ...(s.chunked ? [] : [`--max-prefill-tokens ${s.tokenBudget}`]),
      `--page-size ${s.blockSize}`,
      `--mem-fraction-static ${s.memoryShare}`,
      ...(len ? [`--context-length ${len}`] : []),
      ...weightFlags(engine, s.weights),
      `--kv-cache-dtype ${kvFp8 ? 'fp8_e4m3' : 'auto'}`,
      ...(s.prefixCaching ? [] : ['--disable-radix-cache']),
    ]);
  }
  // TensorRT-LLM's trtllm-serve: the scheduler and KV settings go in its LLM API options file.
  const options = [
    `enable_chunked_prefill: ${s.chunked}`,
    'kv_cache_config:',
    `  free_gpu_memory_fraction: ${s.memoryShare}`,
    `  enable_block_reuse: ${s.prefixCaching}`,
    ...(kvFp8 ? ['  dtype: fp8'] : []),
    ...(s.weights === 'fp8' ? ['quant_config:', '  quant_algo: FP8'] : []),
  ];
  return [
    "cat > llm-options.yml <<'EOF'",
    ...options,
    'EOF',
    command(`trtllm-serve ${repo}`, [
      '--backend pytorch',
      `--tp_size ${pool.tp}`,
      `--pp_size ${pool.pp}`,
      `--max_batch_size ${s.maxNumSeqs}`,
      `--max_num_tokens ${s.tokenBudget}`,
      ...(len ? [`--max_seq_len ${len}`] : []),
      `--kv_cache_free_gpu_memory_fraction ${s.memoryShare}`,
      '--extra_llm_api_options llm-options.yml',
    ]),
  ].join('\n');
}

/**
 * The launch command of a deployment for `engine` ('vllm' | 'sglang' | 'trtllm'):
 * a comment block saying what it deploys and what the simulation assumed that a
 * command cannot say (replicas behind a router, the GPU), then one command per pool.
 * `model`: the model preset (name, source); `gpuName`: the GPU's name.
 */
export function launchCommand(engine, { resolved, label, model, gpuName, router }) {
  const s = deploymentSettings(resolved);
  const repo = modelRepo(model) || '<your checkpoint of this model>';
  const name = (model && model.name) || (typeof resolved.model === 'string' ? resolved.model : 'the model');
  const gpus = s.pools.reduce((n, p) => n + p.replicas * p.tp * p.pp, 0);
  const lines = [
    `# ${label}: ${name} on ${gpus} × ${gpuName}, as Sightline simulated it.`,
    `# Model repository: ${repo}${modelRepo(model) ? ' (named in the model preset\'s source; use your own checkpoint if it differs)' : ''}.`,
  ];
  if (!['bf16', 'fp16', 'fp32', 'fp8'].includes(s.weights)) lines.push(`# Weights in ${s.weights}: point the command at a checkpoint quantized to ${s.weights}.`);
  if (s.attentionDp > 1) {
    // What each engine calls it; the command below is one replica's, so a group runs it as one data-parallel launch.
    const how = {
      vllm: `vllm serve … --data-parallel-size ${s.attentionDp} --enable-expert-parallel`,
      sglang: 'sglang.launch_server … --enable-dp-attention --dp-size (the group\'s replicas) --tp-size (its GPUs)',
      trtllm: 'enable_attention_dp: true in llm-options.yml, --ep_size (the group\'s GPUs)',
    }[engine];
    lines.push(`# Wide expert parallelism: replicas in attention data-parallel groups of ${s.attentionDp}, the experts spread over each group's GPUs (EP${s.expertParallel}); launch each group as one deployment (${how}).`);
  }
  for (const pool of s.pools) {
    const role = pool.role && pool.role !== 'mixed' ? ` (${pool.role} pool${engine === 'vllm' ? ': vLLM\'s disaggregated prefill needs its KV connector set up' : ''})` : '';
    lines.push('');
    lines.push(`# ${pool.replicas} replica${pool.replicas === 1 ? '' : 's'} of ${pool.tp * pool.pp} GPU${pool.tp * pool.pp === 1 ? '' : 's'} each${role}: run this once per replica, on its own GPUs${pool.replicas > 1 ? `, behind a load balancer (the simulation routes ${router || 'to the least-loaded replica'})` : ''}.`);
    lines.push(launchLine(engine, repo, s, pool));
  }
  return `${lines.join('\n')}\n`;
}
