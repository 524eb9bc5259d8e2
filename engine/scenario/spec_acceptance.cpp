#include "scenario/spec_acceptance.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "core/json_reader.hpp"
#include "presets/preset_store.hpp"

namespace sightline::serve {

double acceptance_length_at(double rate, int k) {
  double tau = 0, term = 1;
  for (int i = 0; i <= k; ++i) {
    tau += term;
    term *= rate;
  }
  return tau;
}

double per_position_rate(double acceptance_length, int k) {
  // acceptance_length_at rises with the rate: bisect on [0, 1].
  double lo = 0, hi = 1;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (acceptance_length_at(mid, k) < acceptance_length ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

namespace {

// A family is an id prefix ending where a version or size starts:
// "llama-3" holds llama-3-70b and llama-3.1-8b, "qwen3" holds qwen3-8b.
bool in_family(const std::string& model_id, const std::string& family) {
  return model_id.size() > family.size() && model_id.compare(0, family.size(), family) == 0 &&
         (model_id[family.size()] == '-' || model_id[family.size()] == '.');
}

AcceptanceRow read_acceptance_row(const json& v, const std::string& path, const std::string& source) {
  ObjectReader r(v, path,
                 {"model", "family", "draft", "method", "k", "dataset", "thinking", "acceptance_length",
                  "accepted_per_position"});
  AcceptanceRow row;
  row.source = source;
  row.model = r.string("model");
  row.family = r.string("family");
  if (!in_family(row.model, row.family))
    fail(error_code::kConstraint, r.child_path("family"), "family must be a prefix of the model id");
  (void)r.string("draft");     // provenance only
  (void)r.string("thinking");  // provenance only: no row states a thinking mode yet
  row.method = r.choice("method", {"eagle3", "mtp", "draft_model", "ngram"});
  row.k = static_cast<int>(r.integer("k", 1, 16));
  row.dataset = r.string("dataset");
  // The per-position counts (accepted at position i / drafts) add up to
  // tau - 1; when both are published, the stated length is the one used and
  // the counts must agree with it within 2% (sources round and state baselines
  // measured apart: vLLM's 1.35 against 1 + 0.363).
  double from_positions = -1;
  if (const json* p = r.find("accepted_per_position")) {
    if (!p->is_array() || p->size() != static_cast<size_t>(row.k))
      fail(error_code::kConstraint, r.child_path("accepted_per_position"), "needs one value per drafted position (k)");
    from_positions = 1;
    for (size_t i = 0; i < p->size(); ++i)
      from_positions += read_number((*p)[i], pointer_append(r.child_path("accepted_per_position"), i), 0.0, 1.0);
  }
  if (r.has("acceptance_length")) {
    row.acceptance_length = r.number("acceptance_length", 1.0, 1.0 + row.k);
    if (from_positions > 0 && std::abs(from_positions - row.acceptance_length) > 0.02 * row.acceptance_length)
      fail(error_code::kConstraint, r.child_path("acceptance_length"),
           "disagrees with 1 + the sum of accepted_per_position by more than 2%");
  } else if (from_positions > 0) {
    row.acceptance_length = from_positions;
  } else {
    fail(error_code::kMissingKey, r.path(), "a row needs acceptance_length or accepted_per_position");
  }
  return row;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

const std::vector<AcceptanceRow>& acceptance_rows() {
  static const std::vector<AcceptanceRow> rows = [] {
    std::vector<AcceptanceRow> out;
    for (const json* p : list_presets("spec_acceptance")) {
      const std::string id = p->at("id").get<std::string>();
      const std::string path = "/presets/spec_acceptance/" + id;
      ObjectReader r(*p, path, {"id", "source", "url", "rows"});
      (void)r.string("source");
      (void)r.string("url");
      const json& list = r.required("rows");
      if (!list.is_array() || list.empty())
        fail(error_code::kConstraint, r.child_path("rows"), "needs at least one row");
      for (size_t i = 0; i < list.size(); ++i)
        out.push_back(read_acceptance_row(list[i], pointer_append(r.child_path("rows"), i), id));
    }
    return out;
  }();
  return rows;
}

std::optional<AcceptanceEstimate> published_acceptance(const std::string& model_id, const std::string& method,
                                                       const std::string& exclude_model) {
  // The closest rows win: the same model, else the same family (the row's
  // family is a prefix of the id), else every model drafted the same way.
  const auto pick = [&](int level) {
    std::vector<const AcceptanceRow*> out;
    for (const AcceptanceRow& row : acceptance_rows()) {
      if (row.method != method || row.model == exclude_model) continue;
      const bool match = level == 0   ? row.model == model_id
                         : level == 1 ? in_family(model_id, row.family)
                                      : true;
      if (match) out.push_back(&row);
    }
    return out;
  };
  static const char* const kBasis[] = {"model", "family", "method"};
  for (int level = 0; level < 3; ++level) {
    const std::vector<const AcceptanceRow*> used = pick(level);
    if (used.empty()) continue;
    AcceptanceEstimate e;
    e.basis = kBasis[level];
    std::vector<double> rates;
    for (const AcceptanceRow* row : used) {
      rates.push_back(per_position_rate(row->acceptance_length, row->k));
      char line[320];
      std::snprintf(line, sizeof line, "%s: %s k=%d %s tau=%.2f", row->source.c_str(), row->model.c_str(), row->k,
                    row->dataset.c_str(), row->acceptance_length);
      e.rows.push_back(line);
    }
    e.rate = median_of(rates);
    e.low = *std::min_element(rates.begin(), rates.end());
    e.high = *std::max_element(rates.begin(), rates.end());
    return e;
  }
  return std::nullopt;
}

}  // namespace sightline::serve
