#pragma once
// Shared by the commands that check the engine against published end-to-end
// measurements (report-training, report-e2e): run a scenario through the
// engine API, Megatron's FLOP count, and the median of a list.
#include <string>
#include <vector>

#include "cli/cli_common.hpp"

namespace sightline::cli {

// Runs `scenario_text`; on success fills the result and the resolved scenario
// (defaults applied, model expanded). On failure fills `error` with the
// envelope's error object and returns false.
bool run_scenario_text(const std::string& scenario_text, json& result, json& resolved, json& error);

// The scenario preset `id` of kind `kind` as JSON text, or false with `error` filled.
bool preset_text(const std::string& kind, const std::string& id, std::string& text, json& error);

// Megatron-LM's FLOP count per iteration with full activation recomputation
// (Narayanan et al. 2021, eq. 3): 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)),
// with the vocabulary padded to a multiple of 1024 as Megatron does.
double megatron_flops_per_step(const json& resolved_scenario);

// Megatron TFLOP/s per GPU of a training result (eq. 3 FLOPs over the step time).
double megatron_tflops_per_gpu(const json& resolved_scenario, const json& result);

double median(std::vector<double> values);  // 0 for an empty list

}  // namespace sightline::cli
