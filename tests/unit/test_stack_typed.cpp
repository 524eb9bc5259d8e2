// A preset is a named set of values: every software stack preset, typed out
// as an object under another id, runs a serving scenario to the same figures
// as the preset by name (its running limit, scheduler, decode kernel,
// all-reduce, launch and host costs all read from the values, none by id).
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "presets/preset_store.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace {

json stack_scenario(const std::string& gpu, const std::string& link, const json& stack) {
  return {{"schema_version", 1},
          {"seed", 5},
          {"model", "llama-3-8b"},
          {"hardware", {{"gpu", gpu}, {"gpus_per_node", 2}, {"intra_node", link}}},
          {"cost_model", {{"software_stack", stack}}},
          {"serving",
           {{"mode", "simulate"},
            {"parallelism", {{"tp", 2}}},
            {"workload",
             {{"arrival", {{"process", "poisson"}, {"rate_qps", 12}}},
              {"num_requests", 150},
              {"prompt_tokens", {{"dist", "uniform"}, {"min", 100}, {"max", 6000}}},
              {"output_tokens", {{"dist", "uniform"}, {"min", 10}, {"max", 300}}}}}}}};
}

json stack_metrics(const json& scenario) { return test::central_result(scenario)["metrics"]; }

}  // namespace

TEST_CASE("stacks: every stack preset typed with its values runs as the preset") {
  int stacks = 0;
  for (const json* p : list_presets("stacks")) {
    const std::string id = (*p)["id"].get<std::string>();
    json typed = *p;
    typed["id"] = "typed-" + id;
    typed["name"] = "a stack typed by hand";
    const std::pair<std::string, std::string> gpus[] = {
        {"h100-sxm", "nvlink4-nvswitch"}, {"a100-80g-sxm", "nvlink3-nvswitch"}, {"b200", "nvlink5-nvswitch"}};
    for (const auto& g : gpus) {
      CAPTURE(id);
      CAPTURE(g.first);
      CHECK(stack_metrics(stack_scenario(g.first, g.second, typed)) ==
            stack_metrics(stack_scenario(g.first, g.second, json(id))));
    }
    ++stacks;
  }
  CHECK(stacks >= 5);
}
