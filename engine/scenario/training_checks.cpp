// The training configuration's cross-field checks against the model and
// the hardware (training_checks.hpp).
#include "scenario/training_checks.hpp"

#include <string>

#include "core/error.hpp"
#include "scenario/checks.hpp"

namespace sightline {

namespace {

constexpr int64_t kMaxScheduleOps = int64_t{1} << 21;  // forward + backward ops of one pipeline schedule

std::string decimal(int64_t v) { return std::to_string(v); }

int axis_stride(const TrainParallelism& p, const std::string& axis) {
  int stride = 1;
  for (const auto& a : p.placement) {
    if (a == axis) return stride;
    stride *= a == "tp" ? p.tp : a == "cp" ? p.cp : a == "dp" ? p.dp : p.pp;
  }
  return stride;
}

}  // namespace

int check_train_parallelism(const TrainConfig& c, const ModelArch& m, const HardwareSpec& hw, const std::string& par_path,
                            const std::string& schedule_path) {
  const TrainParallelism& p = c.parallelism;
  auto ppath = [&](const char* k) { return pointer_append(par_path, k); };
  check_tensor_parallel(m, p.tp, ppath("tp"));
  if (p.world() != hw.total_gpus())
    fail(error_code::kConstraint, ppath("dp"),
         "dp × tp × pp × cp = " + decimal(p.dp) + " × " + decimal(p.tp) + " × " + decimal(p.pp) + " × " + decimal(p.cp) + " = " +
             decimal(p.world()) + " GPUs, but the hardware has " + decimal(hw.total_gpus()) +
             " (gpus_per_node × nodes); they must match");
  {
    const int stride = axis_stride(p, "tp");
    const int span = stride * p.tp;
    if (p.tp > 1 && (span > hw.gpus_per_node || hw.gpus_per_node % span != 0))
      fail(error_code::kConstraint, ppath("tp"),
           "the tp group (" + decimal(p.tp) + " GPUs, rank stride " + decimal(stride) +
               ") must sit inside one node of " + decimal(hw.gpus_per_node) +
               " GPUs; lower tp or put tp first in placement");
  }
  const int chunks = p.pp * p.virtual_stages;
  if (!p.stage_layers.empty()) {
    if (static_cast<int>(p.stage_layers.size()) != chunks)
      fail(error_code::kConstraint, ppath("stage_layers"),
           "stage_layers has " + decimal(static_cast<int>(p.stage_layers.size())) + " entries; it needs one per model chunk: pp × virtual_stages = " +
               decimal(chunks));
    int sum = 0;
    for (int n : p.stage_layers) sum += n;
    if (sum != m.num_layers)
      fail(error_code::kConstraint, ppath("stage_layers"),
           "stage_layers sum to " + decimal(sum) + " but the model has " + decimal(m.num_layers) + " layers");
  } else if (m.num_layers % chunks != 0) {
    fail(error_code::kConstraint, p.virtual_stages > 1 ? ppath("virtual_stages") : ppath("pp"),
         "pp × virtual_stages = " + decimal(chunks) + " must divide num_layers (" + decimal(m.num_layers) +
             "); give stage_layers for an uneven layout");
  }
  if (p.virtual_stages > 1 && c.schedule != PipelineSchedule::Interleaved)
    fail(error_code::kConstraint, ppath("virtual_stages"),
         "virtual_stages > 1 needs schedule \"interleaved_1f1b\"");
  if (c.schedule == PipelineSchedule::Interleaved && (p.virtual_stages < 2 || p.pp < 2))
    fail(error_code::kConstraint, schedule_path,
         "interleaved_1f1b needs pp ≥ 2 and virtual_stages ≥ 2 (model chunks per pipeline rank)");
  if (p.sequence_parallel && p.tp < 2)
    fail(error_code::kConstraint, ppath("sequence_parallel"), "sequence_parallel shards over tp and needs tp ≥ 2");
  if (p.ep > 1) {
    if (!m.is_moe())
      fail(error_code::kConstraint, ppath("ep"), "ep > 1 needs a mixture-of-experts model; '" + m.id + "' is dense");
    if (m.moe.num_experts % p.ep != 0)
      fail(error_code::kConstraint, ppath("ep"),
           "ep (" + decimal(p.ep) + ") must divide num_experts (" + decimal(m.moe.num_experts) + ")");
    if (p.dp % p.ep != 0)
      fail(error_code::kConstraint, ppath("ep"),
           "ep (" + decimal(p.ep) + ") must divide dp (" + decimal(p.dp) + "): experts are spread over data-parallel ranks");
  }
  return chunks;
}

// The batch's checks against the model and the parallelism, and its derived
// size: global_batch_size or gradient_accumulation, from the other
// (`has_gbs` / `has_ga`: which of the two the scenario gave).
void check_train_batch(TrainConfig& c, const ModelArch& m, const std::string& par_path, const std::string& batch_path,
                       bool has_gbs, bool has_ga, int chunks) {
  TrainBatch& b = c.batch;
  const TrainParallelism& p = c.parallelism;
  auto ppath = [&](const char* k) { return pointer_append(par_path, k); };
  auto bpath = [&](const char* k) { return pointer_append(batch_path, k); };
  if (b.seq_len > m.max_context)
    fail(error_code::kConstraint, bpath("seq_len"),
         "seq_len " + decimal(b.seq_len) + " exceeds the model's max_context (" + decimal(m.max_context) +
             "); for context extension override the model's max_context (e.g. {\"preset\": ..., \"max_context\": " +
             decimal(b.seq_len) + "})");
  if (p.cp > 1 && b.seq_len % (2 * p.cp) != 0)
    fail(error_code::kConstraint, ppath("cp"),
         "seq_len (" + decimal(b.seq_len) + ") must be divisible by 2 × cp = " + decimal(2 * p.cp) +
             " (load-balanced causal ring attention splits each sequence into 2·cp chunks)");
  if (p.sequence_parallel && (b.seq_len / p.cp) % p.tp != 0)
    fail(error_code::kConstraint, bpath("seq_len"),
         "with sequence_parallel the tokens of a sequence on one GPU (" + decimal(b.seq_len / p.cp) +
             ") must be divisible by tp (" + decimal(p.tp) + ")");
  const int64_t per_step = static_cast<int64_t>(p.dp) * b.micro_batch_size;
  if (has_gbs) {
    if (b.global_batch_size % per_step != 0)
      fail(error_code::kConstraint, bpath("global_batch_size"),
           "global_batch_size (" + decimal(b.global_batch_size) + ") must be a multiple of dp × micro_batch_size = " +
               decimal(per_step));
    const int64_t ga = b.global_batch_size / per_step;
    if (has_ga && ga != b.gradient_accumulation)
      fail(error_code::kConstraint, bpath("gradient_accumulation"),
           "gradient_accumulation " + decimal(b.gradient_accumulation) + " contradicts global_batch_size / (dp × " +
               "micro_batch_size) = " + decimal(ga));
    b.gradient_accumulation = ga;
  } else {
    b.global_batch_size = per_step * b.gradient_accumulation;
  }
  const std::string m_path = has_gbs ? bpath("global_batch_size") : bpath("gradient_accumulation");
  if (p.pp > 1 && b.gradient_accumulation < p.pp)
    fail(error_code::kConstraint, m_path,
         "with pp = " + decimal(p.pp) + " a step needs at least " + decimal(p.pp) +
             " micro-batches per pipeline, got " + decimal(b.gradient_accumulation) +
             "; raise the global batch or lower micro_batch_size");
  if (c.schedule == PipelineSchedule::Interleaved && b.gradient_accumulation % p.pp != 0)
    fail(error_code::kConstraint, m_path,
         "interleaved_1f1b needs the micro-batches per pipeline (" + decimal(b.gradient_accumulation) +
             ") to be a multiple of pp (" + decimal(p.pp) + ")");
  if (2 * b.gradient_accumulation * chunks > kMaxScheduleOps)
    fail(error_code::kRange, m_path,
         "the pipeline schedule would have " + decimal(2 * b.gradient_accumulation * chunks) +
             " forward/backward passes; the estimator is bounded at " + decimal(kMaxScheduleOps));
}

}  // namespace sightline
