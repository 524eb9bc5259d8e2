#pragma once
// The "training" section of a scenario: the parallelism plan, the batch, the
// pipeline schedule, the memory-saving techniques (recomputation, ZeRO/FSDP,
// CPU offload, LoRA/QLoRA, FP8) and what to report (key metrics, variants to
// compare, a scaling curve), typed. Read and written by read_training.cpp; every
// key is validated with a located error.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "core/dtype.hpp"
#include "model/operators.hpp"

namespace sightline {

struct Scenario;

enum class PipelineSchedule { GPipe, OneFOneB, Interleaved };
enum class RecomputeMode { None, Selective, SelectiveOp, Full };
enum class Fp8Gemms { None, Mlp, Layers, All };
// How Transformer Engine scales the FP8 tensors (transformer_engine/common/recipe):
// delayed scaling quantizes with a scale from the amax history and reduces the
// amaxes over the data x tensor-parallel group once per forward and backward;
// current scaling scans each tensor for its amax right before casting it (one
// more read of the input) and keeps no history to reduce.
enum class Fp8Recipe { Delayed, Current };
// How the stack runs the memory-bound layer operators (RMSNorm, RoPE, the
// gated activation): one fused kernel each (Transformer Engine, Liger,
// torch.compile, serving engines), or as eager PyTorch runs the reference
// Llama code (several kernels, fp32 intermediates).
enum class ElementwiseKernels { Fused, Eager };
enum class OptimizerKind { AdamW, SgdMomentum, Adafactor };

std::string schedule_name(PipelineSchedule s);
std::string recompute_name(RecomputeMode m);
std::string fp8_name(Fp8Gemms f);
std::string optimizer_name(OptimizerKind k);

// Axes of the device mesh, innermost (fastest varying rank) first.
struct TrainParallelism {
  int dp = 1;  // data-parallel replicas (the ZeRO/FSDP sharding group is dp × cp)
  int tp = 1;  // tensor parallel, inside a node
  int pp = 1;  // pipeline stages
  int cp = 1;  // context parallel (ring attention over the sequence)
  int ep = 1;  // expert parallel: a subgroup of the data-parallel ranks (MoE only)
  bool sequence_parallel = false;  // Megatron SP: norms/residuals sharded over tp, AG/RS instead of AR
  int virtual_stages = 1;          // model chunks per pipeline rank (interleaved 1F1B)
  int zero_stage = 0;              // 0 none, 1 optimizer states, 2 + gradients, 3 + parameters (FSDP)
  std::vector<std::string> placement = {"tp", "cp", "dp", "pp"};  // innermost first
  // Explicit transformer layers per model chunk j = c·pp + d (pp × virtual_stages
  // entries, e.g. fewer on the first and last stages, which also hold the embedding
  // and the head); empty: an even split.
  std::vector<int> stage_layers;
  int world() const { return dp * tp * pp * cp; }
};

// Layers of each model chunk (pp × virtual_stages entries): stage_layers when
// given, else num_layers split evenly.
std::vector<int> chunk_layer_counts(const TrainParallelism& p, int num_layers);

struct TrainBatch {
  int64_t seq_len = 0;
  int64_t micro_batch_size = 1;        // sequences per micro-batch per model replica
  int64_t gradient_accumulation = 1;   // micro-batches per step per data-parallel replica
  int64_t global_batch_size = 0;       // sequences per optimizer step (all replicas)
};

struct RecomputeSpec {
  RecomputeMode mode = RecomputeMode::None;
  // selective: which parts are recomputed in backward (Megatron-Core --recompute-modules).
  bool core_attn = true;   // attention scores/softmax (free with FlashAttention, which never stores them)
  bool layernorm = false;  // norm outputs (inputs of the QKV and MLP-up GEMMs)
  bool mlp_act = false;    // activation-function output (input of the MLP-down GEMM)
  int every_n_layers = 1;  // full: every n-th layer is checkpointed (1 = all layers)
};

struct OptimizerSpec {
  OptimizerKind kind = OptimizerKind::AdamW;
  bool master_weights = true;        // fp32 master copy of the trainable weights
  Dtype states_dtype = Dtype::FP32;  // moments
  Dtype grad_dtype = Dtype::BF16;    // gradient buffers (fp32: Megatron main_grad)
  bool cpu_offload = false;          // optimizer states + master weights live in host memory, update on CPU
  double host_memory_bandwidth_GBps = 200;  // per node, for the CPU update
};

struct LoraSpec {
  bool enabled = false;
  int rank = 0;
  double alpha = 0;
  std::vector<std::string> targets;  // subset of q, k, v, o, up, gate, down
  Dtype base_dtype = Dtype::BF16;    // frozen base weights (int4/int8: QLoRA)
  int quant_group_size = 64;
  bool has_target(const std::string& t) const;
};

struct OverlapSpec {
  bool dp = true;             // DP gradient buckets overlap the last backward
  bool fsdp_prefetch = true;  // FSDP all-gathers prefetched one layer ahead, reduce-scatters overlap backward
  bool tp = false;            // async TP: TP collectives overlap the adjacent GEMMs
  bool cp = true;             // ring-attention exchange overlaps attention compute
  bool param_gather = false;  // ZeRO-1/2 parameter all-gather overlaps the next step's forward
  double bucket_MiB = 25;     // DP gradient bucket size
};

// Everything that describes one training configuration (a scenario, or one
// of its compare variants / scaling points).
struct TrainConfig {
  TrainParallelism parallelism;
  TrainBatch batch;
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  RecomputeSpec recompute;
  Fp8Gemms fp8 = Fp8Gemms::None;
  Fp8Recipe fp8_recipe = Fp8Recipe::Delayed;
  OptimizerSpec optimizer;
  LoraSpec lora;
  AttentionImpl attention = AttentionImpl::Flash;
  ElementwiseKernels elementwise = ElementwiseKernels::Fused;
  double moe_load_imbalance = 1.0;  // tokens on the busiest expert rank / mean
  OverlapSpec overlap;
  double runtime_overhead_GiB = 2.0;  // CUDA context, library workspaces, NCCL buffers
  double tokens_to_train = 0;  // for time / GPU-hours / energy / cost (cost uses cost_model.gpu_hour_usd)
  double pue = 1.0;            // facility overhead on GPU energy
};

struct TrainVariant {
  std::string label;
  std::shared_ptr<const Scenario> scenario;  // a full scenario: its own hardware and training config
};

struct ScalingSpec {
  std::string axis = "dp";
  std::string mode = "strong";  // strong: global batch fixed; weak: micro-batches per replica fixed
  std::vector<int> values;
  std::vector<std::shared_ptr<const Scenario>> points;
};

struct TrainingSpec {
  TrainConfig config;
  std::vector<std::string> key_metrics;
  std::vector<TrainVariant> compare;
  ScalingSpec scaling;  // empty values: no scaling curve
};

// Reads and validates the section; `s` has model, hardware and precision already.
TrainingSpec read_training(const json& v, const std::string& path, const Scenario& s);
json training_to_json(const TrainingSpec& t);
json train_config_to_json(const TrainConfig& c);

}  // namespace sightline
