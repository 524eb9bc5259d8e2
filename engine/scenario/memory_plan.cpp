#include "scenario/memory_plan.hpp"

#include <algorithm>
#include <cmath>

#include "mem/inference_memory.hpp"
#include "model/kv_footprint.hpp"
#include "model/eagle_head.hpp"
#include "model/mtp.hpp"
#include "scenario/simulation_spec.hpp"

namespace sightline::serve {

double lora_adapter_bytes_per_gpu(const ModelArch& m, const Precision& p, const ParallelLayout& layout, int rank,
                                  bool all_linear) {
  const ShardDims d = shard_dims(m, layout.tp);
  const double r = rank;
  const double h = static_cast<double>(m.hidden_size);
  // Column-parallel layers keep A whole and shard B; row-parallel layers the reverse.
  const double qkv_out = static_cast<double>(d.heads + 2 * d.kv_heads) * static_cast<double>(m.head_dim);
  const double o_in = static_cast<double>(d.heads) * static_cast<double>(m.v_head_dim());
  double per_layer = r * h + r * qkv_out + r * o_in + r * h;
  if (all_linear) {
    const int64_t inter = m.is_moe() ? d.expert_intermediate : d.intermediate;
    const double up = (m.gated_mlp ? 2.0 : 1.0) * static_cast<double>(inter);
    per_layer += r * h + r * up + r * static_cast<double>(inter) + r * h;
  }
  // Layer kinds with a head shape of their own adapt their own q, k, v and o widths.
  double shaped_delta = 0;
  for (const LayerGroup& g : m.layer_groups()) {
    if (!g.kind.shape.given()) continue;
    const AttentionShape& s = g.kind.shape;
    const double heads = s.heads / layout.tp, kv_heads = kv_heads_per_gpu(s.kv_heads, layout.tp);
    const double own = heads * static_cast<double>(s.qk_head_dim) + kv_heads * static_cast<double>(s.qk_head_dim + s.v_head_dim) +
                       heads * static_cast<double>(s.v_head_dim);
    shaped_delta += g.count * r * (own - qkv_out - o_in);
  }
  // Layers with a dense MLP width of their own (Nemotron-NAS) adapt their own up, gate and down.
  if (all_linear && !m.is_moe())
    for (const LayerGroup& g : m.layer_groups()) {
      if (g.kind.ffn_intermediate <= 0) continue;
      const double own = static_cast<double>((g.kind.ffn_intermediate + layout.tp - 1) / layout.tp);
      shaped_delta += g.count * r * ((m.gated_mlp ? 2.0 : 1.0) + 1.0) * (own - static_cast<double>(d.intermediate));
    }
  const double layers = static_cast<double>(m.num_layers) / layout.pp;
  return (per_layer * layers + shaped_delta / layout.pp) * dtype_bytes(p.activations == Dtype::FP8 ? Dtype::BF16 : p.activations);
}

int64_t max_step_tokens(const SimulationSpec& spec) {
  int64_t tokens = spec.scheduler.max_num_batched_tokens;
  if (spec.speculative.method != SpecMethod::None)
    tokens = std::max<int64_t>(tokens, spec.scheduler.max_num_seqs * (spec.speculative.k + 1));
  return std::max<int64_t>(tokens, 1);
}

ReplicaMemoryPlan plan_replica_memory(const ModelArch& primary, const Precision& p, const ParallelLayout& layout,
                                      const GpuSpec& gpu, double runtime_overhead_GiB, double sampler_bytes_per_logit,
                                      const SimulationSpec& spec) {
  ReplicaMemoryPlan plan;
  plan.capacity_GiB = gpu.memory_GiB;
  plan.usable_GiB = gpu.memory_GiB * spec.kv.gpu_memory_utilization;
  plan.runtime_GiB = runtime_overhead_GiB;
  std::vector<const ModelArch*> models = {&primary};
  if (spec.colocated.enabled && spec.colocated.model) models.push_back(&*spec.colocated.model);

  const int64_t tokens = max_step_tokens(spec);
  const int64_t rows = std::min<int64_t>(spec.scheduler.max_num_seqs, tokens);
  for (const ModelArch* m : models) {
    plan.weights_GiB += weight_bytes_per_gpu(*m, p, layout) / kBytesPerGiB;
    // The models run one step at a time: the largest activation peak is reserved once.
    plan.activations_GiB = std::max(
        plan.activations_GiB, activation_peak_bytes(*m, p, layout.tp, tokens, rows, sampler_bytes_per_logit) / kBytesPerGiB);
  }
  double draft_kv_per_token = 0;
  if (spec.speculative.method == SpecMethod::Draft && spec.speculative.draft_model) {
    const ModelArch& d = *spec.speculative.draft_model;
    const ParallelLayout dl{spec.speculative.draft_tp, 1};
    plan.draft_weights_GiB = weight_bytes_per_gpu(d, p, dl) / kBytesPerGiB;
    draft_kv_per_token = kv_bytes_per_token_per_gpu(d, p, dl.tp, d.num_layers);
  } else if (spec.speculative.method == SpecMethod::Mtp) {
    // k drafts run the shipped MTP modules in turn (reused when k exceeds
    // them): min(k, mtp_layers) modules are loaded, each with its own KV.
    const int modules = std::min(spec.speculative.k, primary.mtp_layers);
    plan.draft_weights_GiB = mtp_weight_bytes_per_gpu(primary, p, layout.tp, modules) / kBytesPerGiB;
    draft_kv_per_token = modules * kv_bytes_per_token_per_gpu(mtp_draft_arch(primary), p, layout.tp, 1);
  } else if (spec.speculative.method == SpecMethod::Eagle3) {
    // One head, its own one-layer KV, on the target's TP group.
    const ModelArch head = eagle3_head_arch(primary);
    plan.draft_weights_GiB = weight_bytes_per_gpu(head, p, ParallelLayout{layout.tp, 1}) / kBytesPerGiB;
    draft_kv_per_token = kv_bytes_per_token_per_gpu(head, p, layout.tp, 1);
  }
  if (spec.lora.enabled) {
    plan.lora_GiB = lora_adapter_bytes_per_gpu(primary, p, layout, spec.lora.rank,
                                               spec.lora.targets == LoraTargets::AllLinear) *
                    spec.lora.max_adapters_per_batch / kBytesPerGiB;
  }
  const double kv_budget = plan.usable_GiB - plan.weights_GiB - plan.draft_weights_GiB - plan.lora_GiB -
                           plan.activations_GiB - plan.runtime_GiB;
  for (size_t i = 0; i < models.size(); ++i) {
    EngineMemory e;
    const ModelArch& m = *models[i];
    // Paged blocks hold what grows with the context (full-attention layers)
    // and, from the same pool, the pages of windowed and chunked layers, at
    // most their cap (plus the page being filled) per sequence: pages that
    // slide out of the window are freed, as hybrid-aware engines page them
    // (vLLM's hybrid KV cache manager, SGLang's SWA pool). Linear-attention /
    // SSM layers keep a fixed state, reserved per sequence slot (max_num_seqs).
    const KvFootprint fp =
        kv_footprint_per_gpu(m, p, layout.tp, static_cast<double>(m.num_layers / layout.pp) / m.num_layers);
    const bool grows = fp.unbounded_bytes_per_token > 0;
    const double per_seq_fixed = fp.state_bytes_per_seq;
    if (grows) e.windowed = fp.capped;
    e.kv_bytes_per_token = (grows ? fp.unbounded_bytes_per_token : fp.bytes_per_token_uncapped()) +
                           (i == 0 ? draft_kv_per_token : 0.0);
    e.fixed_GiB = static_cast<double>(spec.scheduler.max_num_seqs) * per_seq_fixed / kBytesPerGiB;
    double share = 1.0;
    if (models.size() > 1) share = i == 0 ? 1.0 - spec.colocated.memory_fraction : spec.colocated.memory_fraction;
    e.kv_budget_GiB = std::max(0.0, kv_budget * share - e.fixed_GiB);
    const double block_bytes = e.kv_bytes_per_token * static_cast<double>(spec.kv.block_size);
    e.blocks = kv_budget > 0 && block_bytes > 0
                   ? static_cast<int64_t>(std::floor(e.kv_budget_GiB * kBytesPerGiB / block_bytes))
                   : 0;
    plan.kv_cache_GiB += static_cast<double>(e.blocks) * block_bytes / kBytesPerGiB + std::min(e.fixed_GiB, kv_budget * share);
    plan.kv_fixed_GiB += e.fixed_GiB;
    plan.engines.push_back(e);
  }
  return plan;
}

std::vector<WindowedKv> windowed_pages(double kv_bytes_per_token, const std::vector<CappedKv>& windowed) {
  std::vector<WindowedKv> out;
  if (kv_bytes_per_token > 0)
    for (const CappedKv& c : windowed) out.push_back({c.cap_tokens, c.bytes_per_token / kv_bytes_per_token});
  return out;
}

int64_t kv_blocks_for(const std::vector<WindowedKv>& windowed, int64_t block_size, int64_t tokens) {
  const int64_t full = (tokens + block_size - 1) / block_size;
  int64_t pages = 0;
  for (const WindowedKv& w : windowed) {
    const int64_t own = (std::min(tokens, w.cap_tokens + block_size) + block_size - 1) / block_size;
    // 1e-9: a ratio such as 3.0 computed as 3.0000000000000004 must not take a block more.
    pages += static_cast<int64_t>(std::ceil(w.blocks_per_block * static_cast<double>(own) - 1e-9));
  }
  return full + pages;
}

json ReplicaMemoryPlan::to_json() const {
  json blocks = json::array();
  for (const auto& e : engines) blocks.push_back(e.blocks);
  json j = {{"capacity_GiB", capacity_GiB},
          {"usable_GiB", usable_GiB},
          {"weights_GiB", weights_GiB},
          {"draft_weights_GiB", draft_weights_GiB},
          {"lora_adapters_GiB", lora_GiB},
          {"activations_GiB", activations_GiB},
          {"runtime_overhead_GiB", runtime_GiB},
          {"kv_cache_GiB", kv_cache_GiB},
          {"unused_GiB", capacity_GiB - weights_GiB - draft_weights_GiB - lora_GiB - activations_GiB - runtime_GiB -
                             kv_cache_GiB},
          {"kv_blocks", blocks}};
  // Only models with linear-attention or SSM layers reserve per-sequence state.
  if (kv_fixed_GiB > 0) j["kv_fixed_per_sequence_GiB"] = kv_fixed_GiB;
  return j;
}

}  // namespace sightline::serve
