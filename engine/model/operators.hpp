#pragma once
// The operator list of one model step: every kernel a forward pass launches,
// with its FLOPs, bytes moved and shape. Cost models price these; nothing here
// knows about time.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "model/architecture.hpp"
#include "model/moe_routing.hpp"
#include "core/dtype.hpp"

namespace sightline {

enum class OpFamily {
  Gemm,
  AttentionPrefill,
  AttentionDecode,
  Norm,
  Elementwise,
  Rope,
  KvCacheWrite,
  Embedding,
  MoeRouter,
  Collective,
  Sampling,
  Host,  // CPU-side time (launches, scheduling) exposed on the step's critical path
};

std::string op_family_name(OpFamily f);

// What code downstream of the step builder branches on, tagged where the
// operator is built: the step is rebuilt and priced every simulated step, so
// no hot path compares operator names (tests/layering/op_name_compares checks).
// `name` stays for output and the measured-data columns.
enum class OpRole : uint8_t {
  Other,
  AttnProj,      // attn_pre_proj, attn_post_proj: LoRA's attention targets
  MlpProj,       // mlp_up/down_proj, moe_shared_up/down_proj: LoRA's all-linear targets
  ExpertGemm,    // moe_expert_up/down_proj: the routed experts' GEMMs
  LoraGemm,      // lora_shrink, lora_expand
  ResidualNorm,  // input_layernorm, post_attention_layernorm: absorb a residual add when fused
  HeadDecode,    // attn_decode over per-head K and V (MHA, GQA, MQA): not MLA's latent decode
};

// Where in a layer an operator runs, for a schedule that interleaves two
// micro-batches' stages (two-batch overlap, serve/two_batch_overlap.hpp): the
// attention's preparation (input norm, projections, RoPE, KV write) and core
// (the attention kernel through the output projection, the norm and
// all-reduce after it; a recurrent mixer is all core), the MoE layer's gate
// (router, top-k, permute), routed and shared experts, and its EP dispatch
// and combine. Set where the operator is built; Other: once per step
// (embedding, head, sampling), a dense MLP, the residual adds.
enum class OpStage : uint8_t {
  Other,
  AttentionPrep,
  AttentionCore,
  MoeGate,
  RoutedExperts,
  SharedExperts,
  MoeDispatch,
  MoeCombine,
};

enum class CollectiveKind { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv, Broadcast };
std::string collective_name(CollectiveKind k);

// One sequence's share of a step: `new_tokens` processed now on top of
// `cached_tokens` already in the KV cache (decode: new_tokens == 1).
struct SeqChunk {
  int64_t new_tokens = 0;
  int64_t cached_tokens = 0;
};

struct BatchShape {
  std::vector<SeqChunk> seqs;
  int64_t total_new_tokens() const;
};

enum class AttentionImpl { Flash, Standard };

// Which memory-bound chains the software stack launches as one fused kernel
// (presets/stacks/*.json "fused_kernels"). Serving engines (vLLM, SGLang,
// TensorRT-LLM) run RoPE in place on q and k (rotary_embedding), the gated
// activation as silu_and_mul, and fold each residual add into the RMSNorm that
// follows it (fused_add_rms_norm); eager PyTorch (training) runs the unfused
// chains. A fused kernel streams its bytes once: its operator is marked
// `single_pass`, and the residual add it absorbs leaves the operator list.
struct KernelFusion {
  bool rotary_embedding = false;
  bool silu_and_mul = false;
  bool fused_add_rms_norm = false;
  bool operator==(const KernelFusion& o) const {
    return rotary_embedding == o.rotary_embedding && silu_and_mul == o.silu_and_mul &&
           fused_add_rms_norm == o.fused_add_rms_norm;
  }
};

struct BatchSummary;

struct StepOptions {
  AttentionImpl attention = AttentionImpl::Flash;
  // Training steps compute logits and loss for every token and keep no KV cache.
  bool training = false;
  // Where the experts are and how tokens reach them (inference MoE layers).
  MoeRouting moe;
  // The step runs a multi-token-prediction module (model/mtp.hpp): the
  // embedding and the previous hidden state are normed and projected from 2h
  // to h (eh_proj, replicated on every rank) before its decoder layer.
  bool mtp_module = false;
  KernelFusion fusion;
  // The model's layer_groups(), computed once by a caller that builds a step
  // per simulated step (they do not change within a run); null: computed here.
  const std::vector<LayerGroup>* layer_groups = nullptr;
  // The caller builds into the same StepOperators, usually with the same
  // model, precision, layout and options, only the batch changing (the serving
  // simulator, one list per cost setup), and changes none of the operators a
  // build wrote (appending after them is allowed): a batch with the same
  // BatchSummary and StepBuildInputs as the last one rebuilds only the
  // attention cores (other inputs: a whole build). Not for
  // models whose other operators read more of the batch (MLA's latent path,
  // DSA's indexer, MoE routing, an MTP module) nor for training: those are
  // always built whole.
  bool reuse_unchanged = false;
  // The batch's summary (summarize_batch) when the caller has made it: the
  // builder then makes no pass of its own over the sequences for it (a
  // simulator's step made three, each over every sequence). Null: made here.
  const BatchSummary* summary = nullptr;
};

struct Precision {
  Dtype weights = Dtype::BF16;
  Dtype activations = Dtype::BF16;
  Dtype kv_cache = Dtype::BF16;
  int weight_group_size = 128;  // int4/int8 weight-only quantization groups
  // Asymmetric groups store a zero point beside each scale; a symmetric
  // checkpoint (compressed-tensors "symmetric": true, AWQ "zero_point": false)
  // stores the scale only.
  bool weight_zero_point = true;
  // The checkpoint keeps attention (and MLA / linear-attention / SSM mixer)
  // weights in the activation dtype and quantizes the MLPs and experts only
  // (gpt-oss MXFP4).
  bool mixer_weights_unquantized = false;
  // With mixer_weights_unquantized: the attention's output projection is stored
  // quantized all the same (CheckpointQuant::attention_out_quantized).
  bool mixer_out_quantized = false;
  // The checkpoint keeps dense MLPs and shared experts in the activation dtype
  // and quantizes the routed experts only (Kimi-K2.5's int4 ignore list).
  bool dense_ffn_weights_unquantized = false;
  // The GPU has block-scaled FP4 tensor cores: fp4 weights run W4A4 at the
  // fp4 peak; without them they are dequantized to the activation dtype.
  bool fp4_tensor_cores = false;
  // FP8 weights and activations with 1x128 / 128x128 block scales
  // (DeepSeek-V3/R1's and Qwen3's native FP8 checkpoints), run by DeepGEMM-
  // style kernels (scenario precision.fp8_scaling "block"); false: per-tensor
  // or per-channel scales (cuBLASLt / CUTLASS FP8 GEMMs).
  bool fp8_block_scaled = false;
  // What the checkpoint's config said, when the precision came from it.
  std::string from_checkpoint;
};

struct ParallelLayout {
  int tp = 1;
  int pp = 1;
  // Expert placement (inference): the routed experts' `expert_slots` copies
  // (num_experts plus EPLB's redundant ones; 0: num_experts) are spread over
  // max(tp, ep) GPUs. ep <= tp splits each expert over tp/ep ranks; ep > tp is
  // wide expert parallelism across attention data-parallel replicas.
  int ep = 1;
  int expert_slots = 0;
};

struct Operator {
  std::string name;       // e.g. "attn_pre_proj", matching the measured-data columns
  OpFamily family = OpFamily::Elementwise;
  OpRole role = OpRole::Other;
  OpStage stage = OpStage::Other;
  double count = 1;       // invocations per step (layers, experts hit, ...)
  double flops = 0;       // per invocation
  double bytes = 0;       // per invocation, HBM traffic
  double dequant_ops = 0; // per invocation: scalar ALU work of weight-only dequantization
  Dtype compute_dtype = Dtype::BF16;
  // A GEMM's stored weight format: compute_dtype, or the format a weight-only
  // kernel dequantizes in its main loop (MXFP4 experts on a GPU without FP4
  // tensor cores), whose grouped kernels stream at their own level.
  Dtype weight_dtype = Dtype::BF16;
  // GEMM shape (C[m,n] = A[m,k] B[k,n]).
  int64_t m = 0, n = 0, k = 0;
  // A grouped GEMM (one launch over the MoE experts hit) runs `groups`
  // problems of m×n×k (m: rows per problem); flops and bytes cover them all,
  // and its tiles share the waves. 1: a plain GEMM. May be fractional (an
  // expected number of experts).
  double groups = 1;
  // The rows each group gets, when they vary around m as routing draws them:
  // Binomial(group_row_trials, group_row_p) given at least one row (the
  // routing model's count per resident expert, model/moe_routing.hpp). The
  // tile choice then pads each group's draw, not the mean, to its tiles.
  // 0 trials: every group has m rows.
  int64_t group_row_trials = 0;
  double group_row_p = 0;
  double weight_bytes = 0;  // per invocation: the weight bytes it reads from HBM
  // Per invocation: of `bytes`, those the kernel writes after its main loop,
  // not overlapped with it (a block-scaled FP8 GEMM's BF16 output tiles,
  // mark_block_scaled_fp8_output). 0: every byte overlaps the math.
  double serial_bytes = 0;
  // One fused kernel that streams its bytes once (KernelFusion): priced at
  // the GPU's streaming (copy-class) efficiency, not its eager chain's.
  bool single_pass = false;
  // Per invocation: programs a single-pass kernel launches, one per token row
  // (RoPE and RMSNorm, as vLLM's kernels and the measured ones launch them). 0: not counted.
  int64_t rows = 0;
  // Attention shape (per GPU).
  int64_t q_tokens = 0, kv_tokens = 0;
  int64_t seqs = 0;  // sequences in the attention call (kv_tokens / seqs = mean context)
  int heads = 0, kv_heads = 0;
  int64_t qk_dim = 0, v_dim = 0;
  bool causal = true;
  AttentionImpl attention_impl = AttentionImpl::Flash;
  bool backward = false;  // a backward-pass kernel (training)
  // Collective.
  CollectiveKind collective = CollectiveKind::AllReduce;
  int group_size = 1;
  double message_bytes = 0;
};

// What a step's builder reads of its batch besides each sequence's cached
// length in the attention cores (model/step_builder.hpp): the new tokens, the
// sequences with new tokens (the head's rows), those decoding (one new token
// after a cached past) and those prefilling (the recurrent mixers' phases).
struct BatchSummary {
  int64_t tokens = 0, sequences = 0, decodes = 0, prefills = 0;
  // The decodes' cached-plus-new tokens, summed: what the attention cores
  // read of a batch of decodes only (they make no pass over it then). Not
  // compared by ==: a core-only rebuild is for summaries whose other
  // operators are the same, whatever the cores read.
  int64_t decode_keys = 0;
  // Counts one more sequence (summarize_batch is these over the batch).
  void add(const SeqChunk& s) {
    tokens += s.new_tokens;
    if (s.new_tokens <= 0) return;
    ++sequences;
    if (s.new_tokens == 1 && s.cached_tokens > 0) {
      ++decodes;
      decode_keys += s.cached_tokens + 1;
    } else {
      ++prefills;
    }
  }
  // add() of `n` chunks of `new_tokens` (> 0) new tokens each, `n_cached` of
  // them with cached tokens and `keys` those ones' cached tokens plus one,
  // summed: the same counts at once (a scheduler's walk counts its alike
  // decodes in registers and adds them here after it).
  void add_alike(int64_t new_tokens, int64_t n, int64_t n_cached, int64_t keys) {
    tokens += new_tokens * n;
    sequences += n;
    if (new_tokens == 1) {
      decodes += n_cached;
      decode_keys += keys;
      prefills += n - n_cached;
    } else {
      prefills += n;
    }
  }
  bool operator==(const BatchSummary& o) const {
    return tokens == o.tokens && sequences == o.sequences && decodes == o.decodes && prefills == o.prefills;
  }
};
BatchSummary summarize_batch(const BatchShape& batch);

// One attention core of the last build (its first operator's position and
// what it was built with), so that it can be rebuilt on its own.
struct AttentionCoreCall {
  size_t first_op = 0;
  double layers = 0;
  int64_t cap_tokens = 0, topk = 0;
  int heads = 0, kv_heads = 0;
  int64_t qk = 0, v = 0;
  bool k_eq_v = false;
};

// What a build was made from besides its batch: a rebuild of the cores alone
// is the whole build only when every one of them is as it was. The model and
// precision are the caller's (by address: a run keeps them); the options and
// the layout by value (a caller may make them anew for each step). An option
// or layout that changes any operator (the attention kernel, a fusion, the
// layer groups, tp/pp/ep) then forces a whole build, even with the same
// batch summary.
struct StepBuildInputs {
  const ModelArch* model = nullptr;
  const Precision* precision = nullptr;
  const std::vector<LayerGroup>* layer_groups = nullptr;
  AttentionImpl attention = AttentionImpl::Flash;
  KernelFusion fusion;
  int tp = 1, pp = 1, ep = 1, expert_slots = 0;
  bool operator==(const StepBuildInputs& o) const {
    return model == o.model && precision == o.precision && layer_groups == o.layer_groups && attention == o.attention &&
           fusion == o.fusion && tp == o.tp && pp == o.pp && ep == o.ep && expert_slots == o.expert_slots;
  }
};

// The last build into a StepOperators, for StepOptions::reuse_unchanged: when
// the next batch has the same summary and inputs, only the attention cores (the operators
// that read the cached lengths) are rebuilt, in place; every other operator
// would be built again exactly as it is.
struct StepReuse {
  bool valid = false;
  StepBuildInputs inputs;
  BatchSummary batch;
  size_t ops = 0;  // operators the build wrote (a caller may append more after them)
  std::vector<AttentionCoreCall> cores;
  // Every build, into any list, has its own number (`build`); `cores_only`:
  // the last build into this list rebuilt only the cores over build `over`,
  // and `rebuilt` marks (1) the operators it wrote: the others are those of
  // build `over`, bit for bit (a pricing memo that priced build `over` takes
  // their costs without comparing them).
  uint64_t build = 0, over = 0;
  bool cores_only = false;
  std::vector<uint8_t> rebuilt;
};

struct StepOperators {
  std::vector<Operator> ops;
  StepReuse reuse{};  // kept by builds with StepOptions::reuse_unchanged
  // Sequences the step computes (build_forward_step counts the batch's), of
  // which `padding_sequences` are dummies a CUDA graph's captured batch size
  // adds (perf/graph_buckets.hpp): they cost GPU time, no host work.
  int64_t sequences = 0;
  int64_t padding_sequences = 0;
};

// One GEMM C[m,n] = A[m,k]·B[k,n] with A and C in the activation dtype and B
// (the weights) stored at `weight_bytes` per element. Weight-only integer
// formats also dequantize every weight once per call on the CUDA cores.
Operator make_gemm_operator(std::string name, double count, int64_t m, int64_t n, int64_t k,
                            double act_bytes, double weight_bytes, Dtype compute_dtype, bool bias = false,
                            double dequant_ops_per_weight = 0);
// Whether two operator names are equal, compared inline eight bytes at a time:
// string's == and assign call out of line into a byte-wise memcmp or memmove
// in wasm (musl's), a few percent of a wasm serving run where every step's
// ~16 names are compared (the pricing memo) and rewritten (the step builder).
inline bool same_operator_name(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  size_t i = 0;
  for (; i + sizeof(uint64_t) <= n; i += sizeof(uint64_t)) {
    uint64_t u = 0, v = 0;
    std::memcpy(&u, a.data() + i, sizeof u);
    std::memcpy(&v, b.data() + i, sizeof v);
    if (u != v) return false;
  }
  for (; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}
// `op`'s name set to `name`, in its own storage (no allocation when it fits).
void set_operator_name(Operator& op, std::string_view name);
// The same written into `op`, a default Operator (one just emplaced in a
// step's list, or a reused slot): a builder fills its list in place, no
// operator copied into it.
void set_gemm_operator(Operator& op, std::string_view name, double count, int64_t m, int64_t n, int64_t k,
                       double act_bytes, double weight_bytes, Dtype compute_dtype, bool bias = false,
                       double dequant_ops_per_weight = 0);

// `op`, a GEMM of one expert's rows (m = the tokens per expert, rounded up),
// made the grouped GEMM that serving stacks launch over the MoE experts hit:
// `experts_hit` problems, `assignments` (token, expert) rows in all. Only the
// hit experts' weights are read and only the routed rows do FLOPs; the tile
// choice pads each problem's rows to its own tiles: Binomial(row_trials,
// row_p) rows per hit expert (Operator::group_row_trials), or m each when
// row_trials is 0. One definition for the step builder and for pricing
// measured grouped GEMMs (report-accuracy).
void make_grouped_expert_gemm(Operator& op, double experts_hit, double assignments, double act_bytes,
                              double weight_bytes_per_element, bool bias, int64_t row_trials = 0, double row_p = 0);
// The routed-expert grouped GEMM of one projection (n x k per expert) over
// the experts `load` hits, each problem of ceil(tokens_per_expert) rows drawn
// as `load` draws them: weights stored in `weight_dtype` (a weight-only format
// the kernel dequantizes into `compute_dtype` in its main loop where the two
// differ). What pricing a measured grouped GEMM builds; the step builder makes
// the same through its reused slots (StepBuilder::add_grouped_expert_gemm).
Operator make_routed_expert_gemm(std::string_view name, const MoeLoad& load, int64_t n, int64_t k, double act_bytes,
                                 Dtype compute_dtype, Dtype weight_dtype);

// A GEMM with FP8 inputs and block scales as DeepGEMM runs it: the math
// warpgroups promote the FP8 partial sums on the CUDA cores every 128 K
// elements and, after the main loop, convert and store the BF16 output tile;
// that store is not overlapped with the main loop. DeepGEMM's H800 table
// (presets/calibrations/data/published_moe_kernels.csv) shows it: its short-K,
// wide-output GEMMs (K = 512-2048 at 4,096 tokens) take the math time plus the
// output write (tests/unit/test_moe_kernel_checks.cpp). `output_elements` are
// the elements the GEMM writes, `counted_bytes_per_element` what op.bytes
// already charges for each; they are charged as BF16 and marked serial.
void mark_block_scaled_fp8_output(Operator& op, double output_elements, double counted_bytes_per_element);

// A memory-bound kernel moving `bytes` and doing `flops` of scalar work.
Operator make_memory_operator(std::string name, OpFamily family, double count, double bytes, double flops,
                              Dtype dtype);
void set_memory_operator(Operator& op, std::string_view name, OpFamily family, double count, double bytes, double flops,
                         Dtype dtype);  // in place (set_gemm_operator)

// A collective over `group` ranks on a message of `message_bytes`.
Operator make_collective_operator(std::string name, CollectiveKind kind, double count, double message_bytes,
                                  int group, Dtype dtype);
void set_collective_operator(Operator& op, std::string_view name, CollectiveKind kind, double count,
                             double message_bytes, int group, Dtype dtype);  // in place (set_gemm_operator)

// ALU operations to dequantize one int4/int8 weight: unpack (shift, mask),
// convert to float, multiply-add scale and zero point.
inline constexpr double kDequantOpsPerWeight = 4.0;

// Whether a sequence bringing `new_tokens` onto `cached_tokens` runs MLA in the
// latent space as a decode does (a decode, or a speculative verify of up to 16
// tokens); the same bound decides whether DSA's indexer scores it as a decode.
bool mla_latent_path(int64_t new_tokens, int64_t cached_tokens);

// Per-GPU shard sizes under a tensor-parallel layout.
struct ShardDims {
  int heads = 0;        // query heads per GPU
  int kv_heads = 0;     // KV heads per GPU (replicated when tp > num_kv_heads)
  int64_t intermediate = 0;
  int64_t expert_intermediate = 0;
  int64_t vocab = 0;
};
ShardDims shard_dims(const ModelArch& m, int tp);
// KV heads one GPU keeps of `kv_heads`: a share, or one replica when tp exceeds them.
int kv_heads_per_gpu(int kv_heads, int tp);

// Storage bytes per quantized weight under `p`: the dtype with its group
// scales (and zero points) for the integer weight-only formats. The one rule
// the step's GEMMs and the memory accounting share.
double weight_storage_bytes(const Precision& p);
// The layout of a checkpoint's own quantized weights (which modules stay
// unquantized, zero points, group size) onto `p`, whose weights dtype is the
// checkpoint's: one place for every reader of a checkpoint's precision.
void apply_checkpoint_layout(const CheckpointQuant& q, Precision& p);

// KV-cache bytes one token occupies on one GPU, over `layers` layers.
double kv_bytes_per_token_per_gpu(const ModelArch& m, const Precision& p, int tp, int layers);

// The forward operators of one step over the whole model (all pipeline stages
// in sequence) for one GPU's tensor-parallel shard.
StepOperators build_forward_step(const ModelArch& m, const Precision& p, const ParallelLayout& layout,
                                 const BatchShape& batch, const StepOptions& options);
// The same into `out` (every field overwritten): a caller that builds a step
// per simulated step keeps the list's storage instead of allocating it each time.
void build_forward_step_into(const ModelArch& m, const Precision& p, const ParallelLayout& layout,
                             const BatchShape& batch, const StepOptions& options, StepOperators& out);

// Weight bytes a step reads from HBM (every operator's weight_bytes × count):
// for an MoE, only the experts the batch hits.
double weight_bytes_read(const StepOperators& step);

// The backward operators matching a training forward step: for every GEMM a
// data-gradient and a weight-gradient GEMM, attention backward (2.5x the
// forward FLOPs, as FlashAttention counts them), the gradient of every
// memory-bound kernel, and the conjugate collective of every forward one.
StepOperators build_backward_step(const StepOperators& forward, const Precision& p);

}  // namespace sightline
