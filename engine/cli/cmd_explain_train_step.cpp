// sightline explain-train-step: one training step taken apart by mechanism
// (issue 38): the bottleneck pipeline rank's step as the estimator prices it,
// each mechanism's time with the figures behind it and its source (compute
// by layer kind, FP8 casts and amax reductions, recomputation, exposed
// TP/SP, EP, CP and FSDP communication, the pipeline bubble with its real
// micro-batch count and interleaving, the data-parallel buckets and
// parameter gathers, the optimizer step), adding up to the step; then what
// the data-parallel and tensor-parallel collectives achieve on their groups.
#include <iomanip>
#include <iostream>

#include "cli/cli_common.hpp"
#include "cli/command_budget.hpp"
#include "cli/flags.hpp"
#include "core/error.hpp"
#include "core/json_text.hpp"
#include "scenario/scenario.hpp"
#include "train/estimator.hpp"

namespace sightline::cli {

namespace {

json explained_json(const Scenario& s, const TrainStepExplained& x) {
  json mech = json::array();
  double sum = 0;
  for (const StepMechanism& m : x.mechanisms) {
    sum += m.time_ms;
    mech.push_back({{"name", m.name}, {"time_ms", m.time_ms},
                    {"share", x.step_ms > 0 ? m.time_ms / x.step_ms : 0.0}, {"detail", m.detail}, {"source", m.source}});
  }
  json net = json::array();
  for (const NetworkLine& l : x.network)
    net.push_back({{"group", l.group}, {"collective", l.collective}, {"gpus", l.gpus}, {"gpus_per_node", l.gpus_per_node},
                   {"nodes", l.nodes}, {"message_MiB", l.message_MiB}, {"time_ms", l.time_ms},
                   {"busbw_GBps", l.busbw_GBps}, {"links", l.links}, {"source", l.source}});
  const TrainParallelism& p = s.training->config.parallelism;
  return {{"scenario", s.id}, {"model", s.model.id}, {"gpu", s.hardware.gpu.id}, {"gpus", p.world()},
          {"layout", {{"dp", p.dp}, {"tp", p.tp}, {"pp", p.pp}, {"cp", p.cp}, {"ep", p.ep}, {"virtual_stages", p.virtual_stages},
                      {"zero_stage", p.zero_stage}, {"sequence_parallel", p.sequence_parallel}}},
          {"rank", x.rank}, {"step_time_ms", x.step_ms}, {"mechanisms_sum_ms", sum}, {"mechanisms", mech},
          {"network", net}};
}

void print_explained(const json& out) {
  const json& l = out["layout"];
  std::cout << "training step: " << out["model"].get<std::string>() << " on " << out["gpus"] << " x "
            << out["gpu"].get<std::string>() << " (dp " << l["dp"] << ", tp " << l["tp"] << ", pp " << l["pp"] << ", cp "
            << l["cp"] << ", ep " << l["ep"] << ", v " << l["virtual_stages"] << ", zero " << l["zero_stage"]
            << "), pipeline rank " << out["rank"] << "\n";
  for (const json& m : out["mechanisms"]) {
    if (m["time_ms"].get<double>() <= 0) continue;
    std::cout << "  " << std::left << std::setw(52) << m["name"].get<std::string>() << std::right << std::setw(11)
              << fixed(m["time_ms"], 2) << " ms " << std::setw(6) << fixed(m["share"].get<double>() * 100, 1) << "%\n";
  }
  std::cout << "  " << std::left << std::setw(52) << "step" << std::right << std::setw(11) << fixed(out["step_time_ms"], 2)
            << " ms\n";
  std::cout << "network (what the collectives achieve on their groups):\n";
  for (const json& n : out["network"])
    std::cout << "  " << n["group"].get<std::string>() << ": " << n["collective"].get<std::string>() << " of "
              << fixed(n["message_MiB"], 1) << " MiB on " << n["gpus"] << " GPUs (" << n["gpus_per_node"] << " per node, "
              << n["nodes"] << " nodes, " << n["links"].get<std::string>() << "): " << fixed(n["time_ms"], 3) << " ms, busbw "
              << fixed(n["busbw_GBps"], 1) << " GB/s\n";
  std::cout << "what each line is made of, and its source:\n";
  for (const json& m : out["mechanisms"]) {
    if (m["time_ms"].get<double>() <= 0) continue;
    std::cout << "  " << m["name"].get<std::string>() << ": " << m["detail"].get<std::string>() << " [" << m["source"].get<std::string>()
              << "]\n";
  }
  if (!out["network"].empty()) std::cout << "  network: " << out["network"][0]["source"].get<std::string>() << "\n";
}

}  // namespace

int cmd_explain_train_step(const Args& args) {
  std::string preset, format = "table";
  std::vector<std::string> files;
  std::string problem;
  Flags flags("explain-train-step");
  CommandBudget budget("explain-train-step");
  budget.flag(flags).text("--preset", &preset).text("--format", &format, {"table", "json"}).positional(&files, 1);
  if (!flags.parse(args, problem)) return usage_error(problem);
  if (files.empty() == preset.empty()) return usage_error("explain-train-step takes exactly one of FILE or --preset ID");
  std::string text;
  if (const int status = read_scenario_text(files.empty() ? "" : files[0], preset, text)) return status;
  try {
    const json doc = parse_json_document(text, preset.empty() ? files[0] : "preset " + preset);
    const Scenario s = read_scenario(doc);
    if (!s.training) fail(error_code::kConstraint, "/training", "explain-train-step takes a training scenario");
    // One training run (its passes bounded by the scenario reader), counted as `run` counts it.
    budget.add(run_work_units(doc, true), "the scenario's training run");
    TrainRun run(s);
    while (!run.done()) {
      int64_t budget = run.total_units();
      run.advance(budget);
    }
    const json out = explained_json(s, run.explained());
    if (format == "json") std::cout << safe_dump(out, 2) << "\n";
    else print_explained(out);
    return 0;
  } catch (const SightlineError& e) {
    return report_error(e);
  }
}

}  // namespace sightline::cli
