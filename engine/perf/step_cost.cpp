#include "perf/step_cost.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>

#include "perf/power.hpp"

namespace sightline {

StepCost price_step(const StepOperators& step, const KernelCostModel& model, const CostContext& ctx) {
  StepCost out;
  out.parts.reserve(step.ops.size() + 1);  // + the host overhead part CostSetup::price may add
  price_step_into(step, model, ctx, out);
  return out;
}

namespace {

bool same_bits(double a, double b) {
  uint64_t x = 0, y = 0;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  return x == y;
}

OpStepFigures step_figures(const Operator& op, const OpCost& c, const CostContext& ctx) {
  OpStepFigures f;
  f.time_s = c.time_s * op.count;
  f.time_low_s = c.time_low_s * op.count;
  f.time_high_s = c.time_high_s * op.count;
  f.flops = op.flops * op.count;
  f.bytes = op.bytes * op.count;
  if (op.family != OpFamily::Collective && ctx.gpu) {
    const double peak = dense_peak_tflops(*ctx.gpu, op.compute_dtype);
    if (peak > 0) f.compute_peak_s = f.flops / (peak * 1e12);
    f.memory_peak_s = f.bytes / (ctx.gpu->hbm_bandwidth_GBps * 1e9);
  }
  return f;
}

// The operator's cost and figures, from the memo when the operator at position
// i is the one priced there last time.
const OpCost& cost_at(const Operator& op, size_t i, const KernelCostModel& model, const CostContext& ctx,
                      OpCostMemo& memo) {
  if (i < memo.ops.size() && same_operator(op, memo.ops[i])) {
    ++memo.reused;
    return memo.costs[i];
  }
  ++memo.priced;
  if (i >= memo.ops.size()) {
    memo.ops.resize(i + 1);
    memo.costs.resize(i + 1);
    memo.figures.resize(i + 1);
  }
  memo.costs[i] = model.cost(op, ctx);
  memo.ops[i] = op;
  memo.figures[i] = step_figures(op, memo.costs[i], ctx);
  return memo.costs[i];
}

// An operator's figures into its step's sums (in operator order: the sums
// are the same bit for bit whichever parts were rewritten).
void add_figures(StepSums& s, const Operator& op, const OpStepFigures& f) {
  s.time_s += f.time_s;
  s.time_low_s += f.time_low_s;
  s.time_high_s += f.time_high_s;
  if (op.family != OpFamily::Collective) {
    s.flops += f.flops;
    s.bytes += f.bytes;
    s.compute_peak_s += f.compute_peak_s;
    s.memory_peak_s += f.memory_peak_s;
  }
  s.kernels += op.count;
  s.has_prefill = s.has_prefill || op.family == OpFamily::AttentionPrefill;
}

void write_sums(const StepSums& s, StepCost& out) {
  out.time_s = out.gpu_time_s = s.time_s;
  out.time_low_s = s.time_low_s;
  out.time_high_s = s.time_high_s;
  out.flops = s.flops;
  out.bytes = s.bytes;
  out.compute_peak_s = s.compute_peak_s;
  out.memory_peak_s = s.memory_peak_s;
  out.kernels = s.kernels;
  out.has_prefill = s.has_prefill;
}

// The first operator a core-only rebuild rewrote (its count of operators
// when none).
size_t first_rebuilt(const StepReuse& reuse) {
  const auto it = std::find(reuse.rebuilt.begin(), reuse.rebuilt.end(), uint8_t{1});
  return static_cast<size_t>(it - reuse.rebuilt.begin());
}

}  // namespace

bool same_operator(const Operator& a, const Operator& b) {
  // A field added to Operator must be compared here (else a memo could hand
  // an operator another's cost): the size check below (on 64-bit builds, whose
  // layout it names) fails until it is.
#if UINTPTR_MAX == 0xFFFFFFFFFFFFFFFFu
  static_assert(sizeof(Operator) == sizeof(std::string) + 208, "Operator changed: compare its new fields in same_operator");
#endif
  return a.family == b.family && a.role == b.role && same_bits(a.count, b.count) && same_bits(a.flops, b.flops) &&
         same_bits(a.bytes, b.bytes) && same_bits(a.dequant_ops, b.dequant_ops) && a.compute_dtype == b.compute_dtype &&
         a.weight_dtype == b.weight_dtype &&
         a.m == b.m && a.n == b.n && a.k == b.k && same_bits(a.groups, b.groups) &&
         a.group_row_trials == b.group_row_trials && same_bits(a.group_row_p, b.group_row_p) &&
         same_bits(a.weight_bytes, b.weight_bytes) && same_bits(a.serial_bytes, b.serial_bytes) &&
         a.single_pass == b.single_pass && a.rows == b.rows && a.q_tokens == b.q_tokens && a.kv_tokens == b.kv_tokens &&
         a.seqs == b.seqs && a.heads == b.heads && a.kv_heads == b.kv_heads && a.qk_dim == b.qk_dim &&
         a.v_dim == b.v_dim && a.causal == b.causal && a.attention_impl == b.attention_impl &&
         a.backward == b.backward && a.collective == b.collective && a.group_size == b.group_size &&
         same_bits(a.message_bytes, b.message_bytes) && same_operator_name(a.name, b.name);
}

namespace {

// One operator's part and its figures into the step's sums, priced or taken
// from the memo.
void price_operator(const Operator& op, size_t i, bool from_memo, const KernelCostModel& model,
                    const CostContext& ctx, bool labels, OpCostMemo* memo, PricedOperator& p, StepSums& sums) {
  OpCost own;
  OpStepFigures own_figures;
  const OpCost* c = &own;
  const OpStepFigures* f = &own_figures;
  if (memo) {
    if (from_memo) {
      ++memo->reused;
      c = &memo->costs[i];
    } else {
      c = &cost_at(op, i, model, ctx, *memo);
    }
    f = &memo->figures[i];
  } else {
    own = model.cost(op, ctx);
    own_figures = step_figures(op, own, ctx);
  }
  if (labels) p.name = op.name;
  p.family = op.family;
  p.role = op.role;
  p.count = op.count;
  p.time_s = f->time_s;
  p.time_low_s = f->time_low_s;
  p.time_high_s = f->time_high_s;
  p.flops = f->flops;
  p.bytes = f->bytes;
  if (labels) p.bound = c->bound;
  add_figures(sums, op, *f);
}

}  // namespace

void price_step_into(const StepOperators& step, const KernelCostModel& model, const CostContext& ctx, StepCost& out,
                     bool labels, OpCostMemo* memo) {
  StepSums sums;
  const StepReuse& reuse = step.reuse;
  const bool left_as_priced = memo && reuse.cores_only && reuse.over != 0 && reuse.over == memo->build;
  const size_t known = left_as_priced ? std::min(reuse.rebuilt.size(), memo->ops.size()) : 0;
  // The parts of the operators the rebuild left already hold their figures
  // when `out` was written, without labels, for the build rebuilt over.
  const bool parts_kept = left_as_priced && !labels && out.parts_build == reuse.over &&
                          out.parts.size() >= step.ops.size();
  const size_t n = step.ops.size();
  // The first operator this rebuild rewrote (SIZE_MAX: not a rebuild over the
  // memo's build); the memo's sums before it are this list's when it kept
  // them at the same place (OpCostMemo::resume_at).
  const size_t resume = left_as_priced ? first_rebuilt(reuse) : SIZE_MAX;
  size_t from = 0;
  if (parts_kept && resume != 0 && resume == memo->resume_at && resume <= known && resume <= n) {
    sums = memo->resume_sums;
    from = resume;
  }
  out.parts.resize(n);
  int64_t kept = static_cast<int64_t>(from);  // operators before `from` were left as priced
  auto walk = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const Operator& op = step.ops[i];
      const bool left = i < known && !reuse.rebuilt[i];
      if (left && parts_kept) {
        add_figures(sums, op, memo->figures[i]);
        ++kept;
        continue;
      }
      price_operator(op, i, left, model, ctx, labels, memo, out.parts[i], sums);
    }
  };
  walk(from, std::min(resume, n));
  if (resume < n) {
    memo->resume_at = resume;
    memo->resume_sums = sums;
    walk(std::max(from, resume), n);
  }
  if (memo) {
    memo->reused += kept;
    if (resume == SIZE_MAX) memo->resume_at = 0;  // a whole build: where its cores are is not known here
    memo->build = reuse.build;
  }
  write_sums(sums, out);
  out.parts_build = memo && !labels ? reuse.build : 0;
}

