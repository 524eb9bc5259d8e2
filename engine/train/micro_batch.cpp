#include "train/micro_batch.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "model/param_count.hpp"
#include "train/tp_overlap.hpp"

namespace sightline {

const char* time_cat_name(int c) {
  static const char* names[kNumTimeCats] = {"gemm",      "attention", "norm",    "elementwise", "rope",
                                            "embedding", "moe_router", "loss",   "recompute",   "tp_comm",
                                            "ep_comm",   "cp_comm",   "fsdp_comm", "overhead"};
  return c >= 0 && c < kNumTimeCats ? names[c] : "?";
}

namespace {

enum Where { kWhereEmb, kWhereDense, kWhereMoe, kWhereHead, kNumWhere };
enum CommKind { kCommNone, kCommTp, kCommTpWgrad };

struct Tag {
  int where = kWhereDense;
  int part = kPartOther;
  int comm = kCommNone;
};

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

bool is_embedding_op(const std::string& n) { return n == "emb" || n == "emb_position" || n == "emb_all_reduce"; }
bool is_head_op(const std::string& n) {
  return n == "final_layernorm" || n == "lm_head" || n == "loss_all_reduce" || n == "logits_all_gather" ||
         n == "cross_entropy" || n == "sampling";
}

int part_of(const std::string& n) {
  if (n == "attn_prefill" || n == "attn_decode") return kPartAttnCore;
  if (n == "input_layernorm" || starts_with(n, "attn_") || starts_with(n, "lora_q") || starts_with(n, "lora_k") ||
      starts_with(n, "lora_v") || starts_with(n, "lora_o"))
    return kPartAttnOther;
  if (n == "post_attention_layernorm" || starts_with(n, "mlp_") || starts_with(n, "moe_") || starts_with(n, "lora_up") ||
      starts_with(n, "lora_gate") || starts_with(n, "lora_down"))
    return kPartMlp;
  return kPartOther;
}

int cat_of(const Operator& op) {
  switch (op.family) {
    case OpFamily::Gemm: return kCatGemm;
    case OpFamily::AttentionPrefill:
    case OpFamily::AttentionDecode: return kCatAttention;
    case OpFamily::Norm: return kCatNorm;
    case OpFamily::Elementwise:
    case OpFamily::KvCacheWrite: return kCatElementwise;
    case OpFamily::Rope: return kCatRope;
    case OpFamily::Embedding: return kCatEmbedding;
    case OpFamily::MoeRouter: return kCatMoeRouter;
    case OpFamily::Sampling: return kCatLoss;
    case OpFamily::Collective: return kCatTpComm;
    case OpFamily::Host: return kCatOverhead;
  }
  return kCatElementwise;
}

double gemm_bytes(int64_t m, int64_t n, int64_t k, double a, double w) {
  return static_cast<double>(m) * k * a + static_cast<double>(k) * n * w + static_cast<double>(m) * n * a;
}

Operator gemm(const std::string& name, double count, int64_t m, int64_t n, int64_t k, double a, Dtype dt) {
  return make_gemm_operator(name, count, m, n, k, a, a, dt);
}

Operator memory_op(const std::string& name, double count, double bytes, double flops, Dtype dt) {
  return make_memory_operator(name, OpFamily::Elementwise, count, bytes, flops, dt);
}

Operator collective(const std::string& name, CollectiveKind kind, double count, double bytes, int group, Dtype dt) {
  return make_collective_operator(name, kind, count, bytes, group, dt);
}

bool fp8_selected(Fp8Gemms mode, const std::string& n) {
  if (mode == Fp8Gemms::None) return false;
  const bool mlp = starts_with(n, "mlp_") || n == "moe_expert_up_proj" || n == "moe_expert_down_proj" ||
                   starts_with(n, "moe_shared_");
  if (mode == Fp8Gemms::Mlp) return mlp;
  const bool attn = n == "attn_pre_proj" || n == "attn_post_proj" || starts_with(n, "attn_q_") ||
                    starts_with(n, "attn_kv_");
  if (mode == Fp8Gemms::Layers) return mlp || attn;
  return mlp || attn || n == "lm_head";
}

PricedOperator priced(const std::string& name, double count, double time_s, double bytes) {
  PricedOperator p;
  p.name = name;
  p.family = OpFamily::Collective;
  p.count = count;
  p.time_s = p.time_low_s = p.time_high_s = time_s;
  p.bytes = bytes;
  p.bound = "communication";
  return p;
}

struct Lists {
  std::vector<Operator> ops;
  std::vector<Tag> tags;
  void add(Operator op, Tag t) {
    ops.push_back(std::move(op));
    tags.push_back(t);
  }
};

}  // namespace

MicroBatchModel::MicroBatchModel(const Scenario& s, const CostSetup& setup, const CommPricer& comm,
                                 const TrainGroups& groups)
    : s_(s), setup_(setup), comm_(comm), groups_(groups) {
  build();
}

void MicroBatchModel::build() {
  const ModelArch& m = s_.model;
  const TrainConfig& c = s_.training->config;
  const TrainParallelism& par = c.parallelism;
  const int tp = par.tp, cp = par.cp, ep = par.ep;
  const bool sp = par.sequence_parallel && tp > 1;
  const Dtype act_dt = s_.precision.activations;
  const double a = dtype_bytes(act_dt);
  const ShardDims dims = shard_dims(m, tp);
  const int64_t seq_local = c.batch.seq_len / cp;
  const int64_t mbs = c.batch.micro_batch_size;
  const int64_t t = mbs * seq_local;
  tokens_ = static_cast<double>(t);
  const double L[kNumWhere] = {1.0, static_cast<double>(m.num_dense_layers()), static_cast<double>(m.num_moe_layers()),
                               1.0};
  const bool lora = c.lora.enabled;
  const bool quant_base = lora && c.lora.base_dtype != Dtype::BF16 && c.lora.base_dtype != Dtype::FP16;
  const double base_w_bytes =
      lora ? dtype_bytes(c.lora.base_dtype, is_integer_weight_only(c.lora.base_dtype) ? c.lora.quant_group_size : 0)
           : dtype_bytes(s_.precision.weights);
  const double hidden_msg = static_cast<double>(t) * m.hidden_size * a;

  // The model's forward graph for one micro-batch on one GPU. Context
  // parallelism: each GPU holds seq/cp tokens of each sequence and, with
  // load-balanced causal chunks, attends over as many pairs as seq²/(2·cp);
  // `cached_tokens` is set so that the causal pair count matches.
  BatchShape batch;
  const int64_t cached = cp > 1 ? c.batch.seq_len * (cp - 1) / (2 * cp) : 0;
  batch.seqs.assign(static_cast<size_t>(mbs), SeqChunk{seq_local, cached});
  StepOptions opt;
  opt.attention = c.attention;
  opt.training = true;
  Precision prec = s_.precision;
  ParallelLayout layout;
  layout.tp = tp;
  layout.pp = 1;
  const StepOperators fwd0 = build_forward_step(m, prec, layout, batch, opt);

  Lists F, B, R;  // forward, backward, selective recomputation
  struct CommOp {
    std::string name;
    int where;
    bool backward;
    double time_s;  // all invocations
    double count;
    int kind;  // 0 ep, 1 cp
  };
  std::vector<CommOp> extra_comm;

  // LoRA adapter shapes (per GPU) and trainable counts.
  struct Adapter {
    std::string target;
    int64_t d_in_local, d_out_local, d_in, d_out;
  };
  const int64_t h = m.hidden_size;
  const int64_t q_out = static_cast<int64_t>(m.num_heads) * m.head_dim;
  const int64_t kv_out = static_cast<int64_t>(m.num_kv_heads) * m.head_dim;
  const int64_t q_local = static_cast<int64_t>(dims.heads) * m.head_dim;
  const int64_t kv_local = static_cast<int64_t>(dims.kv_heads) * m.head_dim;
  auto adapters_for = [&](const std::string& base) {
    std::vector<Adapter> out;
    if (!lora) return out;
    auto add = [&](const char* tname, int64_t din_l, int64_t dout_l, int64_t din, int64_t dout) {
      if (c.lora.has_target(tname)) out.push_back({tname, din_l, dout_l, din, dout});
    };
    if (base == "attn_pre_proj") {
      add("q", h, q_local, h, q_out);
      add("k", h, kv_local, h, kv_out);
      add("v", h, kv_local, h, kv_out);
    } else if (base == "attn_post_proj") {
      add("o", q_local, h, q_out, h);
    } else if (base == "mlp_up_proj") {
      add("up", h, dims.intermediate, h, m.intermediate_size);
      add("gate", h, dims.intermediate, h, m.intermediate_size);
    } else if (base == "mlp_down_proj") {
      add("down", dims.intermediate, h, m.intermediate_size, h);
    }
    return out;
  };
  trainable_layer_total_ = 0;
  for (const char* base : {"attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj"})
    for (const Adapter& ad : adapters_for(base))
      trainable_layer_total_ += static_cast<double>(c.lora.rank) * static_cast<double>(ad.d_in + ad.d_out);

  auto backward_of = [&](const Operator& f) { return build_backward_step(StepOperators{{f}}, prec).ops; };
  auto fix_fp8_bytes = [](Operator& op) {
    if (op.family == OpFamily::Gemm && op.compute_dtype == Dtype::FP8)
      op.bytes = static_cast<double>(op.m) * op.k + static_cast<double>(op.k) * op.n + 2.0 * op.m * op.n;
  };

  int block = -1;
  for (const Operator& f0 : fwd0.ops) {
    Operator f = f0;
    Tag tag;
    if (is_embedding_op(f.name)) tag.where = kWhereEmb;
    else if (is_head_op(f.name)) tag.where = kWhereHead;
    else {
      if (f.name == "input_layernorm") ++block;
      tag.where = !m.is_moe() ? kWhereDense : (m.num_dense_layers() > 0 && block == 0 ? kWhereDense : kWhereMoe);
    }
    tag.part = (tag.where == kWhereDense || tag.where == kWhereMoe) ? part_of(f.name) : kPartOther;

    // Collectives of the tensor-parallel layout.
    if (f.family == OpFamily::Collective) {
      if (f.collective == CollectiveKind::SendRecv) continue;  // pipeline transfers are simulated by the schedule
      Tag ct = tag;
      ct.comm = kCommTp;
      const double msg = f.message_bytes;
      if (f.name == "attn_all_reduce" || f.name == "mlp_all_reduce") {
        const std::string stem = f.name.substr(0, f.name.size() - std::string("_all_reduce").size());
        if (sp) {
          // Megatron sequence parallelism: all-gather into the block, reduce-scatter out of it;
          // conjugates in backward, plus the all-gather of the block input for the weight gradient.
          F.add(collective(stem + "_reduce_scatter", CollectiveKind::ReduceScatter, f.count, msg, tp, act_dt), ct);
          F.add(collective(stem + "_all_gather", CollectiveKind::AllGather, f.count, msg, tp, act_dt), ct);
          B.add(collective(stem + "_reduce_scatter_bwd", CollectiveKind::ReduceScatter, f.count, msg, tp, act_dt), ct);
          B.add(collective(stem + "_all_gather_bwd", CollectiveKind::AllGather, f.count, msg, tp, act_dt), ct);
          Tag wt = ct;
          wt.comm = kCommTpWgrad;
          if (!lora || (stem == "attn" ? (c.lora.has_target("q") || c.lora.has_target("k") || c.lora.has_target("v"))
                                       : (c.lora.has_target("up") || c.lora.has_target("gate"))))
            B.add(collective(stem + "_all_gather_wgrad", CollectiveKind::AllGather, f.count, msg, tp, act_dt), wt);
        } else {
          F.add(f, ct);
          Operator b = f;
          b.name = f.name + "_bwd";
          b.backward = true;
          B.add(b, ct);
        }
      } else if (f.name == "emb_all_reduce") {
        if (sp) F.add(collective("emb_reduce_scatter", CollectiveKind::ReduceScatter, f.count, msg, tp, act_dt), ct);
        else F.add(f, ct);
      } else if (f.name == "loss_all_reduce") {
        F.add(f, ct);
      } else {
        F.add(f, ct);
      }
      continue;
    }

    // Sequence parallelism shards the norms and residual adds over tp.
    if (sp && (f.name == "input_layernorm" || f.name == "post_attention_layernorm" || f.name == "add" ||
               f.name == "final_layernorm")) {
      f.flops /= tp;
      f.bytes /= tp;
    }
    // Vocabulary-parallel cross-entropy works on the vocabulary shard.
    if (f.name == "cross_entropy") {
      f.flops /= tp;
      f.bytes /= tp;
    }
    if (sp && f.name == "lm_head") {
      Tag ct = tag;
      ct.comm = kCommTp;
      F.add(collective("head_all_gather", CollectiveKind::AllGather, 1, hidden_msg, tp, act_dt), ct);
      B.add(collective("head_reduce_scatter_bwd", CollectiveKind::ReduceScatter, 1, hidden_msg, tp, act_dt), ct);
    }

    // Expert parallelism: this GPU runs num_experts/ep experts on the tokens
    // routed to them from every EP rank (the busiest rank gets load_imbalance × the mean).
    if (ep > 1 && (f.name == "moe_expert_up_proj" || f.name == "moe_expert_act" || f.name == "moe_expert_down_proj")) {
      const int64_t E = m.moe.num_experts;
      const double local_experts = static_cast<double>(E / ep);
      const int64_t tpe = static_cast<int64_t>(std::ceil(static_cast<double>(t) * m.moe.top_k * ep *
                                                          c.moe_load_imbalance / static_cast<double>(E)));
      const int64_t up = (m.gated_mlp ? 2 : 1) * dims.expert_intermediate;
      f.count = L[kWhereMoe] * local_experts;
      if (f.name == "moe_expert_up_proj") {
        f.m = tpe;
        f.flops = 2.0 * tpe * f.n * f.k;
        f.bytes = gemm_bytes(tpe, f.n, f.k, a, a);
      } else if (f.name == "moe_expert_down_proj") {
        f.m = tpe;
        f.flops = 2.0 * tpe * f.n * f.k;
        f.bytes = gemm_bytes(tpe, f.n, f.k, a, a);
      } else {
        const double rd = static_cast<double>(tpe) * up, wr = static_cast<double>(tpe) * dims.expert_intermediate;
        f.flops = 6.0 * std::max(rd, wr);
        f.bytes = (rd + wr) * a;
      }
    }

    const bool is_gemm = f.family == OpFamily::Gemm;
    const bool fp8 = is_gemm && fp8_selected(c.fp8, f.name);
    if (fp8) {
      f.compute_dtype = Dtype::FP8;
      fix_fp8_bytes(f);
      // Transformer Engine casts the GEMM input to FP8 (and its transpose for the weight gradient).
      F.add(memory_op(f.name + "_fp8_cast", f.count, 4.0 * static_cast<double>(f.m) * f.k,
                      2.0 * static_cast<double>(f.m) * f.k, act_dt),
            tag);
    }
    // QLoRA: the frozen quantized weight is dequantized before each use.
    const bool frozen_linear = lora && is_gemm && tag.where != kWhereHead;
    if (quant_base && frozen_linear) {
      const double wn = static_cast<double>(f.k) * f.n;
      F.add(memory_op(f.name + "_dequant", f.count, wn * (base_w_bytes + a), 2.0 * wn, act_dt), tag);
      B.add(memory_op(f.name + "_dequant_bwd", f.count, wn * (base_w_bytes + a), 2.0 * wn, act_dt), tag);
    }
    F.add(f, tag);

    // Backward.
    if (f.family == OpFamily::Sampling) {
      // Softmax-cross-entropy gradient: read the fp32 probabilities, write the logits gradient.
      const double rows = static_cast<double>(t), vocab = static_cast<double>(dims.vocab);
      Operator g = memory_op("cross_entropy_bwd", 1, rows * vocab * (4.0 + a), 2.0 * rows * vocab, Dtype::FP32);
      g.backward = true;
      B.add(g, tag);
    } else {
      for (Operator b : backward_of(f)) {
        const bool wgrad = b.name.size() > 6 && b.name.compare(b.name.size() - 6, 6, "_wgrad") == 0;
        if (lora && wgrad) continue;                 // frozen base: no weight gradient
        if (lora && f.name == "emb") continue;       // frozen embedding: no gradient scatter
        if (fp8) fix_fp8_bytes(b);
        B.add(b, tag);
      }
      // The incoming gradient is cast to FP8 once (and transposed for the weight gradient).
      if (fp8)
        B.add(memory_op(f.name + "_grad_fp8_cast", f.count, 4.0 * static_cast<double>(f.m) * f.n,
                        2.0 * static_cast<double>(f.m) * f.n, act_dt),
              tag);
    }

    // LoRA adapters: x·A (rank r) then ·B, on the chosen projections.
    for (const Adapter& ad : adapters_for(f.name)) {
      Tag at = tag;
      at.part = (ad.target == "up" || ad.target == "gate" || ad.target == "down") ? kPartMlp : kPartAttnOther;
      Operator pa = gemm("lora_" + ad.target + "_a", f.count, t, c.lora.rank, ad.d_in_local, a, act_dt);
      Operator pb = gemm("lora_" + ad.target + "_b", f.count, t, ad.d_out_local, c.lora.rank, a, act_dt);
      F.add(pa, at);
      F.add(pb, at);
      for (const Operator& bo : backward_of(pa)) B.add(bo, at);
      for (const Operator& bo : backward_of(pb)) B.add(bo, at);
    }

    // Selective recomputation.
    if (tag.where == kWhereDense || tag.where == kWhereMoe) {
      const RecomputeSpec& rc = c.recompute;
      if (rc.mode == RecomputeMode::Selective) {
        if (rc.core_attn && f.family == OpFamily::AttentionPrefill && c.attention == AttentionImpl::Standard)
          R.add(f, tag);
        if (rc.layernorm && (f.name == "input_layernorm" || f.name == "post_attention_layernorm")) R.add(f, tag);
        if (rc.mlp_act && (f.name == "mlp_act" || f.name == "moe_expert_act" || f.name == "moe_shared_act"))
          R.add(f, tag);
      } else if (rc.mode == RecomputeMode::SelectiveOp) {
        // torchtitan's op-level policy: memory-bound ops are recomputed, and
        // every second matmul of the layer (k, o, and the third MLP matmul).
        if (f.family == OpFamily::Norm || f.family == OpFamily::Rope || f.name == "mlp_act" ||
            f.name == "moe_expert_act" || f.name == "moe_shared_act")
          R.add(f, tag);
        if (f.name == "attn_pre_proj") {
          Operator k = gemm("attn_k_proj_recompute", f.count, f.m, kv_local, f.k, a, f.compute_dtype);
          if (f.compute_dtype == Dtype::FP8) fix_fp8_bytes(k);
          R.add(k, tag);
        }
        if (f.name == "attn_post_proj") R.add(f, tag);
        if (f.name == "mlp_up_proj") {
          if (m.gated_mlp) {
            Operator u = gemm("mlp_up_half_recompute", f.count, f.m, dims.intermediate, f.k, a, f.compute_dtype);
            if (f.compute_dtype == Dtype::FP8) fix_fp8_bytes(u);
            R.add(u, tag);
          }
        }
        if (f.name == "mlp_down_proj" && !m.gated_mlp) R.add(f, tag);
      }
    }
  }

  // Price the compute and tensor-parallel lists through the scenario's cost model.
  auto to_step = [](const Lists& l) { return StepOperators{l.ops}; };
  // Kernels only: a training step's host work (launches) overlaps the GPU.
  breakdown_.forward = setup_.price_kernels(to_step(F));
  breakdown_.backward = setup_.price_kernels(to_step(B));
  breakdown_.recompute = setup_.price_kernels(to_step(R));
  // Whatever the model adds on top of the listed operators (none today) is kept as overhead.
  auto extra = [](const StepCost& sc, size_t n) {
    double x = sc.time_s;
    for (size_t i = 0; i < n && i < sc.parts.size(); ++i) x -= sc.parts[i].time_s;
    return x > 1e-9 * sc.time_s ? x : 0.0;  // rounding of the sum is not overhead
  };
  unattributed_s_ = extra(breakdown_.forward, F.ops.size()) + extra(breakdown_.backward, B.ops.size()) +
                    extra(breakdown_.recompute, R.ops.size());
  if (unattributed_s_ < 0) unattributed_s_ = 0;

  // Accumulate per item (layers per layer).
  struct Acc {
    CatTimes fwd{}, bwd{};
    double fwd_flops = 0, bwd_flops = 0;
    double tp_fwd = 0, tp_bwd = 0, tp_wgrad = 0, gemm_fwd = 0, gemm_bwd = 0, dgrad_bwd = 0;
    double attn_core_fwd = 0, attn_core_bwd = 0;
    double rec_s = 0, rec_flops = 0;
    double part_s[kNumParts] = {0, 0, 0, 0};
    double mlp_flops = 0;
    double ag_s = 0, ag_calls = 0;
    // Per operator of one layer, for the overlap of each TP collective with its own GEMM.
    std::vector<NamedTime> tp_fwd_ops, tp_bwd_ops;
    std::map<std::string, double> gemm_fwd_by_name, gemm_bwd_by_name;
  };
  Acc acc[kNumWhere];
  auto per = [&](int where) { return L[where] > 0 ? L[where] : 1.0; };
  for (size_t i = 0; i < F.ops.size(); ++i) {
    const Operator& op = F.ops[i];
    const Tag& tg = F.tags[i];
    Acc& x = acc[tg.where];
    const double time = breakdown_.forward.parts[i].time_s / per(tg.where);
    const double flops = op.flops * op.count / per(tg.where);
    if (tg.comm != kCommNone) {
      x.tp_fwd += time;
      x.tp_fwd_ops.push_back({op.name, time});
      if (op.collective == CollectiveKind::AllGather) {
        x.ag_s += time;
        x.ag_calls += op.count / per(tg.where);
      }
    } else {
      x.fwd[cat_of(op)] += time;
      x.fwd_flops += flops;
      if (op.family == OpFamily::Gemm) {
        x.gemm_fwd += time;
        x.gemm_fwd_by_name[op.name] += time;
      }
      if (tg.part == kPartAttnCore) x.attn_core_fwd += time;
      if (tg.part == kPartMlp) x.mlp_flops += flops;
    }
    x.part_s[tg.part] += time;
  }
  for (size_t i = 0; i < B.ops.size(); ++i) {
    const Operator& op = B.ops[i];
    const Tag& tg = B.tags[i];
    Acc& x = acc[tg.where];
    const double time = breakdown_.backward.parts[i].time_s / per(tg.where);
    const double flops = op.flops * op.count / per(tg.where);
    if (tg.comm != kCommNone) x.tp_bwd_ops.push_back({op.name, time});
    if (tg.comm == kCommTpWgrad) {
      x.tp_wgrad += time;
      x.ag_s += time;
      x.ag_calls += op.count / per(tg.where);
    } else if (tg.comm == kCommTp) {
      x.tp_bwd += time;
      if (op.collective == CollectiveKind::AllGather) {
        x.ag_s += time;
        x.ag_calls += op.count / per(tg.where);
      }
    } else {
      x.bwd[cat_of(op)] += time;
      x.bwd_flops += flops;
      if (op.family == OpFamily::Gemm) {
        x.gemm_bwd += time;
        x.gemm_bwd_by_name[op.name] += time;
        if (op.name.size() > 6 && op.name.compare(op.name.size() - 6, 6, "_dgrad") == 0) x.dgrad_bwd += time;
      }
      if (tg.part == kPartAttnCore) x.attn_core_bwd += time;
      if (tg.part == kPartMlp) x.mlp_flops += flops;
    }
    x.part_s[tg.part] += time;
  }
  for (size_t i = 0; i < R.ops.size(); ++i) {
    const Operator& op = R.ops[i];
    Acc& x = acc[R.tags[i].where];
    x.rec_s += breakdown_.recompute.parts[i].time_s / per(R.tags[i].where);
    x.rec_flops += op.flops * op.count / per(R.tags[i].where);
  }

  // Communication priced on its own group: EP all-to-all and the CP ring.
  double ep_pass[2] = {0, 0}, ep_calls = 0;  // per MoE layer: forward, backward
  if (ep > 1 && m.is_moe()) {
    const double msg = static_cast<double>(t) * m.moe.top_k * h * a * c.moe_load_imbalance;
    const double one = comm_.collective(CollectiveKind::AllToAll, msg, groups_.ep);
    ep_pass[0] = ep_pass[1] = 2.0 * one;  // dispatch + combine
    ep_calls = 2;
    comm_parts_.push_back(priced("ep_all_to_all", 2.0 * L[kWhereMoe], 2.0 * one * L[kWhereMoe], msg * 2.0 * L[kWhereMoe]));
    comm_parts_.push_back(
        priced("ep_all_to_all_bwd", 2.0 * L[kWhereMoe], 2.0 * one * L[kWhereMoe], msg * 2.0 * L[kWhereMoe]));
  }
  double cp_pass[2] = {0, 0};  // per layer
  if (cp > 1) {
    const double kv_chunk = static_cast<double>(t) * 2.0 * kv_local * a;
    const bool inter = groups_.cp.inter_node();
    cp_pass[0] = (cp - 1) * comm_.p2p(kv_chunk, inter);
    cp_pass[1] = (cp - 1) * comm_.p2p(2.0 * kv_chunk, inter);  // K,V forward again and dK,dV back
    const double layers = static_cast<double>(m.num_layers);
    comm_parts_.push_back(priced("cp_ring_kv", (cp - 1) * layers, cp_pass[0] * layers, kv_chunk * (cp - 1) * layers));
    comm_parts_.push_back(
        priced("cp_ring_kv_bwd", (cp - 1) * layers, cp_pass[1] * layers, 2.0 * kv_chunk * (cp - 1) * layers));
  }

  // Parameters per item on this GPU.
  const ParamCounts pc = count_params(m);
  const double act_param_b = a;  // norms, embeddings, head stay in the activation dtype
  auto linear_params_dense_layer = [&]() {
    return static_cast<double>(pc.dense_layer.attention + pc.dense_layer.mlp) / tp;
  };
  const double adapters_local = [&] {
    double x = 0;
    for (const char* base : {"attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj"})
      for (const Adapter& ad : adapters_for(base))
        x += static_cast<double>(c.lora.rank) * static_cast<double>(ad.d_in_local + ad.d_out_local);
    return x;
  }();

  auto fill_params = [&](ItemCost& it, int where) {
    double dense = 0, expert = 0, norms = 0, largest = 0, fp8p = 0;
    if (where == kWhereDense) {
      dense = linear_params_dense_layer();
      norms = static_cast<double>(pc.dense_layer.norms);
      const double up = static_cast<double>(h) * (m.gated_mlp ? 2 : 1) * dims.intermediate;
      largest = std::max({up, static_cast<double>(h) * (q_local + 2 * kv_local)});
      if (c.fp8 == Fp8Gemms::Mlp) fp8p = static_cast<double>(pc.dense_layer.mlp) / tp;
      else if (c.fp8 != Fp8Gemms::None) fp8p = dense;
    } else if (where == kWhereMoe) {
      const double expert_all = static_cast<double>(pc.moe_layer.mlp) - static_cast<double>(h) * m.moe.num_experts;
      const double shared_frac = static_cast<double>(m.moe.num_shared_experts) /
                                 static_cast<double>(m.moe.num_experts + m.moe.num_shared_experts);
      const double routed = expert_all * (1.0 - shared_frac);
      const double shared = expert_all * shared_frac;
      expert = routed / (static_cast<double>(tp) * ep);
      dense = static_cast<double>(pc.moe_layer.attention) / tp + shared / tp +
              static_cast<double>(h) * m.moe.num_experts;
      norms = static_cast<double>(pc.moe_layer.norms);
      largest = static_cast<double>(h) * (m.gated_mlp ? 2 : 1) * dims.expert_intermediate;
      if (c.fp8 == Fp8Gemms::Mlp) fp8p = expert + shared / tp;
      else if (c.fp8 != Fp8Gemms::None) fp8p = expert + dense;
    } else if (where == kWhereEmb) {
      norms = static_cast<double>(pc.embedding) / tp;  // embeddings stay in the activation dtype
      largest = norms;
    } else {
      const double head = m.tied_embeddings ? (par.pp > 1 ? static_cast<double>(m.vocab_size) * h : 0.0)
                                            : static_cast<double>(pc.lm_head);
      norms = head / tp + static_cast<double>(pc.final_norm);
      largest = head / tp;
      if (c.fp8 == Fp8Gemms::All) fp8p = head / tp;
    }
    it.largest_matrix_params = largest;
    it.fp8_gemm_params = fp8p;
    if (lora) {
      it.frozen_params_dense = dense + expert + norms;
      it.frozen_param_bytes = (dense + expert) * base_w_bytes + norms * act_param_b;
      it.params_dense = (where == kWhereDense || where == kWhereMoe) ? adapters_local : 0.0;
      it.params_expert = 0;
    } else {
      it.params_dense = dense + norms;
      it.params_expert = expert;
    }
  };

  // Compose the items.
  const OverlapSpec& ov = c.overlap;
  const double tp_sm_share = tp_overlap_sm_share(s_.hardware.gpu.sm_count);
  for (int kind = 0; kind < 2; ++kind) {
    const int where = kind == 0 ? kWhereDense : kWhereMoe;
    const Acc& x = acc[where];
    for (int rec = 0; rec < 2; ++rec) {
      ItemCost it;
      double cf = 0, cb = 0;
      for (int k = 0; k < kNumTimeCats; ++k) {
        it.fwd_cat[k] = x.fwd[k];
        it.bwd_cat[k] = x.bwd[k];
        cf += x.fwd[k];
        cb += x.bwd[k];
      }
      // With comm overlap (it needs sequence parallelism) each collective hides
      // behind its own GEMM only; without it, only the weight-gradient gather
      // overlaps the data-gradient GEMMs (Megatron's default).
      const bool overlap_tp = ov.tp && sp;
      const double tp_f = overlap_tp ? tp_exposed_with_overlap_s(x.tp_fwd_ops, x.gemm_fwd_by_name, tp_sm_share)
                                     : x.tp_fwd;
      const double tp_b = overlap_tp ? tp_exposed_with_overlap_s(x.tp_bwd_ops, x.gemm_bwd_by_name, tp_sm_share)
                                     : x.tp_bwd + std::max(0.0, x.tp_wgrad - x.dgrad_bwd);
      const double ep_f = where == kWhereMoe ? ep_pass[0] : 0.0;
      const double ep_b = where == kWhereMoe ? ep_pass[1] : 0.0;
      const double cp_f = ov.cp ? std::max(0.0, cp_pass[0] - x.attn_core_fwd) : cp_pass[0];
      const double cp_b = ov.cp ? std::max(0.0, cp_pass[1] - x.attn_core_bwd) : cp_pass[1];
      it.fwd_cat[kCatTpComm] = tp_f;
      it.fwd_cat[kCatEpComm] = ep_f;
      it.fwd_cat[kCatCpComm] = cp_f;
      it.bwd_cat[kCatTpComm] = tp_b;
      it.bwd_cat[kCatEpComm] = ep_b;
      it.bwd_cat[kCatCpComm] = cp_b;
      it.fwd_s = cf + tp_f + ep_f + cp_f;
      double recompute = 0, rec_flops = 0;
      if (rec == 1) {
        recompute = it.fwd_s;  // the whole layer forward runs again, communication included
        rec_flops = x.fwd_flops;
      } else if (c.recompute.mode == RecomputeMode::Selective || c.recompute.mode == RecomputeMode::SelectiveOp) {
        recompute = x.rec_s;
        rec_flops = x.rec_flops;
      }
      it.bwd_cat[kCatRecompute] = recompute;
      it.bwd_s = cb + tp_b + ep_b + cp_b + recompute;
      it.fwd_flops = x.fwd_flops;
      it.bwd_flops = x.bwd_flops;
      it.recompute_flops = rec_flops;
      it.tp_fwd_s = x.tp_fwd;
      it.tp_bwd_s = x.tp_bwd + x.tp_wgrad;
      it.tp_all_gather_s = x.ag_s;
      it.tp_all_gather_calls = x.ag_calls;
      it.ep_s = ep_pass[0] + ep_pass[1];
      it.ep_calls = where == kWhereMoe ? 2 * ep_calls : 0;
      it.cp_s = cp_pass[0] + cp_pass[1];
      fill_params(it, where);
      if (where == kWhereDense ? m.num_dense_layers() == 0 : m.num_moe_layers() == 0) it = ItemCost{};
      layers_[kind][rec] = it;
    }
  }
  for (int where : {kWhereEmb, kWhereHead}) {
    const Acc& x = acc[where];
    ItemCost it;
    double cf = 0, cb = 0;
    for (int k = 0; k < kNumTimeCats; ++k) {
      it.fwd_cat[k] = x.fwd[k];
      it.bwd_cat[k] = x.bwd[k];
      cf += x.fwd[k];
      cb += x.bwd[k];
    }
    it.fwd_cat[kCatTpComm] = x.tp_fwd;
    it.bwd_cat[kCatTpComm] = x.tp_bwd;
    it.fwd_s = cf + x.tp_fwd;
    it.bwd_s = cb + x.tp_bwd;
    it.fwd_flops = x.fwd_flops;
    it.bwd_flops = x.bwd_flops;
    it.tp_fwd_s = x.tp_fwd;
    it.tp_bwd_s = x.tp_bwd;
    it.tp_all_gather_s = x.ag_s;
    it.tp_all_gather_calls = x.ag_calls;
    fill_params(it, where);
    (where == kWhereEmb ? embedding_ : head_) = it;
  }

  // Per-layer figures of the most common layer kind (T1 kernels).
  const int main_where = m.num_dense_layers() >= m.num_moe_layers() ? kWhereDense : kWhereMoe;
  const Acc& x = acc[main_where];
  const bool full = c.recompute.mode == RecomputeMode::Full;
  const ItemCost& main_item = layers_[main_where == kWhereDense ? 0 : 1][full ? 1 : 0];
  layer_times_.attn_core_fwd_s = x.attn_core_fwd;
  layer_times_.attn_core_bwd_s = x.attn_core_bwd;
  layer_times_.attn_block_s = x.part_s[kPartAttnCore] + x.part_s[kPartAttnOther];
  layer_times_.mlp_block_s = x.part_s[kPartMlp];
  layer_times_.mlp_block_flops = x.mlp_flops;
  layer_times_.layer_fwd_bwd_s = main_item.fwd_s + main_item.bwd_s;
}

}  // namespace sightline
