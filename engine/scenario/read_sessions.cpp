// serving.workload.sessions: multi-turn sessions (turns, new tokens per turn,
// think/tool time, a shared system prompt). The workload's num_sessions or
// duration_s and its arrival process (sessions per second) are read by
// read_workload.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "scenario/checks.hpp"
#include "scenario/simulation_sections.hpp"

namespace sightline::serve {

namespace {

// A time in seconds: a number (fixed) or {"dist": fixed|uniform|exponential|lognormal, ...}.
TimeSpec read_time(const json& v, const std::string& path) {
  TimeSpec t;
  if (v.is_number()) {
    t.value_s = read_number(v, path, 0.0, 1e6);
    return t;
  }
  if (!v.is_object())
    fail(error_code::kType, path,
         "expected seconds or a distribution such as {\"dist\": \"exponential\", \"mean_s\": 5}, got " +
             json_type_name(v));
  const std::string dist = peek_string(v, "dist");
  std::vector<std::string> keys = {"dist"};
  if (dist == "fixed") keys.push_back("value_s");
  else if (dist == "uniform") keys.insert(keys.end(), {"min_s", "max_s"});
  else if (dist == "exponential") keys.push_back("mean_s");
  else if (dist == "lognormal") keys.insert(keys.end(), {"mean_s", "cv"});
  else keys.insert(keys.end(), {"value_s", "min_s", "max_s", "mean_s", "cv"});
  ObjectReader r(v, path, keys);
  const std::string name = r.choice("dist", {"fixed", "uniform", "exponential", "lognormal"});
  if (name == "fixed") {
    t.value_s = r.number("value_s", 0.0, 1e6);
  } else if (name == "uniform") {
    t.dist = TimeDist::Uniform;
    t.min_s = r.number("min_s", 0.0, 1e6);
    t.max_s = r.number("max_s", 0.0, 1e6);
    if (t.max_s < t.min_s) fail(error_code::kConstraint, r.child_path("max_s"), "max_s must be at least min_s");
  } else {
    t.dist = name == "exponential" ? TimeDist::Exponential : TimeDist::Lognormal;
    t.mean_s = r.number("mean_s", 1e-6, 1e6);
    if (t.dist == TimeDist::Lognormal) t.cv = r.number("cv", 0.0, 100.0);
  }
  return t;
}

json time_to_json(const TimeSpec& t) {
  switch (t.dist) {
    case TimeDist::Fixed: return t.value_s;
    case TimeDist::Uniform: return {{"dist", "uniform"}, {"min_s", t.min_s}, {"max_s", t.max_s}};
    case TimeDist::Exponential: return {{"dist", "exponential"}, {"mean_s", t.mean_s}};
    case TimeDist::Lognormal: return {{"dist", "lognormal"}, {"mean_s", t.mean_s}, {"cv", t.cv}};
  }
  return nullptr;
}

}  // namespace

SessionSpec read_sessions(const json& v, const std::string& path, int64_t max_len) {
  const bool trace = v.is_object() && v.contains("csv");
  ObjectReader r(v, path,
                 trace ? std::vector<std::string>{"csv", "system_prompt_tokens"}
                       : std::vector<std::string>{"turns", "first_input_tokens", "input_tokens", "output_tokens",
                                                  "think_time_s", "system_prompt_tokens"});
  SessionSpec s;
  s.enabled = true;
  if (trace) {
    s.system_prompt_tokens = r.integer("system_prompt_tokens", 0, max_len - 2, 0);
    read_session_trace(r.required("csv"), r.child_path("csv"), max_len - 1 - s.system_prompt_tokens, s);
    return s;
  }
  s.turns = read_length(r.required("turns"), r.child_path("turns"), 10000);
  s.system_prompt_tokens = r.integer("system_prompt_tokens", 0, max_len - 2, 0);
  // A first turn holds the system prompt, its new input and its output.
  const int64_t room = max_len - 1 - s.system_prompt_tokens;
  s.first_input = read_length(r.required("first_input_tokens"), r.child_path("first_input_tokens"), room);
  s.input = read_length(r.required("input_tokens"), r.child_path("input_tokens"), room);
  s.output = read_length(r.required("output_tokens"), r.child_path("output_tokens"), room);
  if (s.system_prompt_tokens + s.first_input.max_possible() + s.output.max_possible() > max_len &&
      s.first_input.dist == LengthDist::Fixed && s.output.dist == LengthDist::Fixed)
    fail(error_code::kConstraint, r.child_path("first_input_tokens"),
         "system_prompt_tokens + first_input_tokens + output_tokens exceeds max_model_len (" + std::to_string(max_len) +
             "): no turn fits");
  s.think_time = read_time(r.required("think_time_s"), r.child_path("think_time_s"));
  return s;
}

void read_session_trace_workload(const ObjectReader& r, WorkloadSpec& w, int64_t max_len, const LimitSpec& limits) {
  // A multi-turn trace gives the sessions' times itself.
  for (const char* k : {"arrival", "duration_s"})
    if (r.has(k))
      fail(error_code::kConstraint, r.child_path(k),
           std::string("a sessions trace (sessions.csv) gives the arrivals itself; remove '") + k + "'");
  w.arrival.process = ArrivalProcess::Trace;
  w.sessions = read_sessions(r.required("sessions"), r.child_path("sessions"), max_len);
  const int64_t n = count_trace_sessions(w.sessions.trace);
  w.sessions.num_sessions = r.integer("num_sessions", 1, std::min<int64_t>(limits.max_requests, 1000000), n);
  w.sessions.num_sessions = std::min(w.sessions.num_sessions, n);
  w.prompt = w.sessions.first_input;  // bounds of the lengths, for the run estimate
  w.output = w.sessions.output;
}

void read_session_workload(const ObjectReader& r, WorkloadSpec& w, int64_t max_len, const LimitSpec& limits,
                           bool rate_based, const std::string& process_path) {
  if (w.arrival.process == ArrivalProcess::Trace || w.arrival.process == ArrivalProcess::ClosedLoop)
    fail(error_code::kConstraint, process_path,
         "sessions arrive by poisson, gamma, fixed or all_at_once; replay a multi-turn trace with sessions.csv");
  const bool has_n = r.has("num_sessions");
  if (has_n == r.has("duration_s"))
    fail(has_n ? error_code::kConstraint : error_code::kMissingKey, r.child_path(has_n ? "duration_s" : "num_sessions"),
         "give exactly one of num_sessions or duration_s");
  if (!has_n && !rate_based)
    fail(error_code::kConstraint, r.child_path("duration_s"),
         "duration_s needs a rate-based arrival process (poisson, gamma, fixed); use num_sessions");
  w.sessions = read_sessions(r.required("sessions"), r.child_path("sessions"), max_len);
  if (has_n) w.sessions.num_sessions = r.integer("num_sessions", 1, std::min<int64_t>(limits.max_requests, 1000000));
  else w.duration_s = r.number("duration_s", 1e-3, 1e7);
  w.prompt = w.sessions.first_input;  // the generator reads the session's own lengths; these bound the first turn
  w.output = w.sessions.output;
}

json sessions_to_json(const SessionSpec& s) {
  if (!s.trace.empty()) return session_trace_to_json(s);
  return {{"turns", length_to_json(s.turns)},
          {"first_input_tokens", length_to_json(s.first_input)},
          {"input_tokens", length_to_json(s.input)},
          {"output_tokens", length_to_json(s.output)},
          {"think_time_s", time_to_json(s.think_time)},
          {"system_prompt_tokens", s.system_prompt_tokens}};
}

}  // namespace sightline::serve
