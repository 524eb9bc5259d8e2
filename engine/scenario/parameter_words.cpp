#include "scenario/parameter_words.hpp"

#include <map>

namespace sightline {

namespace {

// A row of words as the source spells it: pointer, label, unit ("" for none), help.
struct WordsRow {
  const char* pointer;
  const char* label;
  const char* unit;
  const char* help;
};

// The words of a length distribution's parameters, the same under each length
// (a request's prompt or output, a session turn's input or output): in the
// text, '@' stands for the length's title, '#' for its noun, '^' for what it
// is drawn per. Filled by one loop, which costs the wasm module less than
// spelling each out or concatenating strings. A row's pointer is its key under
// the length's pointer.
constexpr WordsRow kLengthWordRows[] = {
    {"dist", "@ length distribution", "", "How # lengths are drawn per ^: fixed (the token count above), uniform, normal, lognormal or zipf"},
    {"min", "@ min", "tokens", "Shortest # length drawn (uniform and zipf: required; normal and lognormal: default 1)"},
    {"max", "@ max", "tokens",
     "Longest # length drawn (uniform and zipf: required; normal and lognormal: default the max model length)"},
    {"mean", "@ mean", "tokens", "Mean # length of the normal or lognormal distribution"},
    {"cv", "@ CV", "ratio", "Coefficient of variation (std. dev. / mean) of the lognormal # length distribution"},
    {"stddev", "@ std. dev.", "tokens", "Standard deviation of the normal # length distribution"},
    {"theta", "@ theta", "exponent", "Zipf exponent of the # length distribution: higher favours short lengths (default 1)"},
};

struct LengthOf {
  const char* pointer;
  const char* title;
  const char* noun;
  const char* per;
};
constexpr LengthOf kLengths[] = {
    {"/serving/workload/prompt_tokens", "Prompt", "prompt", "request"},
    {"/serving/workload/output_tokens", "Output", "output", "request"},
    {"/serving/workload/sessions/input_tokens", "Turn input", "turn input", "turn"},
    {"/serving/workload/sessions/output_tokens", "Turn output", "turn output", "turn"},
};

std::string fill_length_words(const char* text, const LengthOf& length) {
  std::string out;
  for (const char* c = text; *c; ++c) {
    if (*c == '@') out += length.title;
    else if (*c == '#') out += length.noun;
    else if (*c == '^') out += length.per;
    else out += *c;
  }
  return out;
}

// The parameters with words of their own.
constexpr WordsRow kParameterWordRows[] = {
    {"/model", "Model", "",
     "Model architecture preset (layers, hidden size, heads, MoE…)"},
    {"/hardware/gpu", "GPU", "",
     "GPU preset: peak TFLOPS per dtype, HBM capacity and bandwidth, SM count"},
    {"/hardware/intra_node", "Intra-node link", "",
     "Link between GPUs in a node (required when GPUs per node > 1)"},
    {"/hardware/inter_node", "Inter-node network", "",
     "Network between nodes (required when nodes > 1)"},
    // A GPU's own spec sheet (the page's custom GPU writes these keys of an inline hardware.gpu).
    {"/hardware/gpu/peak_tflops/bf16", "BF16 peak", "TFLOP/s",
     "Dense (no sparsity) BF16 tensor-core peak"},
    {"/hardware/gpu/peak_tflops/fp16", "FP16 peak", "TFLOP/s",
     "Dense FP16 tensor-core peak"},
    {"/hardware/gpu/peak_tflops/fp8", "FP8 peak", "TFLOP/s",
     "Dense FP8 tensor-core peak; 0 when the GPU has no FP8"},
    {"/hardware/gpu/peak_tflops/int8", "INT8 peak", "TOP/s",
     "Dense INT8 tensor-core peak"},
    {"/hardware/gpu/memory_GiB", "Memory", "GiB",
     "Memory capacity per GPU"},
    {"/hardware/gpu/hbm_bandwidth_GBps", "Bandwidth", "GB/s",
     "Peak memory (HBM/GDDR) bandwidth"},
    {"/hardware/gpu/sm_count", "SMs", "count",
     "Streaming multiprocessors (wave quantization of kernels)"},
    {"/hardware/gpu/nvlink_bandwidth_GBps", "Link", "GB/s",
     "GPU-to-GPU link bandwidth, total bidirectional per GPU (NVLink); 0 for none"},
    {"/hardware/gpu/tdp_W", "TDP", "W",
     "Board power, for the energy figures"},
    {"/hardware/gpus_per_node", "GPUs per node", "count",
     "GPUs in each node; GPUs per node × nodes must equal TP × PP (serving) or DP × TP × PP × CP (training)"},
    {"/hardware/nodes", "Nodes", "count",
     "Number of nodes (servers); empty means 1"},
    {"/serving/parallelism/tp", "Tensor parallel", "GPUs",
     "Tensor parallelism: GPUs each layer is split across; must divide the number of attention heads"},
    {"/serving/parallelism/pp", "Pipeline parallel", "stages",
     "Pipeline parallelism: stages the layers are split into; must divide the number of layers"},
    {"/serving/workload/prompt_tokens", "Prompt", "tokens",
     "Input length of each request, in tokens (prefill)"},
    {"/serving/workload/output_tokens", "Output", "tokens",
     "Tokens generated per request (decode steps)"},
    {"/serving/workload/batch_size", "Batch size", "req",
     "Requests processed together in one batch"},
    {"/serving/workload/arrival/process", "Arrivals", "",
     "How requests arrive: Poisson, gamma (bursty), fixed interval, all at once (offline batch), a trace, or a closed loop of clients"},
    {"/serving/workload/arrival/rate_qps", "Rate", "req/s",
     "Mean arrival rate in requests per second (poisson, gamma and fixed arrivals); with multi-turn sessions, new sessions per second"},
    {"/serving/workload/num_requests", "Requests", "count",
     "Number of requests simulated"},
    {"/serving/workload/duration_s", "Duration", "s",
     "Simulated arrival window in seconds, instead of a request count (needs a rate); setting it clears the request count"},
    {"/serving/workload/arrival/cv", "Arrival CV", "ratio",
     "Coefficient of variation of the gaps between gamma arrivals: 1 is Poisson, above 1 is bursty"},
    {"/serving/workload/arrival/concurrency", "Clients", "count",
     "Closed loop: clients each sending their next request when the last one ends (a benchmark's max concurrency)"},
    {"/serving/workload/arrival/think_time_s", "Think time", "s",
     "Closed loop: pause between a client's request ending and its next one; empty: 0"},
    {"/serving/workload/shared_prefix", "Shared prefix (prompts start with a shared system prompt)", "",
     "Prompts start with one of a few shared prefixes (system prompts, few-shot examples) that prefix caching can reuse"},
    {"/serving/workload/shared_prefix/tokens", "Prefix length", "tokens",
     "Tokens of each shared prefix"},
    {"/serving/workload/shared_prefix/request_fraction", "Requests with prefix", "fraction",
     "Share of requests that start with a shared prefix, 0 to 1"},
    {"/serving/workload/shared_prefix/groups", "Prefix groups", "count",
     "Number of distinct shared prefixes, drawn uniformly"},
    {"/serving/workload/sessions", "Sessions: multi-turn conversations or agent runs", "",
     "The workload is sessions of several turns, each turn re-sending the whole context so far; they replace the request count, lengths and shared prefix above"},
    {"/serving/workload/sessions/first_input_tokens", "First turn input", "tokens",
     "New tokens of a session's first turn (the task or question), after the system prompt"},
    {"/serving/workload/sessions/input_tokens", "Turn input", "tokens",
     "New tokens each later turn adds (a user message or a tool result), in tokens"},
    {"/serving/workload/sessions/output_tokens", "Turn output", "tokens",
     "Tokens each turn generates (an answer or a tool call)"},
    {"/serving/workload/sessions/think_time_s/min_s", "Shortest", "s",
     "Shortest pause of the uniform draw, in seconds"},
    {"/serving/workload/sessions/think_time_s/max_s", "Longest", "s",
     "Longest pause of the uniform draw, in seconds"},
    {"/serving/workload/num_sessions", "Sessions", "count",
     "Number of sessions simulated; they arrive at the traffic rate above"},
    {"/serving/workload/sessions/turns/min", "Turns, min", "count",
     "Fewest turns in a session (drawn uniformly between min and max)"},
    {"/serving/workload/sessions/turns/max", "Turns, max", "count",
     "Most turns in a session"},
    {"/serving/workload/sessions/system_prompt_tokens", "System prompt", "tokens",
     "Tokens every session starts with (instructions, tool schemas), the same for all sessions: prefix caching can share them"},
    {"/serving/workload/sessions/think_time_s/dist", "Think / tool time", "",
     "How the pause between a turn's answer and the next turn is drawn: fixed, uniform, exponential or lognormal"},
    {"/serving/workload/sessions/think_time_s/mean_s", "Mean", "s",
     "Mean pause (fixed: the pause itself), in seconds"},
    {"/serving/workload/sessions/think_time_s/cv", "CV", "ratio",
     "Coefficient of variation of the lognormal pause"},
    {"/serving/cluster/router", "Router", "",
     "How the cluster sends each request to a replica (choosing one turns TP/PP into a pool of replicas)"},
    {"/serving/scheduler/policy", "Scheduler", "",
     "Batching policy of each replica: continuous (vLLM V0), chunked prefill (Sarathi, vLLM V1, SGLang) or static batches; when not given, the software stack's own (continuous on vllm-like)"},
    {"/serving/scheduler/priority", "Priority", "",
     "Which work a step serves first: prefill first, decode first (stall-free), prefill alone (a step with prompt tokens takes no decodes: SGLang) or first come first served"},
    {"/serving/scheduler/max_num_seqs", "Max sequences", "seq",
     "Most requests running at once in a replica (vLLM max_num_seqs); when not given, the software stack's own limit (256 on vllm-like)"},
    {"/serving/scheduler/max_num_batched_tokens", "Max batched tokens", "tokens",
     "Most tokens one step may process (vLLM max_num_batched_tokens); empty: the software stack's with its policy, else max(max model length, 2048)"},
    {"/serving/scheduler/chunk_size", "Chunk size", "tokens",
     "Chunked prefill: token budget of each step; when not given, the software stack's own (by GPU memory), else 512"},
    {"/serving/kv_cache/allocation", "Allocation", "",
     "Paged: KV blocks on demand; contiguous: the max model length reserved per request"},
    {"/serving/kv_cache/block_size", "Block size", "tokens",
     "Tokens per KV-cache block"},
    {"/serving/kv_cache/gpu_memory_utilization", "GPU memory use", "fraction",
     "Share of GPU memory the server may use (weights, activations and KV cache), 0 to 1"},
    {"/serving/kv_cache/watermark", "Watermark", "fraction",
     "Share of KV blocks kept free when admitting new requests (vLLM watermark), 0 to 0.5"},
    {"/serving/kv_cache/preemption", "Preemption", "",
     "What happens to a request evicted when KV blocks run out: recompute its KV later, or swap it to host memory over PCIe"},
    {"/serving/kv_cache/admission", "Admission", "",
     "On demand: a prompt starts with its first chunk's KV blocks and may be preempted (vLLM, SGLang); to completion: only with its whole prompt and output's blocks free, never preempted (TensorRT-LLM); when not given, the software stack's own"},
    {"/serving/kv_cache/swap_space_GiB", "Swap space", "GiB",
     "Host memory per GPU for swapped-out KV blocks (swap preemption)"},
    {"/serving/kv_cache/prefix_caching", "Prefix caching (share full prefix blocks by hash)", "",
     "Requests that start with the same tokens share their KV blocks; evicted least recently used"},
    {"/serving/kv_cache/offload/tiers/*", "Offload tier", "",
     "Where KV blocks evicted from HBM (the second tier: from the first) go, to be reloaded over its link instead of recomputed (host DRAM over PCIe or C2C, local NVMe); needs prefix caching"},
    {"/serving/speculative", "Speculative decoding", "",
     "Draft tokens are proposed and verified in one pass over k+1 tokens; acceptance drawn per token"},
    {"/serving/speculative/draft_model", "Draft model", "",
     "Model preset that proposes the draft tokens (draft method only); it shares the GPUs with the target model"},
    {"/serving/speculative/method", "Method", "",
     "Draft model (needs a draft model in the scenario) or n-gram lookup"},
    {"/serving/speculative/k", "Draft tokens", "k",
     "Tokens proposed per step"},
    {"/serving/speculative/acceptance_rate", "Acceptance", "fraction",
     "Probability that each drafted token is accepted, 0 to 1"},
    {"/serving/slo/ttft_ms", "TTFT SLO", "ms",
     "Time-to-first-token bound of the SLO; empty: none"},
    {"/serving/slo/tpot_ms", "TPOT SLO", "ms",
     "Time-per-output-token bound of the SLO (per request, after the first token); empty: none"},
    {"/serving/slo/itl_ms", "ITL SLO", "ms",
     "Inter-token latency bound of the SLO (each gap between two output tokens); empty: none"},
    {"/serving/slo/e2e_ms", "E2E SLO", "ms",
     "End-to-end latency bound of the SLO (arrival to last token); empty: none"},
    {"/serving/slo/percentiles/ttft", "TTFT judged at", "",
     "How the TTFT bound is judged: P50/P90/P95/P99 alone (that share of requests within it, as MLPerf and vllm bench serve state it), or Joint (counted in the share of requests within every joint bound at once, which must reach the attainment)"},
    {"/serving/slo/percentiles/tpot", "TPOT judged at", "",
     "How the TPOT bound is judged: P50/P90/P95/P99 alone (that share of requests within it), or Joint (counted in the share of requests within every joint bound at once, which must reach the attainment)"},
    {"/serving/slo/percentiles/itl", "ITL judged at", "",
     "How the ITL bound is judged: P50/P90/P95/P99 alone (that share of the gaps between tokens within it), or Joint (a request meets it when every gap does, counted in the attainment share)"},
    {"/serving/slo/percentiles/e2e", "E2E judged at", "",
     "How the E2E bound is judged: P50/P90/P95/P99 alone (that share of requests within it), or Joint (counted in the share of requests within every joint bound at once, which must reach the attainment)"},
    {"/serving/slo/attainment", "SLO attainment", "fraction",
     "Share of requests that must meet every joint bound at once (the bounds judged Joint) for the run to pass (default 0.9); a bound judged at a percentile sets its own share"},
    {"/serving/steady_state", "Run until the SLO verdict is decided", "",
     "While the steady-state verdict is undecided, rerun longer: to the requests the measured queue asks for, at least doubling, at most 3 times, up to 60,000 requests (serving.steady_state; needs an SLO and a rate). The results are those of the longest run"},
    {"/serving/max_qps_search", "Search the highest QPS that meets the SLO", "",
     "Max-QPS search: doubling then bisection over the arrival rate for the highest rate whose SLO attainment holds (needs an SLO and a rate)"},
    {"/serving/lora", "Serve LoRA adapters (multi-LoRA)", "",
     "Requests use one of several LoRA adapters: their GEMMs are added to each step, and adapters load over PCIe"},
    {"/serving/lora/adapters", "Adapters", "count",
     "Number of distinct LoRA adapters requests are spread over"},
    {"/serving/lora/rank", "Adapter rank", "r",
     "Rank of each LoRA adapter (its inner dimension)"},
    {"/serving/lora/max_adapters_per_batch", "Adapters per batch", "count",
     "Most distinct adapters one step may batch together (max_loras)"},
    {"/serving/moe/load_imbalance", "MoE load imbalance", "ratio",
     "MoE models under expert parallelism: routed tokens on the busiest GPU / the mean (hot experts); expert kernels and the all-to-all run at the busiest load. Empty: the published default (DeepSeek-R1 routing statistics); 1 = perfectly balanced"},
    {"/serving/moe/expert_parallel", "Expert parallel (EP)", "GPUs",
     "MoE models: GPUs the routed experts are spread over, reached by an all-to-all per MoE layer. Divides TP, or with attention DP equals attention DP × TP (wide EP); 1 = every GPU holds its TP share of every expert"},
    {"/serving/moe/attention_data_parallel", "Attention DP", "replicas",
     "Wide EP: replicas whose attention runs data-parallel (each on its own sequences and KV cache) while one expert-parallel group of attention DP × TP GPUs serves their experts; they step in lockstep. Divides the replicas (SGLang --enable-dp-attention, TRT-LLM enable_attention_dp)"},
    {"/serving/moe/redundant_experts", "Redundant experts", "experts",
     "Expert placement (EPLB): extra copies of hot experts spread over the expert-parallel GPUs, which balance the load and take memory; needs EP > 1, and EP must divide experts + copies"},
    {"/serving/moe/all_to_all", "All-to-all kernels", "",
     "Expert-parallel dispatch and combine: auto (low latency for decode-only steps, high throughput with prefill tokens), low_latency (DeepEP low-latency, fp8 dispatch) or high_throughput (DeepEP normal)"},
    {"/serving/moe/two_batch_overlap", "Two-batch overlap", "",
     "Each step runs as two micro-batches, one's dispatch and combine travelling while the other computes (SGLang --enable-two-batch-overlap): the all-to-all hides behind compute, and each half reads the weights again; needs EP > 1"},
    {"/precision/weights", "Weights", "",
     "Data type the model weights are stored in (int8/int4: weight-only quantization). From the model: the quantization its config states (a pasted one: From the config), else the activations' dtype"},
    {"/precision/activations", "Activations", "",
     "Data type of activations and of the math (tensor-core dtype)"},
    {"/precision/kv_cache", "KV cache", "",
     "Data type of the attention key/value cache. From the model: the KV dtype its config states, else the activations'"},
    {"/training/parallelism/dp", "DP", "GPUs",
     "Data parallel: model replicas, each on its share of the batch; DP × TP × PP × CP = GPUs"},
    {"/training/parallelism/tp", "TP", "GPUs",
     "Tensor parallel: GPUs each layer is split across; divides the attention heads and fits inside a node"},
    {"/training/parallelism/pp", "PP", "stages",
     "Pipeline parallel: stages the layers are split into; PP × virtual stages divides the layers"},
    {"/training/parallelism/cp", "CP", "GPUs",
     "Context parallel (ring attention): GPUs each sequence is split across"},
    {"/training/parallelism/ep", "EP", "GPUs",
     "Expert parallel (MoE models only): a subgroup of the DP ranks the experts are spread over; divides DP and the expert count"},
    {"/training/parallelism/virtual_stages", "Virtual stages", "",
     "Model chunks per pipeline rank (interleaved 1F1B only): more chunks, smaller bubble, more transfers"},
    {"/training/parallelism/zero_stage", "ZeRO stage", "",
     "ZeRO / FSDP sharding over the data-parallel ranks: 1 optimizer states, 2 also gradients, 3 also parameters (FSDP)"},
    {"/training/parallelism/sequence_parallel", "Sequence parallel (needs TP ≥ 2)", "",
     "Megatron sequence parallelism: norms, residuals and stored layer inputs sharded over TP; all-gather + reduce-scatter instead of all-reduce"},
    {"/training/batch/seq_len", "Sequence length", "tokens",
     "Tokens per training sequence (at most the model's max context)"},
    {"/training/batch/micro_batch_size", "Micro-batch", "seq",
     "Sequences per micro-batch on each model replica"},
    {"/training/batch/global_batch_size", "Global batch", "seq",
     "Sequences per optimizer step, all replicas; a multiple of DP × micro-batch (editing it clears gradient accumulation)"},
    {"/training/batch/gradient_accumulation", "Grad. accumulation", "",
     "Micro-batches per replica per optimizer step (editing it clears the global batch); at least PP"},
    {"/training/schedule", "Pipeline schedule", "",
     "Order of forward and backward passes on the pipeline ranks, simulated pass by pass"},
    {"/training/recompute/mode", "Recomputation", "",
     "Activation recomputation: what the backward pass recomputes instead of storing"},
    {"/training/recompute/modules", "Recomputed modules", "",
     "Selective recomputation: the parts of each layer recomputed in the backward pass (default core attention)"},
    {"/training/recompute/every_n_layers", "Recompute every", "layers",
     "Full recomputation: checkpoint every n-th layer (1 = every layer)"},
    {"/training/attention", "Attention", "",
     "Attention kernel: FlashAttention (fused, no score matrix) or standard (materialized scores)"},
    {"/training/fp8", "FP8 GEMMs", "",
     "Which GEMMs run in FP8 (needs FP8 tensor cores); master weights and optimizer states keep higher precision"},
    {"/training/moe/load_imbalance", "MoE load imbalance", "ratio",
     "MoE models: tokens on the busiest expert rank / the mean; scales the expert GEMMs and the all-to-all (1 = balanced)"},
    {"/training/runtime_overhead_GiB", "Runtime overhead", "GiB",
     "Memory per GPU for the CUDA context, workspaces and NCCL buffers (default 2)"},
    {"/training/optimizer/type", "Optimizer", "",
     "Optimizer and the states it keeps per parameter"},
    {"/training/optimizer/cpu_offload", "Optimizer states in CPU memory", "",
     "CPU offload: optimizer states and master weights live in host memory; the update is priced over PCIe"},
    {"/training/lora", "Train LoRA adapters (frozen base)", "",
     "LoRA: the base model is frozen and only low-rank adapters are trained; int4/int8 base is QLoRA"},
    {"/training/lora/targets", "Adapter targets", "",
     "Projections that get an adapter: attention q, k, v, o and MLP up, gate, down"},
    {"/training/lora/rank", "Rank", "r",
     "Rank of each adapter (its inner dimension)"},
    {"/training/lora/base_dtype", "Base weights", "",
     "Data type of the frozen base weights; int4 / int8 is QLoRA (with dequantization kernels)"},
    {"/training/tokens_to_train", "Tokens to train", "tokens",
     "Training tokens of the whole run (e.g. 1e12); enables time, GPU-hours and energy to train. Empty: no run totals"},
    {"/cost_model/gpu_hour_usd", "GPU price", "USD/GPU·h",
     "Price of one GPU-hour; with tokens to train, gives the cost of the run"},
    {"/serving/cluster/pools", "Disaggregated prefill / decode pools", "",
     "Split the cluster into a prefill pool and a decode pool; the prompt KV cache moves from prefill to decode replicas over the KV-transfer link"},
    {"/serving/cluster/pools/*/replicas", "Replicas", "count",
     "Replicas of the pool (role prefill: they only run prefill; role decode: they only decode)"},
    {"/serving/cluster/pools/*/tp", "Pool TP", "GPUs",
     "Tensor parallelism of each replica of the pool; the pools' replicas × TP × PP = GPUs"},
};

std::vector<ParameterWords> make_words() {
  std::vector<ParameterWords> out;
  for (const WordsRow& r : kParameterWordRows) out.push_back({r.pointer, r.label, r.unit, r.help});
  for (const LengthOf& length : kLengths)
    for (const WordsRow& r : kLengthWordRows)
      out.push_back({std::string(length.pointer) + "/" + r.pointer, fill_length_words(r.label, length), r.unit,
                     fill_length_words(r.help, length)});
  return out;
}

}  // namespace

const std::vector<ParameterWords>& parameter_words() {
  static const std::vector<ParameterWords> words = make_words();
  return words;
}

const ParameterWords* parameter_words_at(const std::string& pointer) {
  static const std::map<std::string, const ParameterWords*> index = [] {
    std::map<std::string, const ParameterWords*> m;
    for (const ParameterWords& w : parameter_words()) m.emplace(w.pointer, &w);
    return m;
  }();
  const auto it = index.find(pointer);
  return it == index.end() ? nullptr : it->second;
}

}  // namespace sightline
