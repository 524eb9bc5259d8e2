#include "train/micro_batch_graph.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "train/lora_adapters.hpp"

namespace sightline {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = std::char_traits<char>::length(suffix);
  return s.size() > n && s.compare(s.size() - n, n, suffix) == 0;
}

bool is_embedding_op(const std::string& n) { return n == "emb" || n == "emb_position" || n == "emb_all_reduce"; }
bool is_head_op(const std::string& n) {
  return n == "final_layernorm" || n == "lm_head" || n == "loss_all_reduce" || n == "logits_all_gather" ||
         n == "cross_entropy" || n == "sampling";
}

LayerPart part_of(const std::string& n) {
  if (n == "attn_prefill" || n == "attn_decode") return kPartAttnCore;
  if (n == "input_layernorm" || starts_with(n, "attn_") || starts_with(n, "lora_q") || starts_with(n, "lora_k") ||
      starts_with(n, "lora_v") || starts_with(n, "lora_o"))
    return kPartAttnOther;
  if (n == "post_attention_layernorm" || starts_with(n, "mlp_") || starts_with(n, "moe_") || starts_with(n, "lora_up") ||
      starts_with(n, "lora_gate") || starts_with(n, "lora_down"))
    return kPartMlp;
  return kPartOther;
}

double gemm_bytes(int64_t m, int64_t n, int64_t k, double a, double w) {
  return static_cast<double>(m) * k * a + static_cast<double>(k) * n * w + static_cast<double>(m) * n * a;
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

// An FP8 GEMM reads its FP8 operands (1 byte) and writes a 16-bit output.
void use_fp8_bytes(Operator& op) {
  if (op.family == OpFamily::Gemm && op.compute_dtype == Dtype::FP8)
    op.bytes = static_cast<double>(op.m) * op.k + static_cast<double>(op.k) * op.n + 2.0 * op.m * op.n;
}

std::vector<Operator> backward_of(const GraphContext& g, const Operator& f) {
  return build_backward_step(StepOperators{{f}}, g.precision).ops;
}

// Eager PyTorch runs the reference Llama code's memory-bound operators
// (torchtitan with compile = false and norm_type = "rmsnorm") as chains of
// ATen's plain vectorized elementwise and reduction kernels, not as one fused
// kernel each. Such kernels stream at the elementwise class's bandwidth (the
// calibration's residual-add kernels), so each chain is priced as one
// Elementwise operator moving the chain's bytes, forward and backward, with
// the backward kernels autograd runs (derivatives.yaml). Bytes per element of
// the operator's input, 16-bit activations (a) and fp32 intermediates (4):
// - RMSNorm, `(x.float() * rsqrt(x.float().pow(2).mean(-1) + eps)).type_as(x) * w`.
//   Forward: to fp32 (a + 4), pow (4 + 4), mean (4), multiply by the row
//   factor (4 + 4), back to 16 bits (4 + a), times the weight (a + a).
//   Backward: grad·w (a + a), grad·y for dw (3a) and its row sum (a), to fp32
//   (a + 4), grad·r (4 + 4), grad·x (3·4) and its row sum (4), mean's
//   expansion (4), pow's `grad * 2 * x.pow(1)` (copy 4 + 4, scale 4 + 4,
//   multiply 3·4), the two gradients of x summed (3·4), back to 16 bits (4 + a).
// - RoPE as complex multiplication, per element of q and k: to fp32 (a + 4),
//   complex multiply (4 + 4), back (4 + a); backward: to fp32, multiply by
//   the conjugate, back: the same bytes.
// - `silu(a) * b`, per output element: silu (a + a), multiply (3a); backward:
//   grad·b and grad·silu(a) (3a each), silu's backward (3a).
struct EagerChain {
  double fused_bytes_per_el;  // what the fused operator of the graph moves per element
  double fwd_bytes_per_el;
  double bwd_bytes_per_el;
};

// The chain that replaces operator `name` of the graph when the stack runs it
// eagerly; false where the stack runs the graph's own kernel.
bool eager_chain(const ModelArch& m, const std::string& name, double a, EagerChain& out) {
  const bool is_norm = name == "input_layernorm" || name == "post_attention_layernorm" || name == "final_layernorm";
  if (is_norm && m.norm == "rmsnorm") {
    out = {2 * a, (a + 4) + 8 + 4 + 8 + (4 + a) + 2 * a,
           2 * a + 3 * a + a + (a + 4) + 8 + 12 + 4 + 4 + 8 + 8 + 12 + 12 + (4 + a)};
    return true;
  }
  if (name == "attn_rope") {
    out = {2 * a, (a + 4) + 8 + (4 + a), (a + 4) + 8 + (4 + a)};
    return true;
  }
  if (name == "mlp_act" && m.gated_mlp) {
    out = {3 * a, 2 * a + 3 * a, 3 * a + 3 * a + 3 * a};
    return true;
  }
  return false;
}

// ---- Tags --------------------------------------------------------------

// Walks the forward graph in order and tells where each operator sits; the
// first layer of a MoE model with dense first layers is dense.
class ItemTagger {
 public:
  explicit ItemTagger(const ModelArch& m) : m_(m) {}
  OpTag tag_of(const Operator& f) {
    OpTag tag;
    if (is_embedding_op(f.name)) tag.item = GraphItem::Embedding;
    else if (is_head_op(f.name)) tag.item = GraphItem::Head;
    else {
      if (f.name == "input_layernorm") ++block_;
      tag.item = !m_.is_moe() ? GraphItem::DenseLayer
                              : (m_.num_dense_layers() > 0 && block_ == 0 ? GraphItem::DenseLayer : GraphItem::MoeLayer);
    }
    const bool in_layer = tag.item == GraphItem::DenseLayer || tag.item == GraphItem::MoeLayer;
    tag.part = in_layer ? part_of(f.name) : kPartOther;
    return tag;
  }

 private:
  const ModelArch& m_;
  int block_ = -1;
};

// ---- Tensor-parallel communication ---------------------------------------

// The collectives of the tensor-parallel layout for forward collective `f`,
// with their backward conjugates.
void add_tp_collectives(const GraphContext& g, const Operator& f, OpTag tag, TrainingGraph& graph) {
  if (f.collective == CollectiveKind::SendRecv) return;  // pipeline transfers are simulated by the schedule
  OpTag ct = tag;
  ct.comm = TpCommRole::Activation;
  const double msg = f.message_bytes;
  const int tp = g.tp;
  const bool sp = g.sequence_parallel;
  if (f.name == "attn_all_reduce" || f.name == "mlp_all_reduce") {
    const std::string stem = f.name.substr(0, f.name.size() - std::string("_all_reduce").size());
    if (sp) {
      // Megatron sequence parallelism: all-gather into the block, reduce-scatter out of it;
      // conjugates in backward, plus the all-gather of the block input for the weight gradient.
      graph.forward.add(collective(stem + "_reduce_scatter", CollectiveKind::ReduceScatter, f.count, msg, tp, g.act_dtype), ct);
      graph.forward.add(collective(stem + "_all_gather", CollectiveKind::AllGather, f.count, msg, tp, g.act_dtype), ct);
      graph.backward.add(
          collective(stem + "_reduce_scatter_bwd", CollectiveKind::ReduceScatter, f.count, msg, tp, g.act_dtype), ct);
      graph.backward.add(collective(stem + "_all_gather_bwd", CollectiveKind::AllGather, f.count, msg, tp, g.act_dtype),
                         ct);
      OpTag wt = ct;
      wt.comm = TpCommRole::WeightGradGather;
      const LoraSpec& lo = g.config.lora;
      // With LoRA the gather is needed only when an adapter on the block's input projection trains.
      const bool input_trains =
          !g.lora || (stem == "attn" ? (lo.has_target("q") || lo.has_target("k") || lo.has_target("v"))
                                     : (lo.has_target("up") || lo.has_target("gate")));
      if (input_trains)
        graph.backward.add(
            collective(stem + "_all_gather_wgrad", CollectiveKind::AllGather, f.count, msg, tp, g.act_dtype), wt);
    } else {
      graph.forward.add(f, ct);
      Operator b = f;
      b.name = f.name + "_bwd";
      b.backward = true;
      graph.backward.add(b, ct);
    }
  } else if (f.name == "emb_all_reduce" && sp) {
    graph.forward.add(collective("emb_reduce_scatter", CollectiveKind::ReduceScatter, f.count, msg, tp, g.act_dtype), ct);
  } else {
    graph.forward.add(f, ct);  // the embedding's and the loss's all-reduces run in forward only
  }
}

// With sequence parallelism the LM head gathers the sequence-sharded hidden
// states first (and reduce-scatters their gradient in backward).
void add_sequence_parallel_head_comm(const GraphContext& g, OpTag tag, TrainingGraph& graph) {
  OpTag ct = tag;
  ct.comm = TpCommRole::Activation;
  graph.forward.add(collective("head_all_gather", CollectiveKind::AllGather, 1, g.hidden_msg_bytes, g.tp, g.act_dtype), ct);
  graph.backward.add(
      collective("head_reduce_scatter_bwd", CollectiveKind::ReduceScatter, 1, g.hidden_msg_bytes, g.tp, g.act_dtype), ct);
}

// ---- Forward -------------------------------------------------------------

struct TrainingOp {
  Operator op;
  bool fp8 = false;  // a GEMM that the FP8 recipe runs in FP8
  // The graph's operator this one stands for (an eager chain is renamed and
  // priced as elementwise kernels; recomputation rules still name the operator).
  std::string graph_name;
  OpFamily graph_family = OpFamily::Elementwise;
  double eager_bwd_bytes = 0;  // > 0: an eager chain, whose backward moves these bytes
};

// The forward operator as the training layout runs it on this GPU.
TrainingOp rewrite_for_training(const GraphContext& g, Operator f) {
  const ModelArch& m = g.model;
  const TrainConfig& c = g.config;
  const int tp = g.tp;
  const double a = g.act_bytes;
  // Sequence parallelism shards the norms and residual adds over tp.
  if (g.sequence_parallel && (f.name == "input_layernorm" || f.name == "post_attention_layernorm" || f.name == "add" ||
                              f.name == "final_layernorm")) {
    f.flops /= tp;
    f.bytes /= tp;
  }
  // Vocabulary-parallel cross-entropy works on the vocabulary shard.
  if (f.name == "cross_entropy") {
    f.flops /= tp;
    f.bytes /= tp;
  }
  // Expert parallelism: this GPU runs num_experts/ep experts on the tokens
  // routed to them from every EP rank (the busiest rank gets load_imbalance × the mean).
  if (g.ep > 1 &&
      (f.name == "moe_expert_up_proj" || f.name == "moe_expert_act" || f.name == "moe_expert_down_proj")) {
    const int64_t E = m.moe.num_experts;
    const double local_experts = static_cast<double>(E / g.ep);
    const int64_t tpe = static_cast<int64_t>(std::ceil(static_cast<double>(g.tokens) * m.moe.top_k * g.ep *
                                                        c.moe_load_imbalance / static_cast<double>(E)));
    const int64_t up = (m.gated_mlp ? 2 : 1) * g.dims.expert_intermediate;
    f.count = g.layers[item_index(GraphItem::MoeLayer)] * local_experts;
    if (f.name == "moe_expert_up_proj" || f.name == "moe_expert_down_proj") {
      f.m = tpe;
      f.flops = 2.0 * tpe * f.n * f.k;
      f.bytes = gemm_bytes(tpe, f.n, f.k, a, a);
    } else {
      const double rd = static_cast<double>(tpe) * up, wr = static_cast<double>(tpe) * g.dims.expert_intermediate;
      f.flops = 6.0 * std::max(rd, wr);
      f.bytes = (rd + wr) * a;
    }
  }
  TrainingOp out;
  out.graph_name = f.name;
  out.graph_family = f.family;
  EagerChain chain;
  if (c.elementwise == ElementwiseKernels::Eager && eager_chain(m, f.name, a, chain)) {
    const double elements = f.bytes / chain.fused_bytes_per_el;
    f.bytes = elements * chain.fwd_bytes_per_el;
    out.eager_bwd_bytes = elements * chain.bwd_bytes_per_el;
    f.family = OpFamily::Elementwise;
    if (f.name == "mlp_act") f.name = "mlp_silu_mul";  // two ATen kernels, not the fused activation class
  }
  out.fp8 = f.family == OpFamily::Gemm && fp8_selected(c.fp8, f.name);
  if (out.fp8) {
    f.compute_dtype = Dtype::FP8;
    use_fp8_bytes(f);
  }
  out.op = std::move(f);
  return out;
}

// QLoRA: the frozen quantized weight of a layer GEMM is dequantized before each use, forward and backward.
bool dequantizes_weight(const GraphContext& g, const Operator& f, OpTag tag) {
  return g.quantized_base && f.family == OpFamily::Gemm && tag.item != GraphItem::Head;
}

Operator dequant_op(const GraphContext& g, const Operator& f, const std::string& name) {
  const double wn = static_cast<double>(f.k) * f.n;
  return memory_op(name, f.count, wn * (g.base_weight_bytes + g.act_bytes), 2.0 * wn, g.act_dtype);
}

void add_forward(const GraphContext& g, const TrainingOp& t, OpTag tag, TrainingGraph& graph) {
  const Operator& f = t.op;
  // Transformer Engine casts the GEMM input to FP8 (and its transpose for the
  // weight gradient); current scaling first scans the input for its amax.
  if (t.fp8 && g.config.fp8_recipe == Fp8Recipe::Current)
    graph.forward.add(memory_op(f.name + "_fp8_amax", f.count, g.act_bytes * static_cast<double>(f.m) * f.k,
                                static_cast<double>(f.m) * f.k, g.act_dtype),
                      tag);
  if (t.fp8)
    graph.forward.add(memory_op(f.name + "_fp8_cast", f.count, 4.0 * static_cast<double>(f.m) * f.k,
                                2.0 * static_cast<double>(f.m) * f.k, g.act_dtype),
                      tag);
  if (dequantizes_weight(g, f, tag)) graph.forward.add(dequant_op(g, f, f.name + "_dequant"), tag);
  graph.forward.add(f, tag);
}

// ---- Backward ------------------------------------------------------------

void add_backward(const GraphContext& g, const TrainingOp& t, OpTag tag, TrainingGraph& graph) {
  const Operator& f = t.op;
  if (dequantizes_weight(g, f, tag)) {
    Operator d = dequant_op(g, f, f.name + "_dequant_bwd");
    graph.backward.add(d, tag);
  }
  if (f.family == OpFamily::Sampling) {
    // Softmax-cross-entropy gradient: read the fp32 probabilities, write the logits gradient.
    const double rows = static_cast<double>(g.tokens), vocab = static_cast<double>(g.dims.vocab);
    Operator grad = memory_op("cross_entropy_bwd", 1, rows * vocab * (4.0 + g.act_bytes), 2.0 * rows * vocab, Dtype::FP32);
    grad.backward = true;
    graph.backward.add(grad, tag);
    return;
  }
  for (Operator b : backward_of(g, f)) {
    if (t.eager_bwd_bytes > 0) b.bytes = t.eager_bwd_bytes;
    if (g.lora && is_weight_gradient(b.name)) continue;  // frozen base: no weight gradient
    if (g.lora && f.name == "emb") continue;             // frozen embedding: no gradient scatter
    if (t.fp8) use_fp8_bytes(b);
    graph.backward.add(b, tag);
  }
  // The incoming gradient is cast to FP8 once (and transposed for the weight
  // gradient), after an amax scan under current scaling.
  if (t.fp8 && g.config.fp8_recipe == Fp8Recipe::Current)
    graph.backward.add(memory_op(f.name + "_grad_fp8_amax", f.count, g.act_bytes * static_cast<double>(f.m) * f.n,
                                 static_cast<double>(f.m) * f.n, g.act_dtype),
                       tag);
  if (t.fp8)
    graph.backward.add(memory_op(f.name + "_grad_fp8_cast", f.count, 4.0 * static_cast<double>(f.m) * f.n,
                                 2.0 * static_cast<double>(f.m) * f.n, g.act_dtype),
                       tag);
}

// ---- Selective recomputation -----------------------------------------------

void add_recompute(const GraphContext& g, const TrainingOp& t, OpTag tag, TrainingGraph& graph) {
  if (tag.item != GraphItem::DenseLayer && tag.item != GraphItem::MoeLayer) return;
  const Operator& f = t.op;
  const std::string& name = t.graph_name;  // the rules name the graph's operators
  const RecomputeSpec& rc = g.config.recompute;
  TaggedOps& R = graph.recompute;
  if (rc.mode == RecomputeMode::Selective) {
    if (rc.core_attn && f.family == OpFamily::AttentionPrefill && g.config.attention == AttentionImpl::Standard)
      R.add(f, tag);
    if (rc.layernorm && (name == "input_layernorm" || name == "post_attention_layernorm")) R.add(f, tag);
    if (rc.mlp_act && (name == "mlp_act" || name == "moe_expert_act" || name == "moe_shared_act")) R.add(f, tag);
  } else if (rc.mode == RecomputeMode::SelectiveOp) {
    // torchtitan's op-level policy: memory-bound ops are recomputed, and
    // every second matmul of the layer (k, o, and the third MLP matmul).
    if (t.graph_family == OpFamily::Norm || t.graph_family == OpFamily::Rope || name == "mlp_act" ||
        name == "moe_expert_act" || name == "moe_shared_act" || name == "attn_repeat_kv")
      R.add(f, tag);
    auto partial_gemm = [&](const char* op_name, int64_t n) {
      Operator op = make_gemm_operator(op_name, f.count, f.m, n, f.k, g.act_bytes, g.act_bytes, f.compute_dtype);
      use_fp8_bytes(op);
      return op;
    };
    if (f.name == "attn_pre_proj") R.add(partial_gemm("attn_k_proj_recompute", g.kv_local), tag);
    if (f.name == "attn_post_proj") R.add(f, tag);
    if (f.name == "mlp_up_proj" && g.model.gated_mlp)
      R.add(partial_gemm("mlp_up_half_recompute", g.dims.intermediate), tag);
    if (f.name == "mlp_down_proj" && !g.model.gated_mlp) R.add(f, tag);
  }
}

}  // namespace