void BreakdownAccumulator::add(const StepCost& step) {
  for (const PricedOperator& p : step.parts) {
    auto it = std::find_if(totals_.begin(), totals_.end(), [&](const PricedOperator& t) { return t.name == p.name; });
    if (it == totals_.end()) {
      totals_.push_back(p);
      continue;
    }
    it->time_s += p.time_s;
    it->time_low_s += p.time_low_s;
    it->time_high_s += p.time_high_s;
    it->flops += p.flops;
    it->bytes += p.bytes;
    it->count += p.count;
    if (p.bound != it->bound) it->bound = "mixed";
  }
}

json BreakdownAccumulator::to_json(double divide_by) const {
  json arr = json::array();
  const double d = divide_by > 0 ? divide_by : 1;
  for (const PricedOperator& t : totals_) {
    const double time = t.time_s / d;
    arr.push_back({{"name", t.name},
                   {"family", op_family_name(t.family)},
                   {"count", t.count / d},
                   {"time_us", time * 1e6},
                   {"time_low_us", t.time_low_s / d * 1e6},
                   {"time_high_us", t.time_high_s / d * 1e6},
                   {"flops", t.flops / d},
                   {"bytes", t.bytes / d},
                   {"achieved_tflops", time > 0 ? t.flops / d / time / 1e12 : 0.0},
                   {"achieved_GBps", time > 0 ? t.bytes / d / time / 1e9 : 0.0},
                   {"bound", t.bound}});
  }
  return arr;
}

json BreakdownAccumulator::families_json(double divide_by) const {
  const double d = divide_by > 0 ? divide_by : 1;
  std::vector<std::string> order;
  std::map<std::string, std::array<double, 3>> sums;  // time, flops, bytes
  for (const PricedOperator& t : totals_) {
    const std::string f = op_family_name(t.family);
    if (!sums.count(f)) order.push_back(f);
    auto& v = sums[f];
    v[0] += t.time_s / d;
    v[1] += t.flops / d;
    v[2] += t.bytes / d;
  }
  json arr = json::array();
  for (const std::string& f : order)
    arr.push_back({{"family", f}, {"time_us", sums[f][0] * 1e6}, {"flops", sums[f][1]}, {"bytes", sums[f][2]}});
  return arr;
}

}  // namespace sightline
