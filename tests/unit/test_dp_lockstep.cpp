// Wide expert parallelism in the serving simulator: the attention
// data-parallel ranks of a group meet at every MoE layer's dispatch and
// combine, so they step in lockstep, and a rank that runs a prompt holds up
// the ranks that only decode.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "test_helpers.hpp"

using namespace sightline::test;

namespace {

struct TraceStep {
  int replica;
  double start_us, dur_us;
  int64_t prefill_tokens;
};

// Mixtral-8x7B on two H100s: two attention data-parallel ranks of TP1 with
// the experts spread over both (EP 2). Round-robin routing sends the requests
// of `csv` (arrival_s,prompt_tokens,output_tokens) to ranks 0, 1, 0, ...
json two_rank_group(const std::string& csv) {
  return {{"schema_version", 1},
          {"seed", 1},
          {"model", "mixtral-8x7b"},
          {"hardware", {{"gpu", "h100-sxm"}, {"gpus_per_node", 2}, {"intra_node", "nvlink4-nvswitch"}}},
          {"serving",
           {{"mode", "simulate"},
            {"parallelism", {{"tp", 1}, {"pp", 1}}},
            {"moe", {{"expert_parallel", 2}, {"attention_data_parallel", 2}}},
            {"cluster", {{"router", "round_robin"}}},
            {"scheduler", {{"policy", "continuous"}, {"max_num_batched_tokens", 8192}}},
            {"workload", {{"arrival", {{"process", "trace"}, {"csv", csv}}}}},
            {"outputs", {{"trace", true}, {"trace_max_steps", 100000}}}}}};
}

std::vector<TraceStep> steps_of(const json& scenario) {
  const json e = envelope(sightline::api::run_scenario_central_only(scenario.dump()));
  if (!e["ok"].get<bool>()) FAIL_CHECK(e["error"].dump());
  REQUIRE(e["ok"].get<bool>());
  std::vector<TraceStep> out;
  for (const json& ev : e["result"]["trace"]["traceEvents"]) {
    if (ev["ph"] != "X" || ev["cat"] != "step") continue;
    out.push_back({ev["pid"].get<int>(), ev["ts"].get<double>(), ev["dur"].get<double>(),
                   ev["args"]["prefill_tokens"].get<int64_t>()});
  }
  return out;
}

}  // namespace

TEST_CASE("wide EP lockstep: a group's ranks start and end every step together") {
  // Four requests of different lengths: the ranks' batches differ step by step.
  const auto steps = steps_of(two_rank_group("0.0,100,60\n0.0,900,20\n0.05,3000,30\n0.3,50,80\n0.31,2000,10\n"));
  REQUIRE(steps.size() > 20);
  std::map<double, std::vector<const TraceStep*>> by_start;
  for (const TraceStep& s : steps) by_start[s.start_us].push_back(&s);
  int shared = 0;
  for (const auto& [start, group] : by_start) {
    // Each rank has at most one step at a time, and the ranks that step
    // together end together.
    CHECK(group.size() <= 2);
    for (const TraceStep* s : group) CHECK(s->dur_us == doctest::Approx(group.front()->dur_us).epsilon(1e-12));
    shared += group.size() == 2;
  }
  CHECK(shared > 10);
  // No step starts while a step of the group is still running.
  double busy_until = -1;
  for (const auto& [start, group] : by_start) {
    CHECK(start >= busy_until - 1e-6);
    busy_until = start + group.front()->dur_us;
  }
}

TEST_CASE("wide EP lockstep: a rank that runs a prompt holds up the rank that only decodes") {
  // Rank 0 decodes a short-prompt request; at 0.2 s rank 1 gets a 6,000-token prompt.
  const auto steps = steps_of(two_rank_group("0.0,32,400\n0.2,6000,2\n"));
  std::vector<double> alone;  // rank 0's decode steps while rank 1 is idle
  double held = 0;            // rank 0's step beside rank 1's prompt
  double prompt = 0;
  for (const TraceStep& s : steps) {
    if (s.replica == 1 && s.prefill_tokens >= 6000) prompt = s.dur_us;
  }
  REQUIRE(prompt > 0);
  for (const TraceStep& s : steps) {
    if (s.replica != 0 || s.prefill_tokens > 0) continue;
    const bool beside = std::any_of(steps.begin(), steps.end(), [&](const TraceStep& o) {
      return o.replica == 1 && o.start_us == s.start_us && o.prefill_tokens >= 6000;
    });
    if (beside) held = s.dur_us;
    else alone.push_back(s.dur_us);
  }
  REQUIRE(held > 0);
  REQUIRE(alone.size() > 10);
  std::sort(alone.begin(), alone.end());
  const double typical = alone[alone.size() / 2];
  MESSAGE("rank 0's decode step: " << typical << " us alone, " << held << " us beside a 6,000-token prompt");
  CHECK(held == doctest::Approx(prompt).epsilon(1e-12));  // it waits for the prompt's step
  CHECK(held > 5 * typical);
}
