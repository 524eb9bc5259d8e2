// The text tables' last section: each figure's 80% interval and where it
// comes from (the kernels' interval at the result's tier, widened to the
// end-to-end error measured for its kind: the result's "interval_band",
// jobs/kind_error_band.hpp, whose "note" it prints). The JSON carries the same
// beside each figure.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/cli_common.hpp"

namespace sightline::cli {

namespace {

std::string about(double v) { return fixed(v, v >= 1000 ? 0 : v >= 100 ? 1 : v >= 10 ? 2 : 3); }

void interval_row(std::ostream& os, const std::string& label, const json& low, const json& high, const std::string& unit) {
  os << "  " << std::left << std::setw(40) << label.substr(0, 39) << std::right << std::setw(12)
     << about(low.get<double>()) << " .. " << about(high.get<double>()) << " " << unit << "\n";
}

}  // namespace

void print_interval_section(const json& r) {
  const MetricKind* metric_kind = metric_kind_of_result(r.value("kind", ""));
  std::vector<std::string> shown;
  std::ostringstream rows;  // the rows first: no heading without one
  for (const json& k : r.value("key_metrics", json::array()))
    if (k.contains("low") && k["low"].is_number() && k["high"].is_number()) {
      interval_row(rows, k.value("label", ""), k["low"], k["high"], k.value("unit", ""));
      shown.push_back(k.value("id", ""));
    }
  for (const auto& [id, pair] : r.value("intervals_80", json::object()).items()) {
    if (std::find(shown.begin(), shown.end(), id) != shown.end() || !pair.is_array() || pair.size() != 2) continue;
    const MetricInfo* m = metric_kind ? find_metric(*metric_kind, id) : nullptr;
    interval_row(rows, m ? m->label : id, pair[0], pair[1], m ? m->unit : "");
  }
  if (rows.str().empty()) return;
  const json& band = r.value("interval_band", json::object());
  std::cout << "\n80% intervals (the kernels' at the " << r.value("cost_tier", "") << " tier";
  // The band's sentence is the engine's (jobs/kind_error_band.hpp), as on the page.
  if (band.value("applied", false)) std::cout << "; speed figures " << band.value("note", "");
  std::cout << ")\n" << rows.str();
}

}  // namespace sightline::cli
