#include "model/operators.hpp"

#include "model/kv_footprint.hpp"
#include "model/step_builder.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>

namespace sightline {

ShardDims shard_dims(const ModelArch& m, int tp) {
  ShardDims d;
  d.heads = m.num_heads / tp;
  d.kv_heads = kv_heads_per_gpu(m.num_kv_heads, tp);
  d.intermediate = (m.intermediate_size + tp - 1) / tp;
  d.expert_intermediate = (m.moe.expert_intermediate_size + tp - 1) / tp;
  d.vocab = (m.vocab_size + tp - 1) / tp;
  return d;
}

// With more TP ranks than KV heads, each rank keeps a replica of one KV head.
int kv_heads_per_gpu(int kv_heads, int tp) { return std::max(1, kv_heads / tp); }

double kv_bytes_per_token_per_gpu(const ModelArch& m, const Precision& p, int tp, int layers) {
  // Every attention layer's KV per token (windowed layers included, as long
  // as the context is shorter than their window); fixed state is not per token.
  return kv_footprint_per_gpu(m, p, tp, static_cast<double>(layers) / m.num_layers).bytes_per_token_uncapped();
}

using step_building::StepBuilder;

namespace {
// Builds are numbered across every list and thread, so that a memo's "the
// build I priced" names one build, never another list's at the same address.
std::atomic<uint64_t> build_numbers{0};
uint64_t next_build_number() { return build_numbers.fetch_add(1, std::memory_order_relaxed) + 1; }
}  // namespace

BatchSummary summarize_batch(const BatchShape& batch) {
  BatchSummary b;
  for (const SeqChunk& s : batch.seqs) b.add(s);
  return b;
}

// Every operator but the attention cores reads the batch only through its
// summary (tokens, rows, phase counts): true of the builder's dense and
// recurrent layers. Not of MLA (its latent path reads each sequence's past),
// DSA's indexer, MoE layers (their routing is an option the caller may change
// per step), an MTP module, or training.
bool StepBuilder::reusable(const ModelArch& m, const StepOptions& options) {
  if (options.training || options.mtp_module || m.mla.enabled || m.is_moe()) return false;
  const std::vector<LayerGroup> own = options.layer_groups ? std::vector<LayerGroup>{} : m.layer_groups();
  for (const LayerGroup& g : options.layer_groups ? *options.layer_groups : own)
    if (g.kind.indexer || g.kind.ffn == LayerFfn::Moe) return false;
  return true;
}

StepBuildInputs StepBuilder::build_inputs() const {
  StepBuildInputs in;
  in.model = &m_;
  in.precision = &p_;
  in.layer_groups = layer_groups_;
  in.attention = attention_;
  in.fusion = fusion_;
  in.tp = layout_.tp;
  in.pp = layout_.pp;
  in.ep = layout_.ep;
  in.expert_slots = layout_.expert_slots;
  return in;
}

// The cores are rebuilt where they are, with the attention shape each was
// built with; the operators between them are those the last build wrote
// (equal batch summaries and build inputs: they would be built again bit for
// bit), and what a caller appended after the build is dropped, as a whole
// build drops it.
bool StepBuilder::rebuild_cores_only(const BatchSummary& summary) {
  const StepReuse& r = out_.reuse;
  if (!r.valid || !(r.inputs == build_inputs()) || !(r.batch == summary) || out_.ops.size() < r.ops) return false;
  out_.ops.erase(out_.ops.begin() + static_cast<std::ptrdiff_t>(r.ops), out_.ops.end());
  StepReuse& w = out_.reuse;
  w.rebuilt.assign(r.ops, 0);
  reuse_ = false;  // the cores' calls are already recorded
  for (const AttentionCoreCall& c : r.cores) {
    used_ = c.first_op;
    attn_ = AttentionDims{c.heads, c.kv_heads, c.qk, c.v, c.k_eq_v};
    stage_ = OpStage::AttentionCore;
    add_attention_core(c.layers, c.cap_tokens, c.topk);
    stage_ = OpStage::Other;
    for (size_t i = c.first_op; i < used_ && i < w.rebuilt.size(); ++i) w.rebuilt[i] = 1;
  }
  reuse_ = true;
  used_ = r.ops;
  out_.padding_sequences = 0;
  w.over = w.build;
  w.build = next_build_number();
  w.cores_only = true;
  return true;
}

void StepBuilder::start_whole_build() {
  used_ = 0;
  StepReuse& w = out_.reuse;
  w.valid = w.cores_only = false;
  w.cores.clear();
  w.over = 0;
  w.build = next_build_number();
}

void StepBuilder::keep_for_reuse(const BatchSummary& summary) {
  StepReuse& w = out_.reuse;
  w.valid = true;
  w.inputs = build_inputs();
  w.batch = summary;
  w.ops = used_;
}

double weight_bytes_read(const StepOperators& step) {
  double bytes = 0;
  for (const Operator& op : step.ops) bytes += op.count * op.weight_bytes;
  return bytes;
}

StepOperators build_forward_step(const ModelArch& m, const Precision& p, const ParallelLayout& layout,
                                 const BatchShape& batch, const StepOptions& options) {
  StepOperators out;
  StepBuilder(m, p, layout, batch, options, out).build();
  return out;
}

void build_forward_step_into(const ModelArch& m, const Precision& p, const ParallelLayout& layout,
                             const BatchShape& batch, const StepOptions& options, StepOperators& out) {
  StepBuilder(m, p, layout, batch, options, out).build();
}

}  // namespace sightline
