#pragma once
// The cost model and links a scenario's steps are priced with. Serving and
// training code asks for this instead of choosing a model itself, so the
// calibration tier is decided in one place.
#include <memory>

#include "perf/kernel_cost.hpp"
#include "perf/step_cost.hpp"

namespace sightline {

struct Scenario;

struct CostSetup {
  std::unique_ptr<KernelCostModel> model;
  CostContext ctx;  // points into the scenario: keep the scenario alive and unmoved
  StepCost price(const StepOperators& step) const { return price_step(step, *model, ctx); }
};

CostSetup make_cost_setup(const Scenario& s);

}  // namespace sightline
