// The serving simulator's step pricing: a batch's operators (with expert
// parallelism's all-to-alls and batched LoRA's GEMMs) priced by the pool's
// cost model, plus what a step adds around its passes.
#include "serve/step_pricer.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "mem/inference_memory.hpp"
#include "model/eagle_head.hpp"
#include "model/mtp.hpp"
#include "serve/moe_step.hpp"
#include "serve/two_batch_overlap.hpp"

namespace sightline::serve {

StepPricer::StepPricer(const Scenario& scenario, const std::vector<SimRequest>& reqs)
    : s_(scenario), spec_(*scenario.serving->simulation), reqs_(reqs) {
  spec_k_ = spec_.speculative.method != SpecMethod::None ? spec_.speculative.k : 0;
}

int StepPricer::add_cost(const PoolSpec& pool, const GpuSpec& gpu, const ModelArch& model, ParallelLayout layout,
                         bool draft) {
  CostEntry c;
  c.scenario = std::make_unique<Scenario>(s_);
  c.scenario->hardware.gpu = gpu;
  if (pool.intra_node) c.scenario->hardware.intra_node = pool.intra_node;
  c.scenario->model = model;
  c.scenario->serving->parallelism = layout;
  c.setup = make_cost_setup(c.scenario->cost_model, c.scenario->hardware);
  c.model = &c.scenario->model;
  c.layer_groups = c.model->layer_groups();
  c.layout = layout;
  c.draft = draft;
  costs_.push_back(std::move(c));
  return static_cast<int>(costs_.size()) - 1;
}

PoolCosts StepPricer::add_pool(const PoolSpec& p, const GpuSpec& gpu, bool first) {
  PoolCosts out;
  out.models.push_back(add_cost(p, gpu, s_.model, p.layout, false));
  if (spec_.colocated.enabled) out.models.push_back(add_cost(p, gpu, *spec_.colocated.model, p.layout, false));
  if (spec_.speculative.method == SpecMethod::Draft)
    out.draft = add_cost(p, gpu, *spec_.speculative.draft_model, ParallelLayout{spec_.speculative.draft_tp, 1}, true);
  else if (spec_.speculative.method == SpecMethod::Mtp)
    // The MTP module runs on the target's tensor-parallel group (on the last
    // pipeline stage, next to the LM head it shares).
    out.draft = add_cost(p, gpu, mtp_draft_arch(s_.model), ParallelLayout{p.layout.tp, 1}, true);
  else if (spec_.speculative.method == SpecMethod::Eagle3)
    // The EAGLE-3 head runs on the target's tensor-parallel group, one pass per drafted token.
    out.draft = add_cost(p, gpu, eagle3_head_arch(s_.model), ParallelLayout{p.layout.tp, 1}, true);
  if (first && spec_.lora.enabled) {
    lora_load_time_s_ = spec_.lora.load_time_ms >= 0
                            ? spec_.lora.load_time_ms * 1e-3
                            : lora_adapter_bytes_per_gpu(s_.model, s_.precision, p.layout, spec_.lora.rank,
                                                         spec_.lora.targets == LoraTargets::AllLinear) /
                                  (gpu.pcie_bandwidth_GBps * 1e9);
  }
  return out;
}

const GpuSpec& StepPricer::gpu(int cost_index) const {
  return costs_[static_cast<size_t>(cost_index)].scenario->hardware.gpu;
}

void StepPricer::place_adapters(ModelEngine& e, const StepBatch& b, int& adapters, int& loads) {
  // Distinct adapters in batch order, marked with this step's stamp; the GPU's
  // adapter slots are an LRU (last-use stamp per adapter, ordered by it), so a
  // step costs O(items + distinct x log slots), not a scan of the slots per item.
  const int64_t step_mark = ++e.lora_clock;
  std::vector<int32_t> in_batch;
  for (const StepItem& it : b.items) {
    const int32_t a = reqs_[static_cast<size_t>(it.req)].spec.adapter;
    if (a < 0 || e.in_batch_mark[static_cast<size_t>(a)] == step_mark) continue;
    e.in_batch_mark[static_cast<size_t>(a)] = step_mark;
    in_batch.push_back(a);
  }
  adapters = static_cast<int>(in_batch.size());
  for (int32_t a : in_batch) {
    int64_t& used = e.last_used[static_cast<size_t>(a)];
    if (used >= 0) {  // resident: now the most recently used
      e.resident.erase({used, a});
      used = ++e.lora_clock;
      e.resident.insert({used, a});
      continue;
    }
    ++loads;
    if (static_cast<int>(e.resident.size()) >= spec_.lora.max_adapters_per_batch) {
      // Evict the least recently used adapter that this step does not use.
      for (auto jt = e.resident.begin(); jt != e.resident.end(); ++jt) {
        if (e.in_batch_mark[static_cast<size_t>(jt->second)] != step_mark) {
          e.last_used[static_cast<size_t>(jt->second)] = -1;
          e.resident.erase(jt);
          break;
        }
      }
    }
    used = ++e.lora_clock;
    e.resident.insert({used, a});
  }
}

double StepPricer::price_draft(const Replica& r, const StepBatch& b, PeakWork& work) {
  // The draft model sees every sequence of the step once (prompt chunks
  // included), then proposes k - 1 further tokens for the decoding ones.
  BatchShape first;
  BatchShape more;
  for (const StepItem& it : b.items) {
    if (it.kind == ItemKind::Verify) {
      first.seqs.push_back(SeqChunk{1, it.cached});
      more.seqs.push_back(SeqChunk{1, it.cached});
    } else {
      first.seqs.push_back(SeqChunk{it.new_tokens, it.cached});
    }
  }
  double t = price(r.draft_cost, first, 0, true, &work);
  for (int i = 1; i < spec_k_ && !more.seqs.empty(); ++i) {
    for (auto& sq : more.seqs) sq.cached_tokens += 1;
    t += price(r.draft_cost, more, 0, true, &work);
  }
  return t;
}

double StepPricer::price_batch(const Replica& r, ModelEngine& e, const StepBatch& b, double extra_s, PeakWork& work) {
  int adapters = 0;
  int loads = 0;
  if (spec_.lora.enabled) place_adapters(e, b, adapters, loads);
  double t = price(e.cost, b.shape, adapters, true, &work, &b.summary);
  bool has_decode = false;  // a verify item (only speculation makes them)
  if (spec_k_ > 0)
    for (const StepItem& it : b.items) has_decode = has_decode || it.kind == ItemKind::Verify;
  if (spec_k_ > 0 && r.draft_cost >= 0) {
    t += price_draft(r, b, work);
  } else if (spec_k_ > 0 && has_decode) {
    const double lookup = spec_k_ * spec_.speculative.ngram_lookup_us * 1e-6;
    totals_.draft_s += lookup;
    t += lookup;
  }
  if (b.reload_s > 0) t = with_reload(t, b.reload_s);
  if (b.swap_bytes > 0) {
    const double sw = b.swap_bytes / (r.gpu->pcie_bandwidth_GBps * 1e9);
    totals_.swap_s += sw;
    t += sw;
  }
  if (loads > 0) {
    totals_.adapter_loads += loads;
    totals_.lora_load_s += loads * lora_load_time_s_;
    t += loads * lora_load_time_s_;
  }
  const double cpu = spec_.scheduler.cpu_overhead_us * 1e-6;
  totals_.cpu_s += cpu;
  t += cpu + extra_s;
  return t;
}

double StepPricer::with_reload(double t, double reload_s) {
  // SGLang HiCache loads layer N+1's KV while layer N computes (layer-wise
  // overlap): the step takes the longer of the two, plus the first layer's
  // share of the load that nothing hides. "serial" adds the whole load.
  double out = t + reload_s;
  if (spec_.kv.reload_overlap == ReloadOverlap::Layerwise)
    out = std::max(t, reload_s) + reload_s / static_cast<double>(std::max(1, s_.model.num_layers));
  totals_.reload_s += reload_s;
  totals_.reload_exposed_s += out - t;
  return out;
}

std::vector<double> StepPricer::prefill_s_per_token() {
  // One 2048-token prompt chunk with nothing cached, per cost entry.
  constexpr int64_t kTokens = 2048;
  BatchShape shape;
  shape.seqs.push_back(SeqChunk{kTokens, 0});
  std::vector<double> out;
  for (size_t c = 0; c < costs_.size(); ++c)
    out.push_back(costs_[c].draft ? 0.0 : price(static_cast<int>(c), shape, 0, false, nullptr) / kTokens);
  return out;
}

void StepPricer::append_lora_ops(StepOperators& ops, int adapters) const {
  // Batched LoRA (SGMV/punica): a shrink GEMM to the rank and an expand GEMM
  // back, per target projection; each distinct adapter's weights are read once.
  const double act_b = dtype_bytes(s_.precision.activations == Dtype::FP8 ? Dtype::BF16 : s_.precision.activations);
  const double r_ = spec_.lora.rank;
  const bool all = spec_.lora.targets == LoraTargets::AllLinear;
  const size_t n = ops.ops.size();
  ops.ops.reserve(3 * n);  // at most two LoRA operators per operator: `base` stays valid
  for (size_t i = 0; i < n; ++i) {
    if (ops.ops[i].family != OpFamily::Gemm) continue;
    const Operator& base = ops.ops[i];
    const bool attn = base.role == OpRole::AttnProj;
    const bool mlp = base.role == OpRole::MlpProj;
    if (!(attn || (all && mlp))) continue;
    const double m = static_cast<double>(base.m);
    Operator shrink;
    shrink.name = "lora_shrink";
    shrink.family = OpFamily::Gemm;
    shrink.role = OpRole::LoraGemm;
    shrink.count = base.count;
    shrink.m = base.m;
    shrink.n = spec_.lora.rank;
    shrink.k = base.k;
    shrink.compute_dtype = base.compute_dtype;
    shrink.flops = 2.0 * m * r_ * static_cast<double>(base.k);
    shrink.bytes = (m * static_cast<double>(base.k) + adapters * static_cast<double>(base.k) * r_ + m * r_) * act_b;
    Operator expand = shrink;
    expand.name = "lora_expand";
    expand.n = base.n;
    expand.k = spec_.lora.rank;
    expand.flops = 2.0 * m * static_cast<double>(base.n) * r_;
    expand.bytes = (m * r_ + adapters * r_ * static_cast<double>(base.n) + 2.0 * m * static_cast<double>(base.n)) * act_b;
    ops.ops.push_back(std::move(shrink));
    ops.ops.push_back(std::move(expand));
  }
}

size_t StepPricer::summary_slot(const BatchSummary& key) {
  // The fields == compares, mixed (multiply-xorshift), to 6 bits.
  uint64_t h = static_cast<uint64_t>(key.tokens) * 0x9E3779B97F4A7C15ull;
  h = (h ^ static_cast<uint64_t>(key.sequences) ^ (static_cast<uint64_t>(key.decodes) << 20) ^
       (static_cast<uint64_t>(key.prefills) << 40)) * 0xBF58476D1CE4E5B9ull;
  return static_cast<size_t>(h >> 58);
}

StepPricer::BuiltStep& StepPricer::built_step(CostEntry& c, const BatchSummary& key) {
  if (c.steps.empty()) c.steps.resize(kBuiltSteps);
  // The last one picked first: consecutive steps mostly share a summary, and
  // no two entries in use hold the same key, so it is the one the walk finds.
  BuiltStep& last = c.steps[c.last_pick];
  if (last.last_use != 0 && last.key == key) {
    last.last_use = ++use_clock_;
    return last;
  }
  // Then the entry this summary's hash last led to (the one the walk would find).
  uint8_t& hinted = c.by_hash[summary_slot(key)];
  BuiltStep& hint = c.steps[hinted];
  if (hint.last_use != 0 && hint.key == key) {
    hint.last_use = ++use_clock_;
    c.last_pick = hinted;
    return hint;
  }
  BuiltStep* pick = &c.steps.front();
  for (BuiltStep& s : c.steps) {
    if (s.last_use != 0 && s.key == key) {
      pick = &s;
      break;
    }
    if (s.last_use < pick->last_use) pick = &s;
  }
  pick->key = key;
  pick->last_use = ++use_clock_;
  c.last_pick = static_cast<size_t>(pick - c.steps.data());
  hinted = static_cast<uint8_t>(c.last_pick);
  return *pick;
}

double StepPricer::price(int cost_index, const BatchShape& shape, int adapters, bool accumulate, PeakWork* work,
                         const BatchSummary* known) {
  CostEntry& c = costs_[static_cast<size_t>(cost_index)];
  StepOptions options;
  options.attention = s_.serving->attention;
  options.fusion = s_.cost_model.software_stack.fusion;
  options.layer_groups = &c.layer_groups;
  options.reuse_unchanged = true;  // this entry's list, its model, precision, layout and options
  // An MTP draft is part of the target: its MoE layer is routed and placed
  // like the target's (same experts per GPU, same all-to-alls).
  const bool mtp = c.draft && spec_.speculative.method == SpecMethod::Mtp;
  options.mtp_module = mtp;
  const bool routed = (!c.draft || mtp) && c.model->is_moe();
  // A lockstep group's target pass serves every rank's tokens (the draft's
  // passes keep the per-rank estimate).
  if (routed) options.moe = serving_moe_routing(spec_.moe, *c.model, c.layout, c.draft ? 0 : group_moe_tokens_);
  // Two-batch overlap runs the target's pass as two micro-batches (a draft's passes run whole).
  if (routed && !c.draft && spec_.moe.expert_parallel > 1 && spec_.moe.two_batch_overlap &&
      split_two_batches(shape, overlap_a_, overlap_b_))
    return price_two_batches(c, shape, options, adapters, accumulate, work);
  // The engine pads a graph decode batch to its captured size: the dummy
  // rows run every kernel, the all-to-alls included.
  const BatchSummary summary = known ? *known : summarize_batch(shape);
  options.summary = &summary;
  BuiltStep& built = built_step(c, summary);
  StepOperators& ops = built.ops;
  const BatchShape& ran =
      build_served_step_into(*c.model, s_.precision, c.layout, shape, options, s_.cost_model.software_stack, ran_scratch_, ops);
  if (routed && spec_.moe.expert_parallel > 1)
    append_moe_all_to_all(spec_.moe, *c.model, s_.precision.activations, ran, options.moe, ops);
  if (!c.draft && spec_.lora.enabled && adapters > 0) append_lora_ops(ops, adapters);
  StepCost& sc = built.priced;
  c.setup.price_into(ops, sc, /*labels=*/false, &built.memo);  // its figures only: see price_step_into
  if (work) {
    work->compute_gpu_s += sc.compute_peak_s * c.layout.tp;
    work->memory_gpu_s += sc.memory_peak_s * c.layout.tp;
  }
  if (accumulate && c.draft) {
    totals_.draft_s += sc.time_s;
  } else if (accumulate) {
    const bool moe = c.model->is_moe();
    const bool lora = spec_.lora.enabled;
    for (const PricedOperator& p : sc.parts) {
      const int f = static_cast<int>(p.family);
      if (f >= 0 && f < PricedTime::kFamilies) totals_.family_s[f] += p.time_s;
      if (moe && p.family == OpFamily::Gemm && p.role == OpRole::ExpertGemm) totals_.expert_s += p.time_s;
      if (lora && p.family == OpFamily::Gemm && p.role == OpRole::LoraGemm) totals_.lora_gemm_s += p.time_s;
    }
  }
  return sc.time_s;
}

double StepPricer::price_two_batches(CostEntry& c, const BatchShape& shape, StepOptions options, int adapters,
                                     bool accumulate, PeakWork* work) {
  const int64_t tokens = shape.total_new_tokens();
  const BatchShape* halves[2] = {&overlap_a_, &overlap_b_};
  MicroBatchParts parts[2];
  StepOperators whole;  // the step's sequences, for its host time (no operators)
  double kernels = 0;
  bool has_prefill = false;
  for (int h = 0; h < 2; ++h) {
    const BatchShape& half = *halves[h];
    // Every rank of a lockstep group splits its batch too: the group's
    // tokens in this micro-batch, in proportion.
    const int64_t group = tokens > 0 ? group_moe_tokens_ * half.total_new_tokens() / tokens : 0;
    options.moe = serving_moe_routing(spec_.moe, *c.model, c.layout, group);
    const BatchSummary summary = summarize_batch(half);
    options.summary = &summary;
    // The halves may share a summary, and so a built step: each is read
    // before the next is built over it.
    BuiltStep& built = built_step(c, summary);
    const BatchShape& ran = build_served_step_into(*c.model, s_.precision, c.layout, half, options,
                                                   s_.cost_model.software_stack, ran_scratch_, built.ops);
    append_moe_all_to_all(spec_.moe, *c.model, s_.precision.activations, ran, options.moe, built.ops);
    if (spec_.lora.enabled && adapters > 0) append_lora_ops(built.ops, adapters);
    c.setup.price_served_kernels_into(built.ops, built.priced, /*labels=*/false, &built.memo);
    parts[h] = micro_batch_parts(built.ops, built.priced, *c.model);
    whole.sequences += built.ops.sequences;
    whole.padding_sequences += built.ops.padding_sequences;
    kernels += built.priced.kernels;
    has_prefill = has_prefill || built.priced.has_prefill;
    if (work) {
      work->compute_gpu_s += built.priced.compute_peak_s * c.layout.tp;
      work->memory_gpu_s += built.priced.memory_peak_s * c.layout.tp;
    }
    if (accumulate)
      for (const PricedOperator& p : built.priced.parts) {
        const int f = static_cast<int>(p.family);
        if (f >= 0 && f < PricedTime::kFamilies) totals_.family_s[f] += p.time_s;
        if (p.family == OpFamily::Gemm && p.role == OpRole::ExpertGemm) totals_.expert_s += p.time_s;
        if (spec_.lora.enabled && p.family == OpFamily::Gemm && p.role == OpRole::LoraGemm) totals_.lora_gemm_s += p.time_s;
      }
  }
  const TwoBatchOverlapTime t = two_batch_overlap_time(parts[0], parts[1], is_decode_step(shape),
                                                       c.model->num_moe_layers(), c.scenario->hardware.gpu);
  const double host_s = c.setup.stack ? std::max(0.0, c.setup.exposed_host_s(
                                                          t.gpu_s, host_time(kernels, has_prefill, whole, *c.setup.stack)))
                                      : 0.0;
  if (accumulate) {
    // Busy time counts the all-to-all no compute hid, and the GEMMs' SM share.
    totals_.family_s[static_cast<int>(OpFamily::Collective)] -= t.all_to_all_s - t.exposed_s;
    totals_.family_s[static_cast<int>(OpFamily::Gemm)] += t.sm_share_s;
    totals_.overlap_all_to_all_s += t.all_to_all_s;
    totals_.overlap_exposed_s += t.exposed_s;
  }
  return t.gpu_s + host_s;
}

}  // namespace sightline::serve
