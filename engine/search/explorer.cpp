// The search explorer's untemplated parts (explorer.hpp).
#include "search/explorer.hpp"

#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "presets/preset_store.hpp"

namespace sightline::search {

void for_each_combination(size_t axes, const std::function<size_t(size_t axis, const std::vector<size_t>& at)>& values,
                          const std::function<void(const std::vector<size_t>& at)>& visit) {
  std::vector<size_t> at;
  at.reserve(axes);
  // Depth-first over the axes: the same order as nested loops, the first axis outermost.
  std::function<void()> descend = [&]() {
    if (at.size() == axes) return visit(at);
    const size_t n = values(at.size(), at);
    for (size_t v = 0; v < n; ++v) {
      at.push_back(v);
      descend();
      at.pop_back();
    }
  };
  descend();
}

GpuOptionFields read_gpu_option(const ObjectReader& r, std::optional<double> usd_default) {
  GpuOptionFields g;
  g.gpu = r.string("gpu");
  require_preset("gpus", g.gpu, r.child_path("gpu"));
  g.usd_per_hour = r.number("usd_per_hour", 0.0, 1e6, usd_default);
  // The links default to the GPU preset's own (its default_intra_node and default_inter_node).
  const GpuSpec preset = read_gpu(json(g.gpu), r.child_path("gpu"));
  g.intra_node = r.string("intra_node", preset.default_intra_node);
  g.inter_node = r.string("inter_node", preset.default_inter_node);
  const InterconnectSpec link = read_interconnect(json(g.intra_node), r.child_path("intra_node"));
  if (link.scope != "intra_node")
    fail(error_code::kConstraint, r.child_path("intra_node"), "'" + g.intra_node + "' is an inter-node link");
  if (read_interconnect(json(g.inter_node), r.child_path("inter_node")).scope != "inter_node")
    fail(error_code::kConstraint, r.child_path("inter_node"), "'" + g.inter_node + "' is an intra-node link");
  // The GPU's own server size (its node_gpus), no more than the link joins
  // (an NVLink bridge pair, a 4-way bridge).
  g.gpus_per_node = static_cast<int>(r.integer("gpus_per_node", 1, 64, preset.proposed_node_gpus(&link)));
  return g;
}

SpaceCounts space_counts(int64_t planned, size_t pruned, size_t candidates, size_t outcomes) {
  if (outcomes != candidates)
    fail(error_code::kConstraint, "/results",
         "expected " + std::to_string(candidates) + " candidate results, got " + std::to_string(outcomes));
  return {planned, static_cast<int64_t>(pruned), static_cast<int64_t>(outcomes)};
}

}  // namespace sightline::search
