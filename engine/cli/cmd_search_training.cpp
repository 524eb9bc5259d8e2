// sightline search with a {"kind": "training_search"} question: the training
// configuration search (search/training_search.hpp), the candidates estimated
// on --jobs threads, then the top and Pareto configurations at the low and
// high cost bounds.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <sstream>
#include <thread>

#include "cli/cli_common.hpp"
#include "cli/command_budget.hpp"
#include "search/training_search.hpp"

namespace sightline::cli {

namespace {

// A configuration planned, checked and estimated, the interval re-runs
// shared out: 600 units (examples/search-training-llama3-8b-usd.json, 7,776
// configurations, took 3.33 s of CPU, 2026-11-28: 0.43 ms each, at 0.75 us
// per unit, rounded up).
constexpr double kUnitsPerConfiguration = 600;

double value_of(const json& row, const char* key) { return row.contains(key) ? row[key].get<double>() : 0.0; }

std::string with_interval(const json& key_metrics, const std::string& id, int digits) {
  const json* m = find_key_metric(key_metrics, id);
  return m ? value_with_interval(*m, digits) : "";
}

std::string table(const json& r, size_t rows) {
  std::ostringstream s;
  const bool tpu = r["objective"] == "tokens_per_usd";
  const double tokens = r["tokens_to_train"].get<double>();
  s << "training search: " << r["model"].get<std::string>() << " (base " << r["base"].get<std::string>() << "), global batch "
    << r["global_batch_size"] << " × " << r["seq_len"] << " tokens";
  if (tokens > 0) {
    char t[64];
    std::snprintf(t, sizeof t, "%.3g", tokens);
    s << ", " << t << " tokens to train";
  }
  s << "; objective " << r["objective"].get<std::string>() << "\n";
  const json& sp = r["space"];
  s << "space: " << sp["configurations"] << " configurations, " << sp["pruned_by_checks"] << " pruned by the checks, "
    << sp["estimated"] << " estimated, " << sp["do_not_fit"] << " do not fit in memory";
  if (sp["failed"].get<int64_t>() > 0) s << ", " << sp["failed"] << " failed";
  s << ", " << sp["ranked"] << " ranked\n";
  for (const json& p : r["pruned_by_reason"]) {
    char line[64];
    std::snprintf(line, sizeof line, "  %6lld  ", static_cast<long long>(p["count"].get<int64_t>()));
    s << line << p["reason"].get<std::string>() << "  (e.g. " << p["example"].get<std::string>() << ")\n";
  }
  s << "accuracy: tier " << r["accuracy"].value("tier", "") << ", 80% intervals from the kernels' low/high cost bounds\n\n";
  // The objective's column: tokens per $ (millions), days to train, or (no tokens_to_train) tokens per second (thousands).
  s << (tpu ? "  rank  Mtok/$   " : tokens > 0 ? "  rank  days     " : "  rank  ktok/s   ") << "step ms    tok/s/GPU  MFU %  mem GiB  GA    configuration\n";
  size_t shown = 0;
  for (const json& c : r["ranked"]) {
    if (shown++ >= rows) break;
    char line[400];
    const double first = tpu ? value_of(c, "tokens_per_usd") / 1e6
                         : tokens > 0 ? value_of(c, "time_to_train_days")
                                      : value_of(c, "tokens_per_s") / 1e3;
    std::snprintf(line, sizeof line, "  %-4lld  %-7.3f  %-9.1f  %-9.0f  %-5.1f  %-7.1f  %-4lld  %s%s\n",
                  static_cast<long long>(c["rank"].get<int64_t>()), first, value_of(c, "step_time_ms"),
                  value_of(c, "tokens_per_s_per_gpu"), value_of(c, "mfu_pct"), value_of(c, "memory_per_gpu_GiB"),
                  static_cast<long long>(c["gradient_accumulation"].get<int64_t>()), c["configuration"].get<std::string>().c_str(),
                  c["pareto"].get<bool>() ? "  (Pareto)" : "");
    s << line;
  }
  if (r["ranked"].size() > rows) s << "  ... " << (r["ranked"].size() - rows) << " more (--top N, or --format json)\n";
  s << "\nPareto front (" << (tpu ? "tokens per $" : "tokens/s") << " against memory per GPU):\n";
  size_t front_rows = 0;
  for (const json& c : r["pareto_front"]) {
    if (front_rows++ >= rows) {
      s << "  ... " << (r["pareto_front"].size() - rows) << " more\n";
      break;
    }
    s << "  #" << c["rank"] << " " << c["configuration"].get<std::string>() << ": ";
    if (c.contains("key_metrics"))
      s << (tpu ? with_interval(c["key_metrics"], "tokens_per_usd", 0) + " tokens/$" : with_interval(c["key_metrics"], "tokens_per_s", 0) + " tokens/s");
    else
      s << fixed(tpu ? value_of(c, "tokens_per_usd") : value_of(c, "tokens_per_s"), 0) << (tpu ? " tokens/$" : " tokens/s") << " (no interval run)";
    s << ", " << fixed(value_of(c, "memory_per_gpu_GiB"), 1) << " GiB per GPU\n";
  }
  const json& b = r["best"];
  if (b.is_null()) {
    s << "\nno configuration fits in memory\n";
    return s.str();
  }
  const json& km = b.contains("key_metrics") ? b["key_metrics"] : r["key_metrics"];
  s << "\nbest: " << b["configuration"].get<std::string>() << " (dp " << b["dp"] << ", gradient accumulation "
    << b["gradient_accumulation"] << ")\n";
  if (b.contains("time_to_train_days")) s << "  time to train " << with_interval(km, "time_to_train_days", 2) << " days\n";
  s << "  step " << with_interval(km, "step_time_ms", 1) << " ms, " << with_interval(km, "tokens_per_s", 0) << " tokens/s, MFU "
    << with_interval(km, "mfu_pct", 1) << " %, " << fixed(value_of(b, "memory_per_gpu_GiB"), 1) << " of "
    << fixed(value_of(b, "capacity_GiB"), 1) << " GiB per GPU\n";
  if (b.contains("tokens_per_usd")) s << "  " << with_interval(km, "tokens_per_usd", 0) << " tokens per $";
  if (b.contains("cost_usd")) s << ", cost to train $" << with_interval(km, "cost_usd", 0);
  if (b.contains("tokens_per_usd") || b.contains("cost_usd")) s << "\n";
  s << "  at the low cost bound the best is " << r["best_at_low_bound"].get<std::string>() << "; at the high, "
    << r["best_at_high_bound"].get<std::string>()
    << (r["best_holds_at_both_bounds"].get<bool>() ? " (the answer holds at both bounds)" : " (the answer depends on the bound)")
    << "\n";
  return s.str();
}

}  // namespace

int run_training_search(const json& doc, int64_t jobs, const std::string& format, const std::string& out, size_t rows,
                        CommandBudget& budget) {
  const search::TrainingSearchSpec spec = search::read_training_search(doc);
  // The search's work before any configuration is read: each one planned and
  // estimated as a training run is (the interval re-runs come on top).
  const int64_t space = search::training_search_space(spec);
  budget.add(static_cast<double>(space) * kUnitsPerConfiguration,
             std::to_string(space) + " configurations of the question, " + fixed(kUnitsPerConfiguration, 0) + " units each");
  const json r = search::run_training_search(spec, [&](size_t n, const std::function<void(size_t)>& task) {
                   parallel_for(n, jobs, task);
                 }).to_json();
  write_output(out, format == "json" ? r.dump(2) + "\n" : table(r, rows));
  return 0;
}

}  // namespace sightline::cli
