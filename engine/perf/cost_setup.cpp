#include "perf/cost_setup.hpp"

#include "core/error.hpp"
#include "perf/calibrated_cost.hpp"
#include "perf/kernel_family.hpp"

namespace sightline {

std::string resolve_cost_tier(const std::string& requested, const GpuSpec& gpu) {
  if (requested != "auto") return requested;
  return own_calibration(gpu) ? "target-measured" : "cross-generation";
}

StepCost CostSetup::price(const StepOperators& step) const {
  StepCost c;
  c.parts.reserve(step.ops.size() + 1);  // + the host overhead part
  price_into(step, c);
  return c;
}

void CostSetup::price_served_kernels_into(const StepOperators& step, StepCost& c, bool labels, OpCostMemo* memo) const {
  if (!stack) return price_step_into(step, *model, ctx, c, labels, memo);
  // A serving step's all-reduces run the stack's own kernels where its engine
  // would (training steps, priced by price_kernels, keep NCCL).
  CostContext served = ctx;
  served.all_reduce = &stack->all_reduce;
  price_step_into(step, *model, served, c, labels, memo);
}

double CostSetup::exposed_host_s(double gpu_s, const HostTime& host) const {
  if (!stack) return 0;
  return step_wall_time_s(gpu_s, host, *stack) - gpu_s + extra_host_s_per_step;
}

void CostSetup::price_into(const StepOperators& step, StepCost& c, bool labels, OpCostMemo* memo) const {
  price_served_kernels_into(step, c, labels, memo);
  if (!stack) return;
  const double exposed = exposed_host_s(c.gpu_time_s, host_time(c.kernels, c.has_prefill, step, *stack));  // counted as it priced
  if (exposed > 0) {
    c.parts.emplace_back();
    PricedOperator& p = c.parts.back();
    if (labels) p.name = "host_overhead";
    p.family = OpFamily::Host;
    p.count = 1;
    p.time_s = p.time_low_s = p.time_high_s = exposed;
    p.flops = p.bytes = 0;
    if (labels) p.bound = "host";
    c.time_s += exposed;
    c.time_low_s += exposed;
    c.time_high_s += exposed;
  }
}

std::unique_ptr<KernelCostModel> make_kernel_cost_model(const std::string& requested, const GpuSpec& gpu,
                                                        std::string* provenance) {
  const std::string tier = resolve_cost_tier(requested, gpu);
  if (tier == "roofline") {
    *provenance = "spec-sheet peaks, no efficiency";
    return std::make_unique<RooflineCostModel>();
  }
  if (tier == "target-measured") {
    const KernelCalibration* own = own_calibration(gpu);
    if (!own) return nullptr;
    *provenance = own->source;
    return std::make_unique<CalibratedCostModel>(*own, tier);
  }
  // Cross-generation: curves of a measured GPU on this GPU's spec sheet. An
  // architecture with a kernel family of its own (AMD Instinct) is priced
  // from the family's cited kernel-level facts instead of NVIDIA levels.
  if (const KernelFamily* family = find_kernel_family(gpu.architecture)) {
    KernelCalibration fam = family_calibration(*family, gpu);
    *provenance = fam.source;
    return std::make_unique<CalibratedCostModel>(std::move(fam), "cross-generation");
  }
  // Otherwise from the measured GPU nearest by its values (never this GPU's
  // own measurements: the tier is what a GPU without them gets).
  const MeasuredGpu* from = nearest_measured_gpu(gpu);
  KernelCalibration transferred = from ? transfer_calibration(*from->calibration, from->gpu, gpu, 0)
                                       : default_calibration();
  *provenance = transferred.source;
  return std::make_unique<CalibratedCostModel>(std::move(transferred), "cross-generation");
}

CostSetup make_cost_setup(const CostModelSpec& spec, const HardwareSpec& hardware) {
  CostSetup setup;
  setup.model = make_kernel_cost_model(spec.tier, hardware.gpu, &setup.provenance);
  if (!setup.model)  // e.g. a compare variant moved a target-measured scenario to an uncalibrated GPU
    fail(error_code::kConstraint, "/cost_model/tier",
         "GPU '" + hardware.gpu.name + "' names no kernel calibration (its `calibration` value); use \"auto\" or \"cross-generation\"");
  if (spec.cluster_calibration) {
    setup.model = std::make_unique<ClusterScaledCostModel>(std::move(setup.model), *spec.cluster_calibration);
    setup.extra_host_s_per_step = spec.cluster_calibration->host_us_per_step * 1e-6;
    setup.provenance += "; cluster calibration '" + spec.cluster_calibration->id + "'";
  }
  if (spec.bound != CostBound::Central) setup.model = std::make_unique<BoundedCostModel>(std::move(setup.model), spec.bound);
  setup.ctx.gpu = &hardware.gpu;
  // Tensor parallelism stays inside a node; pipeline stages cross nodes when
  // the deployment spans several.
  if (hardware.intra_node) setup.ctx.tp_link = &*hardware.intra_node;
  setup.ctx.pp_link = hardware.nodes > 1 && hardware.inter_node ? &*hardware.inter_node : setup.ctx.tp_link;
  setup.stack = &spec.software_stack;
  const auto& kernel = spec.software_stack.decode_attention_kernel;
  if (kernel && kernel->runs_on(hardware.gpu.architecture)) setup.ctx.decode_kernel = &*kernel;
  return setup;
}

}  // namespace sightline