bool is_weight_gradient(const std::string& op_name) { return ends_with(op_name, "_wgrad"); }
bool is_data_gradient(const std::string& op_name) { return ends_with(op_name, "_dgrad"); }

GraphContext make_graph_context(const ModelArch& m, const Precision& precision, const TrainConfig& c) {
  const TrainParallelism& par = c.parallelism;
  GraphContext g{m, c, precision};
  g.tp = par.tp;
  g.cp = par.cp;
  g.ep = par.ep;
  g.sequence_parallel = par.sequence_parallel && par.tp > 1;
  g.act_dtype = precision.activations;
  g.act_bytes = dtype_bytes(g.act_dtype);
  g.dims = shard_dims(m, par.tp);
  g.seq_local = c.batch.seq_len / par.cp;
  g.tokens = c.batch.micro_batch_size * g.seq_local;
  g.layers[item_index(GraphItem::DenseLayer)] = static_cast<double>(m.num_dense_layers());
  g.layers[item_index(GraphItem::MoeLayer)] = static_cast<double>(m.num_moe_layers());
  g.lora = c.lora.enabled;
  g.quantized_base = g.lora && c.lora.base_dtype != Dtype::BF16 && c.lora.base_dtype != Dtype::FP16;
  g.base_weight_bytes =
      g.lora ? dtype_bytes(c.lora.base_dtype, is_integer_weight_only(c.lora.base_dtype) ? c.lora.quant_group_size : 0)
             : dtype_bytes(precision.weights);
  g.hidden_msg_bytes = static_cast<double>(g.tokens) * m.hidden_size * g.act_bytes;
  g.q_local = static_cast<int64_t>(g.dims.heads) * m.head_dim;
  g.kv_local = static_cast<int64_t>(g.dims.kv_heads) * m.head_dim;
  return g;
}

