#include "perf/cost_setup.hpp"

#include "scenario/scenario.hpp"

namespace sightline {

CostSetup make_cost_setup(const Scenario& s) {
  CostSetup setup;
  setup.model = std::make_unique<RooflineCostModel>();
  setup.ctx.gpu = &s.hardware.gpu;
  // Tensor parallelism stays inside a node; pipeline stages cross nodes when
  // the deployment spans several.
  if (s.hardware.intra_node) setup.ctx.tp_link = &*s.hardware.intra_node;
  setup.ctx.pp_link = s.hardware.nodes > 1 && s.hardware.inter_node ? &*s.hardware.inter_node : setup.ctx.tp_link;
  return setup;
}

}  // namespace sightline
