#include "scenario/layout_class.hpp"

#include "scenario/simulation_spec.hpp"

namespace sightline {

std::string layout_class(const Scenario& s) {
  const bool moe = s.model.is_moe();
  if (s.serving && s.serving->simulation) {
    const serve::SimulationSpec& sim = *s.serving->simulation;
    if (sim.cluster.disaggregated) return "disaggregated";
    if (moe && sim.moe.expert_parallel > 1)
      return sim.moe.attention_data_parallel > 1 ? "moe_wide_ep" : "moe_expert_parallel";
  }
  if (moe && s.training && s.training->config.parallelism.ep > 1) return "moe_expert_parallel";
  return moe ? "moe" : "dense";
}

}  // namespace sightline
