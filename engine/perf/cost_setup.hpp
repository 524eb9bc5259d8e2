#pragma once
// The cost model, links and software stack a scenario's steps are priced
// with. Serving and training code asks for this instead of choosing a model
// itself, so the calibration tier is decided in one place.
#include <memory>
#include <optional>

#include "hw/hardware.hpp"
#include "perf/cluster_calibration.hpp"
#include "perf/cost_bounds.hpp"
#include "perf/host_overhead.hpp"
#include "perf/kernel_cost.hpp"
#include "perf/step_cost.hpp"

namespace sightline {

// How steps are priced (the scenario's "cost_model" section, read by scenario/).
struct CostModelSpec {
  std::string tier = "auto";  // auto | target-measured | cross-generation | roofline
  SoftwareStack software_stack;
  double gpu_hour_usd = 0;    // 0: no cost figures
  // Corrections fitted to the user's own benchmarks (`sightline fit`); none by default.
  std::optional<ClusterCalibration> cluster_calibration;
  // How a serving simulation's 80% interval is computed (jobs/interval_job.hpp):
  // "auto" (paired short bound runs where they save work, else full ones),
  // "full" (the central run plus full runs at both bounds: the reference) or
  // "reduced" (always the paired short runs).
  std::string intervals = "auto";
  // Not read from JSON: which bound of the kernels' 80% interval a run prices
  // at (the interval runs of a job set it; see perf/cost_bounds.hpp).
  CostBound bound = CostBound::Central;
};

struct CostSetup {
  std::unique_ptr<KernelCostModel> model;
  CostContext ctx;  // points into the hardware: keep it alive and unmoved
  const SoftwareStack* stack = nullptr;  // host overhead; nullptr prices GPU kernels only
  std::string provenance;                // which calibration (or transfer) prices the kernels
  double extra_host_s_per_step = 0;      // a cluster calibration's host time the stack model lacks

  // Kernels, all-reduces as the stack's engine runs them, plus exposed host
  // time (launches, scheduling) of the stack.
  StepCost price(const StepOperators& step) const;
  // The same into `out` (its storage reused; `labels` and `memo`: see
  // price_step_into; a memo serves this setup only).
  void price_into(const StepOperators& step, StepCost& out, bool labels = true, OpCostMemo* memo = nullptr) const;
  // Its two halves: the kernels as price_into prices them (the stack's
  // all-reduces), and the host time it then adds over `gpu_s` of kernels for a
  // step of `host` (0 without a stack) — for a step priced from parts, as
  // two-batch overlap's micro-batches are.
  void price_served_kernels_into(const StepOperators& step, StepCost& out, bool labels = true,
                                 OpCostMemo* memo = nullptr) const;
  double exposed_host_s(double gpu_s, const HostTime& host) const;
  // Kernels only (training steps, whose host work overlaps the GPU).
  StepCost price_kernels(const StepOperators& step) const { return price_step(step, *model, ctx); }
};

// The cost setup of a cost-model section on a deployment; `spec` and
// `hardware` must outlive the setup, unmoved (it points into them).
CostSetup make_cost_setup(const CostModelSpec& spec, const HardwareSpec& hardware);

// The kernel cost model of a tier ("auto" resolved first) for a GPU, and the
// provenance of its numbers. A "target-measured" request for a GPU without a
// calibration falls back to nothing: callers validate the tier first.
std::unique_ptr<KernelCostModel> make_kernel_cost_model(const std::string& tier, const GpuSpec& gpu,
                                                        std::string* provenance);

// The tier "auto" resolves to for a GPU: target-measured when its values name
// a shipped calibration (its `calibration` field), cross-generation otherwise.
std::string resolve_cost_tier(const std::string& requested, const GpuSpec& gpu);

}  // namespace sightline
