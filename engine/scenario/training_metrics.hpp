#pragma once
// The registry of training metrics a scenario can name as its key metrics
// (the seed suite's "Key Metric" column). Each entry points into the result
// JSON, so the CLI table and the page show exactly the number the result has.
#include <string>
#include <vector>

#include "core/json_reader.hpp"

namespace sightline {

struct TrainingMetricInfo {
  const char* id;
  const char* label;
  const char* unit;
  const char* pointer;  // JSON pointer into the training result
  const char* needs;    // "" or "compare", "scaling", "tokens_to_train", "gpu_hour_usd"
  const char* description;
};

const std::vector<TrainingMetricInfo>& training_metrics();
const TrainingMetricInfo* find_training_metric(const std::string& id);
const std::vector<std::string>& default_training_key_metrics();

// The result's "key_metrics" array: [{id, label, value, unit, description}].
json extract_key_metrics(const json& result, const std::vector<std::string>& ids);

}  // namespace sightline