// Eager grouped-query attention copies K and V out to every query head
// (`repeat_kv`: expand then reshape, which materializes) before calling SDPA;
// autograd sums the copies back (a reduction reading as much). The fused
// stacks hand the grouped K and V to the attention kernel as they are.
void add_eager_repeat_kv(const GraphContext& g, const TrainingOp& rope, OpTag tag, TrainingGraph& graph) {
  if (g.q_local <= g.kv_local) return;
  TrainingOp t;
  t.graph_name = "attn_repeat_kv";
  const double tokens = static_cast<double>(g.tokens);
  const double bytes = 2.0 * tokens * static_cast<double>(g.kv_local + g.q_local) * g.act_bytes;
  t.op = memory_op("attn_repeat_kv", rope.op.count, bytes, 0.0, g.act_dtype);
  t.eager_bwd_bytes = bytes;
  add_forward(g, t, tag, graph);
  add_backward(g, t, tag, graph);
  add_recompute(g, t, tag, graph);
}

TrainingGraph build_training_graph(const GraphContext& g) {
  const TrainConfig& c = g.config;
  // The model's forward graph for one micro-batch on one GPU. Context
  // parallelism: each GPU holds seq/cp tokens of each sequence and, with
  // load-balanced causal chunks, attends over as many pairs as seq²/(2·cp);
  // `cached_tokens` is set so that the causal pair count matches.
  BatchShape batch;
  const int64_t cached = g.cp > 1 ? c.batch.seq_len * (g.cp - 1) / (2 * g.cp) : 0;
  batch.seqs.assign(static_cast<size_t>(c.batch.micro_batch_size), SeqChunk{g.seq_local, cached});
  StepOptions opt;
  opt.attention = c.attention;
  opt.training = true;
  ParallelLayout layout;
  layout.tp = g.tp;
  layout.pp = 1;
  const StepOperators forward_graph = build_forward_step(g.model, g.precision, layout, batch, opt);

  TrainingGraph graph;
  ItemTagger tagger(g.model);
  for (const Operator& f0 : forward_graph.ops) {
    const OpTag tag = tagger.tag_of(f0);
    if (f0.family == OpFamily::Collective) {
      add_tp_collectives(g, f0, tag, graph);
      continue;
    }
    if (g.sequence_parallel && f0.name == "lm_head") add_sequence_parallel_head_comm(g, tag, graph);
    const TrainingOp t = rewrite_for_training(g, f0);
    add_forward(g, t, tag, graph);
    add_backward(g, t, tag, graph);
    add_lora_adapter_ops(g, t.op, tag, graph);
    add_recompute(g, t, tag, graph);
    if (t.graph_name == "attn_rope" && c.elementwise == ElementwiseKernels::Eager) add_eager_repeat_kv(g, t, tag, graph);
  }
  return graph;
}

}  // namespace sightline
