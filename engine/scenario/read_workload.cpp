// serving.workload: arrivals (a process or a CSV trace), prompt and output
// length distributions and the shared prefix.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/csv.hpp"
#include "core/error.hpp"
#include "core/parameter_schema.hpp"
#include "scenario/checks.hpp"
#include "scenario/policy_registry.hpp"
#include "scenario/simulation_sections.hpp"

namespace sightline::serve {

// ---- lengths --------------------------------------------------------------

LengthSpec read_length(const json& v, const std::string& path, int64_t max_len) {
  // A length is a token count or a distribution object: the schema lists the
  // count (an object's keys record themselves as they are read); its upper
  // bound is the model's context, so the schema gives none.
  if (ParameterSchemaRecorder* rec = ParameterSchemaRecorder::active()) rec->record(path, "integer", 1, nullptr, std::nullopt);
  LengthSpec l;
  l.max = max_len;
  if (v.is_number_integer() || v.is_number_unsigned()) {
    l.dist = LengthDist::Fixed;
    l.value = static_cast<double>(read_integer(v, path, 1, max_len));
    l.min = l.max = static_cast<int64_t>(l.value);
    return l;
  }
  if (!v.is_object())
    fail(error_code::kType, path,
         "expected a token count or a distribution object such as {\"dist\": \"uniform\", \"min\": 1, \"max\": 1024}, "
         "got " + json_type_name(v));
  const std::string dist = peek_string(v, "dist");
  std::vector<std::string> keys = {"dist"};
  if (dist == "fixed") keys.insert(keys.end(), {"value"});
  else if (dist == "uniform") keys.insert(keys.end(), {"min", "max"});
  else if (dist == "normal") keys.insert(keys.end(), {"mean", "stddev", "min", "max"});
  else if (dist == "lognormal") keys.insert(keys.end(), {"mean", "cv", "min", "max"});
  else if (dist == "zipf") keys.insert(keys.end(), {"min", "max", "theta"});
  else keys.insert(keys.end(), {"value", "min", "max", "mean", "stddev", "cv", "theta"});
  ObjectReader r(v, path, keys);
  l.dist = pick<LengthDist>(r.choice("dist", registry_names(length_distributions())),
                            {{"fixed", LengthDist::Fixed},
                             {"uniform", LengthDist::Uniform},
                             {"normal", LengthDist::Normal},
                             {"lognormal", LengthDist::Lognormal},
                             {"zipf", LengthDist::Zipf}});
  const double md = static_cast<double>(max_len);
  switch (l.dist) {
    case LengthDist::Fixed:
      l.value = static_cast<double>(r.integer("value", 1, max_len));
      l.min = l.max = static_cast<int64_t>(l.value);
      return l;
    case LengthDist::Uniform:
    case LengthDist::Zipf:
      l.min = r.integer("min", 1, max_len);
      l.max = r.integer("max", 1, max_len);
      if (l.dist == LengthDist::Zipf) l.theta = r.number("theta", 0.0, 10.0, 1.0);
      break;
    case LengthDist::Normal:
      l.mean = r.number("mean", 1.0, md);
      l.stddev = r.number("stddev", 0.0, md);
      l.min = r.integer("min", 1, max_len, 1);
      l.max = r.integer("max", 1, max_len, max_len);
      break;
    case LengthDist::Lognormal:
      l.mean = r.number("mean", 1.0, md);
      l.cv = r.number("cv", 0.0, 100.0);
      l.min = r.integer("min", 1, max_len, 1);
      l.max = r.integer("max", 1, max_len, max_len);
      break;
  }
  if (l.min > l.max)
    fail(error_code::kConstraint, r.child_path("max"),
         "max (" + std::to_string(l.max) + ") must be at least min (" + std::to_string(l.min) + ")");
  if (l.dist == LengthDist::Zipf && l.max - l.min >= (int64_t{1} << 20))
    fail(error_code::kRange, r.child_path("max"), "a zipf length range spans at most 1048576 values");
  return l;
}

json length_to_json(const LengthSpec& l) {
  switch (l.dist) {
    case LengthDist::Fixed: return static_cast<int64_t>(l.value);
    case LengthDist::Uniform: return {{"dist", "uniform"}, {"min", l.min}, {"max", l.max}};
    case LengthDist::Zipf: return {{"dist", "zipf"}, {"min", l.min}, {"max", l.max}, {"theta", l.theta}};
    case LengthDist::Normal:
      return {{"dist", "normal"}, {"mean", l.mean}, {"stddev", l.stddev}, {"min", l.min}, {"max", l.max}};
    case LengthDist::Lognormal:
      return {{"dist", "lognormal"}, {"mean", l.mean}, {"cv", l.cv}, {"min", l.min}, {"max", l.max}};
  }
  return nullptr;
}

namespace {

// ---- trace CSV --------------------------------------------------------------

std::vector<TraceRow> read_trace(const json& v, const std::string& path, int64_t max_len, int64_t max_rows) {
  const std::vector<std::pair<std::string, std::string>> lines = csv_lines(v, path);
  static const std::vector<std::string> kColumns = {"arrival_s", "prompt_tokens", "output_tokens", "prefix_group",
                                                    "prefix_tokens"};
  std::vector<TraceRow> rows;
  bool header_seen = false;
  for (size_t li = 0; li < lines.size(); ++li) {
    const std::string line = csv_trim(lines[li].second);
    const std::string& lpath = lines[li].first;
    const std::string where = "line " + std::to_string(li + 1) + ": ";
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = csv_split_fields(line, ',');
    double first = 0;
    if (!header_seen && rows.empty() && !csv_parse_decimal(f[0], first)) {
      header_seen = true;
      for (size_t i = 0; i < f.size(); ++i)
        if (i >= kColumns.size() || f[i] != kColumns[i])
          fail(error_code::kInvalidValue, lpath,
               where + "the header must name the columns arrival_s,prompt_tokens,output_tokens[,prefix_group[,prefix_tokens]]; "
                       "got '" + line + "'");
      continue;
    }
    if (f.size() < 3 || f.size() > 5)
      fail(error_code::kInvalidValue, lpath,
           where + "expected 3 to 5 fields (arrival_s,prompt_tokens,output_tokens[,prefix_group[,prefix_tokens]]), got " +
               std::to_string(f.size()));
    double vals[5] = {0, 0, 0, -1, 0};
    for (size_t i = 0; i < f.size(); ++i) {
      if (!csv_parse_decimal(f[i], vals[i]))
        fail(error_code::kType, lpath, where + "field " + kColumns[i] + " is not a number: '" + printable(f[i], 40) + "'");
      if (i > 0 && vals[i] != std::floor(vals[i]))
        fail(error_code::kType, lpath, where + kColumns[i] + " must be an integer");
    }
    TraceRow r;
    r.arrival_s = vals[0];
    r.prompt_tokens = static_cast<int64_t>(vals[1]);
    r.output_tokens = static_cast<int64_t>(vals[2]);
    if (r.arrival_s < 0 || r.arrival_s > 1e7)
      fail(error_code::kRange, lpath, where + "arrival_s must be in [0, 1e7]");
    if (r.prompt_tokens < 1 || r.prompt_tokens > max_len || r.output_tokens < 1 || r.output_tokens > max_len)
      fail(error_code::kRange, lpath,
           where + "prompt_tokens and output_tokens must be in [1, " + std::to_string(max_len) + "]");
    if (f.size() >= 4) {
      if (vals[3] < -1 || vals[3] > 1e6) fail(error_code::kRange, lpath, where + "prefix_group must be in [-1, 1000000]");
      r.prefix_group = static_cast<int64_t>(vals[3]);
      r.prefix_tokens = f.size() == 5 ? static_cast<int64_t>(vals[4]) : 0;
      if (r.prefix_group >= 0 && f.size() < 5)
        fail(error_code::kInvalidValue, lpath, where + "a prefix_group needs its prefix_tokens column");
      if (r.prefix_tokens < 0 || r.prefix_tokens > r.prompt_tokens)
        fail(error_code::kRange, lpath, where + "prefix_tokens must be in [0, prompt_tokens]");
      if (r.prefix_group < 0) r.prefix_tokens = 0;
    }
    rows.push_back(r);
    if (static_cast<int64_t>(rows.size()) > max_rows)
      fail(error_code::kConstraint, lpath,
           where + "the trace has more than limits.max_requests (" + std::to_string(max_rows) + ") rows");
  }
  if (rows.empty()) fail(error_code::kInvalidValue, path, "the trace has no rows");
  std::stable_sort(rows.begin(), rows.end(),
                   [](const TraceRow& a, const TraceRow& b) { return a.arrival_s < b.arrival_s; });
  return rows;
}

}  // namespace

WorkloadSpec read_workload(const json& v, const std::string& path, int64_t max_len, const LimitSpec& limits) {
  const bool sessions = v.is_object() && v.contains("sessions");
  ObjectReader r(v, path,
                 sessions ? std::vector<std::string>{"arrival", "num_sessions", "duration_s", "sessions"}
                          : std::vector<std::string>{"arrival", "num_requests", "duration_s", "prompt_tokens",
                                                     "output_tokens", "shared_prefix"});
  WorkloadSpec w;
  record_parameter(r.child_path("sessions"), "object");
  if (sessions && r.required("sessions").is_object() && r.required("sessions").contains("csv")) {
    read_session_trace_workload(r, w, max_len, limits);
    return w;
  }
  const std::string apath = r.child_path("arrival");
  const json& av = r.required("arrival");
  const std::string process = peek_string(av, "process");
  std::vector<std::string> akeys = {"process"};
  const ArrivalProcessRules* rules = arrival_process_rules(process);
  const std::vector<std::string>& taken = rules ? rules->keys : arrival_keys_of_any_process();
  akeys.insert(akeys.end(), taken.begin(), taken.end());
  ObjectReader ar(av, apath, akeys);
  w.arrival.process = pick<ArrivalProcess>(ar.choice("process", registry_names(arrival_processes())),
                                           {{"poisson", ArrivalProcess::Poisson},
                                            {"gamma", ArrivalProcess::Gamma},
                                            {"fixed", ArrivalProcess::Fixed},
                                            {"all_at_once", ArrivalProcess::AllAtOnce},
                                            {"trace", ArrivalProcess::Trace},
                                            {"closed_loop", ArrivalProcess::ClosedLoop}});
  const bool rate_based = w.arrival.process == ArrivalProcess::Poisson || w.arrival.process == ArrivalProcess::Gamma ||
                          w.arrival.process == ArrivalProcess::Fixed;
  if (rate_based) w.arrival.rate_qps = ar.number("rate_qps", 1e-6, 1e6);
  if (w.arrival.process == ArrivalProcess::Gamma) w.arrival.cv = ar.number("cv", 0.01, 100.0);
  if (rate_based && ar.has("max_concurrency")) {
    w.arrival.max_concurrency = ar.integer("max_concurrency", 1, limits.max_requests);
    if (sessions)
      fail(error_code::kConstraint, ar.child_path("max_concurrency"),
           "max_concurrency caps requests, not sessions: a session's turns already wait on each other");
  }
  if (w.arrival.process == ArrivalProcess::ClosedLoop) {
    w.arrival.concurrency = ar.integer("concurrency", 1, limits.max_requests);
    w.arrival.think_time_s = ar.number("think_time_s", 0.0, 1e6, 0.0);
  }

  if (sessions) {
    read_session_workload(r, w, max_len, limits, rate_based, ar.child_path("process"));
    return w;
  }

  if (w.arrival.process == ArrivalProcess::Trace) {
    for (const char* k : {"prompt_tokens", "output_tokens", "shared_prefix", "duration_s"})
      if (r.has(k))
        fail(error_code::kConstraint, r.child_path(k),
             std::string("a trace gives arrivals and lengths itself; remove '") + k + "'");
    w.arrival.trace = read_trace(ar.required("csv"), ar.child_path("csv"), max_len, limits.max_requests);
    w.num_requests = r.integer("num_requests", 1, limits.max_requests, static_cast<int64_t>(w.arrival.trace.size()));
    w.num_requests = std::min<int64_t>(w.num_requests, static_cast<int64_t>(w.arrival.trace.size()));
    w.prompt.dist = w.output.dist = LengthDist::Fixed;
    int64_t pmax = 1, omax = 1;
    for (const auto& row : w.arrival.trace) {
      pmax = std::max(pmax, row.prompt_tokens);
      omax = std::max(omax, row.output_tokens);
    }
    w.prompt.max = pmax;
    w.output.max = omax;
    return w;
  }

  const bool has_n = r.has("num_requests");
  const bool has_d = r.has("duration_s");
  if (has_n == has_d)
    fail(has_n ? error_code::kConstraint : error_code::kMissingKey, r.child_path(has_n ? "duration_s" : "num_requests"),
         "give exactly one of num_requests or duration_s");
  if (has_n) {
    w.num_requests = r.integer("num_requests", 1, 2000000);
    if (w.num_requests > limits.max_requests)
      fail(error_code::kConstraint, r.child_path("num_requests"),
           "num_requests (" + std::to_string(w.num_requests) + ") exceeds limits.max_requests (" +
               std::to_string(limits.max_requests) + ")");
  } else {
    if (!rate_based)
      fail(error_code::kConstraint, r.child_path("duration_s"),
           "duration_s needs a rate-based arrival process (poisson, gamma, fixed); use num_requests");
    w.duration_s = r.number("duration_s", 1e-3, 1e7);
  }
  w.prompt = read_length(r.required("prompt_tokens"), r.child_path("prompt_tokens"), max_len - 1);
  w.output = read_length(r.required("output_tokens"), r.child_path("output_tokens"), max_len - 1);
  if (w.prompt.dist == LengthDist::Fixed && w.output.dist == LengthDist::Fixed &&
      static_cast<int64_t>(w.prompt.value + w.output.value) > max_len)
    fail(error_code::kConstraint, r.child_path("output_tokens"),
         "prompt_tokens + output_tokens = " + std::to_string(static_cast<int64_t>(w.prompt.value + w.output.value)) +
             " exceeds max_model_len (" + std::to_string(max_len) + ")");
  record_parameter(r.child_path("shared_prefix"), "object");
  if (const json* sp = r.find("shared_prefix")) {
    ObjectReader pr(*sp, r.child_path("shared_prefix"), {"tokens", "request_fraction", "groups"});
    w.prefix.enabled = true;
    w.prefix.tokens = pr.integer("tokens", 1, max_len - 1);
    w.prefix.request_fraction = pr.number("request_fraction", 0.0, 1.0, 1.0);
    w.prefix.groups = static_cast<int>(pr.integer("groups", 1, 100000, 1));
    if (w.prompt.max_possible() <= w.prefix.tokens && w.prompt.dist == LengthDist::Fixed)
      fail(error_code::kConstraint, pr.child_path("tokens"),
           "the shared prefix (" + std::to_string(w.prefix.tokens) + " tokens) must be shorter than the prompt (" +
               std::to_string(w.prompt.max_possible()) + ")");
  }
  return w;
}

json workload_to_json(const WorkloadSpec& w) {
  json a = {{"process", to_string(w.arrival.process)}};
  if (w.arrival.process == ArrivalProcess::Poisson || w.arrival.process == ArrivalProcess::Fixed ||
      w.arrival.process == ArrivalProcess::Gamma)
    a["rate_qps"] = w.arrival.rate_qps;
  if (w.arrival.process == ArrivalProcess::Gamma) a["cv"] = w.arrival.cv;
  if (w.arrival.max_concurrency > 0) a["max_concurrency"] = w.arrival.max_concurrency;
  if (w.arrival.process == ArrivalProcess::ClosedLoop) {
    a["concurrency"] = w.arrival.concurrency;
    a["think_time_s"] = w.arrival.think_time_s;
  }
  if (w.sessions.enabled && !w.sessions.trace.empty())
    return {{"sessions", sessions_to_json(w.sessions)}, {"num_sessions", w.sessions.num_sessions}};
  if (w.sessions.enabled) {
    json j = {{"arrival", a}, {"sessions", sessions_to_json(w.sessions)}};
    if (w.sessions.num_sessions > 0) j["num_sessions"] = w.sessions.num_sessions;
    else j["duration_s"] = w.duration_s;
    return j;
  }
  if (w.arrival.process == ArrivalProcess::Trace) {
    json lines = json::array();
    lines.push_back("arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens");
    for (const auto& row : w.arrival.trace) {
      std::ostringstream s;
      s.precision(17);
      s << row.arrival_s << "," << row.prompt_tokens << "," << row.output_tokens << "," << row.prefix_group << ","
        << row.prefix_tokens;
      lines.push_back(s.str());
    }
    a["csv"] = lines;
    return {{"arrival", a}, {"num_requests", w.num_requests}};
  }
  json j = {{"arrival", a}, {"prompt_tokens", length_to_json(w.prompt)}, {"output_tokens", length_to_json(w.output)}};
  if (w.num_requests > 0) j["num_requests"] = w.num_requests;
  else j["duration_s"] = w.duration_s;
  if (w.prefix.enabled)
    j["shared_prefix"] = {
        {"tokens", w.prefix.tokens}, {"request_fraction", w.prefix.request_fraction}, {"groups", w.prefix.groups}};
  return j;
}

}  // namespace sightline::serve
