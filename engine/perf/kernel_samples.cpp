#include "perf/kernel_samples.hpp"

#include <map>
#include <sstream>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "model/moe_routing.hpp"

namespace sightline {

namespace {

ModelArch synthetic_model(int heads, int kv_heads, int64_t head_dim, int64_t hidden, int64_t intermediate,
                          int64_t vocab, bool gated) {
  ModelArch m;
  m.id = "measured-shape";
  m.num_layers = 1;
  m.hidden_size = hidden;
  m.num_heads = heads;
  m.num_kv_heads = kv_heads;
  m.head_dim = head_dim;
  m.intermediate_size = intermediate;
  m.vocab_size = vocab;
  m.max_context = 1 << 30;
  m.gated_mlp = gated;
  m.activation = gated ? "silu" : "gelu";
  return m;
}

const Operator* find_op(const StepOperators& step, const std::string& name) {
  for (const Operator& op : step.ops)
    if (op.name == name) return &op;
  return nullptr;
}

// FlashAttention's FLOP convention: forward 4·s²·d·h per sequence, halved when
// causal; backward 2.5× forward.
double flash_convention_flops(int64_t batch, int64_t seq, int heads, int64_t head_dim, bool causal,
                              const std::string& pass) {
  double fwd = 4.0 * batch * static_cast<double>(seq) * seq * head_dim * heads * (causal ? 0.5 : 1.0);
  if (pass == "fwd") return fwd;
  if (pass == "bwd") return 2.5 * fwd;
  return 3.5 * fwd;
}

// Rows without a workload name are grouped by the shape they hold fixed (the
// (N, K) of a GEMM, the heads of an attention, the hidden size of a memory
// kernel), so leave-one-group-out predicts shapes the fit has not seen.
std::string shape_group(const std::string& kind, std::map<std::string, std::string>& row) {
  if (kind == "gemm") return "gemm n" + row["n"] + " k" + row["k"];
  if (kind == "attention") return "attention h" + row["heads"] + " d" + row["head_dim"];
  if (kind == "decode_attention") return "decode_attention kv" + row["seq"];
  return kind + " m" + row["m"];
}

}  // namespace

Operator decode_attention_op(int64_t batch, int64_t kv_len, int heads, int kv_heads, int64_t head_dim, Dtype dtype) {
  const ModelArch m = synthetic_model(heads, kv_heads, head_dim, heads * head_dim, 4 * heads * head_dim, 1, true);
  Precision p;
  p.activations = p.weights = p.kv_cache = dtype;
  BatchShape b;
  b.seqs.assign(static_cast<size_t>(batch), SeqChunk{1, kv_len - 1});
  const StepOperators step = build_forward_step(m, p, ParallelLayout{}, b, StepOptions{});
  Operator op = *find_op(step, "attn_decode");
  op.count = 1;
  return op;
}

std::vector<Operator> attention_ops(int64_t batch, int64_t seq, int heads, int64_t head_dim, const std::string& pass,
                                    AttentionImpl impl, Dtype dtype) {
  const ModelArch m = synthetic_model(heads, heads, head_dim, heads * head_dim, 4 * heads * head_dim, 1, true);
  Precision p;
  p.activations = p.weights = p.kv_cache = dtype;
  BatchShape b;
  b.seqs.assign(static_cast<size_t>(batch), SeqChunk{seq, 0});
  StepOptions options;
  options.attention = impl;
  options.training = true;
  const StepOperators fwd = build_forward_step(m, p, ParallelLayout{}, b, options);
  const Operator* f = find_op(fwd, "attn_prefill");
  std::vector<Operator> out;
  StepOperators only_attention;
  only_attention.ops.push_back(*f);
  const StepOperators bwd = build_backward_step(only_attention, p);
  if (pass == "fwd" || pass == "fwd_bwd") out.push_back(*f);
  if (pass == "bwd" || pass == "fwd_bwd") out.push_back(bwd.ops.at(0));
  for (Operator& op : out) op.count = 1;
  return out;
}

std::vector<KernelSample> vidur_row_samples(const VidurShape& v, const std::vector<std::pair<std::string, double>>& medians_ms,
                                            const std::string& model, const std::string& source) {
  const ModelArch m = synthetic_model(v.heads, v.kv_heads, v.hidden / v.heads, v.hidden, v.intermediate, v.vocab, v.gated);
  Precision p;  // Vidur profiles in fp16/bf16
  BatchShape b;
  b.seqs.push_back(SeqChunk{v.tokens, 0});
  ParallelLayout layout;
  layout.tp = v.tp;
  const StepOperators step = build_forward_step(m, p, layout, b, StepOptions{});
  std::vector<KernelSample> out;
  for (const auto& [column, ms] : medians_ms) {
    const Operator* op = find_op(step, column);
    if (!op || !(ms > 0)) continue;
    KernelSample s;
    s.ops.push_back(*op);
    s.ops.back().count = 1;
    s.time_s = ms * 1e-3;
    s.model = model;
    s.source = source;
    s.label = column;
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<KernelSample> read_kernel_csv(const std::string& csv_text, const std::string& gpu_id,
                                          const std::string& source) {
  const CsvTable table(csv_text, source);
  std::vector<KernelSample> out;
  for (const CsvTable::Row& csv_row : table.rows()) {
    const std::string where = table.row_position(csv_row).describe();
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < table.header().size() && i < csv_row.cells.size(); ++i)
      row[table.header()[i]] = csv_row.cells[i].text;
    auto text = [&](const char* key) { return table.text(csv_row, key); };
    auto at = [&](const char* key) { return table.position(csv_row, key).describe(); };
    // An empty or absent cell is 0 (not given); anything else is a whole
    // finite decimal number, bounded so that the casts to integers below are defined.
    auto num = [&](const char* key) -> double {
      if (text(key).empty()) return 0;
      return table.number(csv_row, key, -1e15, 1e15);
    };
    auto heads_of = [&](const char* key) -> int {  // an int, so bounded tighter
      return text(key).empty() ? 0 : static_cast<int>(table.number(csv_row, key, -1e9, 1e9));
    };
    if (!gpu_id.empty() && text("gpu") != gpu_id) continue;
    const std::string kind = text("kind");
    std::string dtype_text = text("dtype").empty() ? "bf16" : text("dtype");
    if (!is_dtype_name(dtype_text)) fail(error_code::kInvalidValue, at("dtype"), "unknown dtype '" + dtype_text + "'");
    const Dtype dtype = parse_dtype(dtype_text);
    KernelSample s;
    s.model = text("model");
    s.source = text("source");
    s.label = kind;
    double convention_flops = 0;
    if (kind == "gemm") {
      const int64_t m = static_cast<int64_t>(num("m")), n = static_cast<int64_t>(num("n")), k = static_cast<int64_t>(num("k"));
      if (m <= 0 || n <= 0 || k <= 0) fail(error_code::kRange, where, "gemm rows need positive m, n, k");
      const double b = dtype_bytes(dtype);
      s.ops.push_back(make_gemm_operator("gemm", 1, m, n, k, b, b, dtype));
      convention_flops = s.ops[0].flops;
    } else if (kind == "weight_only_grouped_gemm") {
      // A grouped GEMM of `batch` experts whose weights, stored in `dtype`, a
      // weight-only kernel dequantizes into bf16 activations (triton_kernels'
      // matmul_ogs, bf16 x mxfp4 on Hopper): `m` rows in all, each routed to
      // an expert drawn uniformly, as the step builder prices routed experts.
      const int64_t rows = static_cast<int64_t>(num("m")), n = static_cast<int64_t>(num("n")), k = static_cast<int64_t>(num("k"));
      const int experts = static_cast<int>(num("batch"));
      if (rows <= 0 || n <= 0 || k <= 0 || experts <= 0)
        fail(error_code::kRange, where, "weight_only_grouped_gemm rows need positive m (rows in all), n, k and batch (experts)");
      const MoeLoad load = expected_moe_load(experts, 1, rows, MoeRouting{});
      s.ops.push_back(make_routed_expert_gemm("moe_expert_up_proj", load, n, k, 2.0, Dtype::BF16, dtype));
      convention_flops = s.ops[0].flops;
    } else if (kind == "attention") {
      const std::string pass = text("pass").empty() ? "fwd" : text("pass");
      if (pass != "fwd" && pass != "bwd" && pass != "fwd_bwd")
        fail(error_code::kInvalidValue, at("pass"), "pass must be fwd, bwd or fwd_bwd");
      const AttentionImpl impl = text("impl") == "standard" ? AttentionImpl::Standard : AttentionImpl::Flash;
      const int64_t batch = static_cast<int64_t>(num("batch")), seq = static_cast<int64_t>(num("seq"));
      const int heads = heads_of("heads");
      const int64_t head_dim = static_cast<int64_t>(num("head_dim"));
      if (batch <= 0 || seq <= 0 || heads <= 0 || head_dim <= 0)
        fail(error_code::kRange, where, "attention rows need positive batch, seq, heads, head_dim");
      s.ops = attention_ops(batch, seq, heads, head_dim, pass, impl, dtype);
      s.label = std::string(impl == AttentionImpl::Standard ? "standard_" : "flash_") + pass;
      convention_flops = flash_convention_flops(batch, seq, heads, head_dim, impl == AttentionImpl::Flash, pass);
    } else if (kind == "decode_attention") {
      // One query token per sequence against a KV cache of `seq` tokens (GQA heads / kv_heads).
      const int64_t batch = static_cast<int64_t>(num("batch")), seq = static_cast<int64_t>(num("seq"));
      const int heads = heads_of("heads");
      const int kv_heads = heads_of("kv_heads") > 0 ? heads_of("kv_heads") : heads;
      const int64_t head_dim = static_cast<int64_t>(num("head_dim"));
      if (batch <= 0 || seq <= 0 || heads <= 0 || head_dim <= 0 || heads % kv_heads != 0)
        fail(error_code::kRange, where, "decode_attention rows need positive batch, seq, heads, head_dim and kv_heads dividing heads");
      s.ops.push_back(decode_attention_op(batch, seq, heads, kv_heads, head_dim, dtype));
      s.label = "decode_attention";
    } else if (kind == "launch") {
      // An almost empty kernel: `m` launches per timing (graph nodes or eager launches).
      Operator op = make_memory_operator("launch", OpFamily::Host, 1, 0, 0, dtype);
      op.m = static_cast<int64_t>(num("m"));
      if (op.m <= 0) fail(error_code::kRange, at("m"), "launch rows need the number of launches in m");
      s.ops.push_back(op);
    } else if (kind == "copy" || kind == "norm" || kind == "activation" || kind == "residual_add" || kind == "rope") {
      Operator op;
      op.name = kind == "copy" ? "copy" : kind == "activation" ? "mlp_act" : kind == "residual_add" ? "add"
                                          : kind == "rope" ? "attn_rope" : "input_layernorm";
      op.family = kind == "norm" ? OpFamily::Norm : kind == "rope" ? OpFamily::Rope : OpFamily::Elementwise;
      op.bytes = num("bytes");
      op.compute_dtype = dtype;
      if (op.bytes <= 0) fail(error_code::kRange, at("bytes"), "memory-kernel rows need bytes > 0");
      s.ops.push_back(op);
    } else {
      fail(error_code::kInvalidValue, at("kind"),
           "kind must be gemm, weight_only_grouped_gemm, attention, decode_attention, copy, norm, activation, "
           "residual_add, rope or launch; got '" +
               kind + "'");
    }
    s.mode = text("mode");
    if (!s.mode.empty() && s.mode != "graph" && s.mode != "eager" && s.mode != "sync")
      fail(error_code::kInvalidValue, at("mode"), "mode must be graph, eager or sync; got '" + s.mode + "'");
    if (s.model.empty()) s.model = shape_group(kind, row);
    if (num("time_us") > 0) s.time_s = num("time_us") * 1e-6;
    else if (num("tflops") > 0 && convention_flops > 0) s.time_s = convention_flops / (num("tflops") * 1e12);
    else if (num("gbps") > 0 && !s.ops.empty()) s.time_s = s.ops[0].bytes / (num("gbps") * 1e9);
    else fail(error_code::kMissingKey, at("time_us"), "each row needs time_us, tflops or gbps");
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace sightline
