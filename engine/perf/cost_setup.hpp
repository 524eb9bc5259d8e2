#pragma once
// The cost model, links and software stack a scenario's steps are priced
// with. Serving and training code asks for this instead of choosing a model
// itself, so the calibration tier is decided in one place.
#include <memory>

#include "perf/host_overhead.hpp"
#include "perf/kernel_cost.hpp"
#include "perf/step_cost.hpp"

namespace sightline {

struct CostSetup {
  std::unique_ptr<KernelCostModel> model;
  CostContext ctx;  // points into the hardware: keep it alive and unmoved
  const SoftwareStack* stack = nullptr;  // host overhead; nullptr prices GPU kernels only
  std::string provenance;                // which calibration (or transfer) prices the kernels

  // Kernels plus exposed host time (launches, scheduling) of the stack.
  StepCost price(const StepOperators& step) const;
  // Kernels only (training steps, whose host work overlaps the GPU).
  StepCost price_kernels(const StepOperators& step) const { return price_step(step, *model, ctx); }
};

// The cost setup of a tier ("auto" resolved here) on a deployment; `hardware`
// and `stack` must outlive the setup (it points into them).
CostSetup make_cost_setup(const std::string& tier, const HardwareSpec& hardware, const SoftwareStack& stack);

// The kernel cost model of a tier ("auto" resolved first) for a GPU, and the
// provenance of its numbers. A "target-measured" request for a GPU without a
// calibration falls back to nothing: callers validate the tier first.
std::unique_ptr<KernelCostModel> make_kernel_cost_model(const std::string& tier, const GpuSpec& gpu,
                                                        std::string* provenance);

// The tier "auto" resolves to for a GPU: target-measured when a calibration
// ships for it, cross-generation otherwise.
std::string resolve_cost_tier(const std::string& requested, const std::string& gpu_id);

}  // namespace sightline
