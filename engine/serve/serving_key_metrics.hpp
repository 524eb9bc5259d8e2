#pragma once
// A serving result's key metrics, read from its typed figures (the run's
// metrics, its KV capacity, the quantization comparison, the max-QPS answer,
// the compare ratios), never out of the JSON the writers made. Each is read by
// the getter column of its row in scenario/serving_metric_table.hpp, the same
// row that gives the catalogue its id, words and where the writers put it.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "run/key_metric.hpp"
#include "serve/serving_metrics.hpp"
#include "serve/sim_details.hpp"

namespace sightline::serve {

// Quantized weights against the unquantized ones, batch-1 steps on the first pool's GPUs.
struct QuantizationFigures {
  std::string weights, unquantized_weights;
  int64_t context_tokens = 0;
  double decode_step_ms = 0, decode_step_ms_unquantized = 0, decode_speedup = 0;
  double prefill_ms = 0, prefill_ms_unquantized = 0, prefill_speedup = 0;
  double weights_GiB = 0, weights_GiB_unquantized = 0, weight_reduction = 0;
  bool unquantized_fits = false;
  int64_t unquantized_kv_blocks = 0;
  json to_json() const;
};

// One compare block's figures by name: ratio = this / baseline, speedup =
// baseline / this; none where the denominator is 0 (written as null).
struct CompareFigures {
  std::map<std::string, std::optional<double>> ratio, speedup;
};

struct ServingHeadline;  // serve/headline.hpp

// What a serving result's key metrics are read from; null / none where the
// result has no such part.
struct ServingFigures {
  const ServingMetrics* metrics = nullptr;
  const SimDetails* details = nullptr;
  const QuantizationFigures* quantization = nullptr;  // quantized weights only
  std::optional<double> max_qps;                     // serving.max_qps_search only
  const CompareFigures* compare = nullptr;           // one baseline only (not an array of them)
  const ServingHeadline* headline = nullptr;         // a run with arrivals over time (not an offline batch)
};

// Serving metric `id` of the catalogue, with its label and unit; Missing (with
// the statistic's reason where it has one) when the result has no such figure.
KeyMetric serving_key_metric(const std::string& id, const ServingFigures& f);

// A compare block's figures, from the same rows as the key metrics: for each
// figure compared by name, both runs having it, put("ratio", name, this,
// baseline, why) and/or put("speedup", name, baseline, this, why) (`why`:
// what a zero denominator means). `run` and `baseline` need metrics and details.
void for_each_compared_figure(const ServingFigures& run, const ServingFigures& baseline,
                              const std::function<void(const char* group, const std::string& name, double num, double den,
                                                       const char* why)>& put);

}  // namespace sightline::serve
