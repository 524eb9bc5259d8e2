#pragma once
// Speculative-decoding acceptance from published measurements
// (presets/spec_acceptance/): when a scenario names a drafting method and no
// acceptance rate, the per-position rate comes from the rows measured with the
// same method on the same model, else the same family, else any model, with
// the spread of those rows as the interval and the rows named in the result.
#include <optional>
#include <string>
#include <vector>

namespace sightline::serve {

// One published measurement: acceptance length tau (tokens committed per
// verification step, the target's own token included) at draft length k.
struct AcceptanceRow {
  std::string source;  // preset id of the source file
  std::string model;   // Sightline-style model id of the target
  std::string family;  // a model id prefix: "llama-3", "qwen3", "deepseek"
  std::string method;  // eagle3, mtp, draft_model, ngram
  int k = 0;
  std::string dataset;
  double acceptance_length = 0;
};

// Every row of every source, checked as a preset (located errors).
const std::vector<AcceptanceRow>& acceptance_rows();

// Tokens per step when each of k drafted positions is accepted with
// probability `rate` given the ones before it: 1 + rate + ... + rate^k.
double acceptance_length_at(double rate, int k);
// The inverse: the constant per-position rate whose acceptance length at k is tau.
double per_position_rate(double acceptance_length, int k);

struct AcceptanceEstimate {
  double rate = 0;  // median of the matching rows' per-position rates
  double low = 0;   // the spread of the matching rows
  double high = 0;
  std::string basis;  // "model", "family" or "method": which rows matched
  std::vector<std::string> rows;  // "source: model k=K dataset tau=T" for each row used
};

// The estimate for `model_id` drafting with table method `method` (eagle3,
// mtp, draft_model, ngram); rows of `exclude_model` are left out (the
// leave-one-model-out check). nullopt: no row for the method.
std::optional<AcceptanceEstimate> published_acceptance(const std::string& model_id, const std::string& method,
                                                       const std::string& exclude_model = "");

}  // namespace sightline::serve
