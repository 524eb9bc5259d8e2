#include "scenario/simulation_spec.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/error.hpp"
#include "mem/inference_memory.hpp"
#include "scenario/checks.hpp"
#include "scenario/scenario.hpp"
#include "scenario/memory_plan.hpp"
#include "scenario/metric_catalogue.hpp"
#include "scenario/policy_registry.hpp"

namespace sightline::serve {

const char* to_string(ArrivalProcess v) {
  switch (v) {
    case ArrivalProcess::Poisson: return "poisson";
    case ArrivalProcess::Gamma: return "gamma";
    case ArrivalProcess::Fixed: return "fixed";
    case ArrivalProcess::AllAtOnce: return "all_at_once";
    case ArrivalProcess::Trace: return "trace";
  }
  return "?";
}
const char* to_string(LengthDist v) {
  switch (v) {
    case LengthDist::Fixed: return "fixed";
    case LengthDist::Uniform: return "uniform";
    case LengthDist::Normal: return "normal";
    case LengthDist::Lognormal: return "lognormal";
    case LengthDist::Zipf: return "zipf";
  }
  return "?";
}
const char* to_string(RouterKind v) {
  switch (v) {
    case RouterKind::RoundRobin: return "round_robin";
    case RouterKind::LeastOutstanding: return "least_outstanding";
    case RouterKind::LeastKvLoad: return "least_kv_load";
  }
  return "?";
}
const char* to_string(PoolRole v) {
  switch (v) {
    case PoolRole::Mixed: return "mixed";
    case PoolRole::Prefill: return "prefill";
    case PoolRole::Decode: return "decode";
  }
  return "?";
}
const char* to_string(SchedulerPolicy v) {
  switch (v) {
    case SchedulerPolicy::Continuous: return "continuous";
    case SchedulerPolicy::ChunkedPrefill: return "chunked_prefill";
    case SchedulerPolicy::Static: return "static";
  }
  return "?";
}
const char* to_string(Priority v) {
  switch (v) {
    case Priority::PrefillFirst: return "prefill_first";
    case Priority::DecodeFirst: return "decode_first";
    case Priority::Fcfs: return "fcfs";
  }
  return "?";
}
const char* to_string(KvAllocation v) { return v == KvAllocation::Paged ? "paged" : "contiguous"; }
const char* to_string(PreemptionMode v) { return v == PreemptionMode::Recompute ? "recompute" : "swap"; }
const char* to_string(SpecMethod v) {
  switch (v) {
    case SpecMethod::None: return "none";
    case SpecMethod::Draft: return "draft";
    case SpecMethod::Ngram: return "ngram";
    case SpecMethod::Mtp: return "mtp";
  }
  return "?";
}

int64_t LengthSpec::max_possible() const {
  switch (dist) {
    case LengthDist::Fixed: return static_cast<int64_t>(value);
    default: return max;
  }
}

namespace {

template <typename E>
E pick(const std::string& name, const std::vector<std::pair<const char*, E>>& table) {
  for (const auto& [n, e] : table)
    if (name == n) return e;
  return table.front().second;
}

std::string peek_string(const json& v, const char* key) {
  if (v.is_object()) {
    auto it = v.find(key);
    if (it != v.end() && it->is_string()) return it->get<std::string>();
  }
  return "";
}

// ---- lengths --------------------------------------------------------------

LengthSpec read_length(const json& v, const std::string& path, int64_t max_len) {
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

// ---- trace CSV --------------------------------------------------------------

// Plain decimal syntax only ([-]digits[.digits][e[+-]digits]): strtod alone
// would also take hexadecimal, "inf", "nan" and leading blanks.
bool is_decimal_number(const std::string& f) {
  size_t i = 0;
  const auto digits = [&] {
    const size_t start = i;
    while (i < f.size() && f[i] >= '0' && f[i] <= '9') ++i;
    return i > start;
  };
  if (i < f.size() && f[i] == '-') ++i;
  const bool int_part = digits();
  bool frac_part = false;
  if (i < f.size() && f[i] == '.') {
    ++i;
    frac_part = digits();
  }
  if (!int_part && !frac_part) return false;
  if (i < f.size() && (f[i] == 'e' || f[i] == 'E')) {
    ++i;
    if (i < f.size() && (f[i] == '+' || f[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == f.size();
}

bool parse_number(const std::string& field, double& out) {
  if (!is_decimal_number(field)) return false;
  const char* begin = field.c_str();
  char* end = nullptr;
  out = std::strtod(begin, &end);
  return end == begin + field.size() && std::isfinite(out);
}

std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(trim(cur));
  return out;
}

std::vector<TraceRow> read_trace(const json& v, const std::string& path, int64_t max_len, int64_t max_rows) {
  // Lines with the JSON pointer that names each (array form) or the string's pointer and a line number.
  std::vector<std::pair<std::string, std::string>> lines;
  if (v.is_string()) {
    std::string cur;
    for (char c : v.get<std::string>()) {
      if (c == '\n') {
        lines.emplace_back(path, cur);
        cur.clear();
      } else if (c != '\r') {
        cur += c;
      }
    }
    lines.emplace_back(path, cur);
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) fail(error_code::kType, pointer_append(path, i), "expected a CSV line (string)");
      lines.emplace_back(pointer_append(path, i), v[i].get<std::string>());
    }
  } else {
    fail(error_code::kType, path, "expected CSV text (a string) or an array of CSV lines, got " + json_type_name(v));
  }
  static const std::vector<std::string> kColumns = {"arrival_s", "prompt_tokens", "output_tokens", "prefix_group",
                                                    "prefix_tokens"};
  std::vector<TraceRow> rows;
  bool header_seen = false;
  for (size_t li = 0; li < lines.size(); ++li) {
    const std::string line = trim(lines[li].second);
    const std::string& lpath = lines[li].first;
    const std::string where = "line " + std::to_string(li + 1) + ": ";
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = split(line, ',');
    double first = 0;
    if (!header_seen && rows.empty() && !parse_number(f[0], first)) {
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
      if (!parse_number(f[i], vals[i]))
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

// ---- sections ---------------------------------------------------------------

LimitSpec read_limits(const json* v, const std::string& path) {
  LimitSpec l;
  if (!v) return l;
  ObjectReader r(*v, path, {"max_requests", "max_events", "max_sim_time_s"});
  l.max_requests = r.integer("max_requests", 1, 2000000, l.max_requests);
  l.max_events = r.integer("max_events", 1000, 1000000000, l.max_events);
  l.max_sim_time_s = r.number("max_sim_time_s", 1e-3, 1e7, l.max_sim_time_s);
  return l;
}

WorkloadSpec read_workload(const json& v, const std::string& path, int64_t max_len, const LimitSpec& limits) {
  ObjectReader r(v, path, {"arrival", "num_requests", "duration_s", "prompt_tokens", "output_tokens", "shared_prefix"});
  WorkloadSpec w;
  const std::string apath = r.child_path("arrival");
  const json& av = r.required("arrival");
  const std::string process = peek_string(av, "process");
  std::vector<std::string> akeys = {"process"};
  if (process == "poisson" || process == "fixed") akeys.push_back("rate_qps");
  else if (process == "gamma") akeys.insert(akeys.end(), {"rate_qps", "cv"});
  else if (process == "trace") akeys.push_back("csv");
  else if (process != "all_at_once") akeys.insert(akeys.end(), {"rate_qps", "cv", "csv"});
  ObjectReader ar(av, apath, akeys);
  w.arrival.process = pick<ArrivalProcess>(ar.choice("process", registry_names(arrival_processes())),
                                           {{"poisson", ArrivalProcess::Poisson},
                                            {"gamma", ArrivalProcess::Gamma},
                                            {"fixed", ArrivalProcess::Fixed},
                                            {"all_at_once", ArrivalProcess::AllAtOnce},
                                            {"trace", ArrivalProcess::Trace}});
  const bool rate_based = w.arrival.process == ArrivalProcess::Poisson || w.arrival.process == ArrivalProcess::Gamma ||
                          w.arrival.process == ArrivalProcess::Fixed;
  if (rate_based) w.arrival.rate_qps = ar.number("rate_qps", 1e-6, 1e6);
  if (w.arrival.process == ArrivalProcess::Gamma) w.arrival.cv = ar.number("cv", 0.01, 100.0);

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

void check_layout(const ModelArch& m, const ParallelLayout& l, const HardwareSpec& hw, const std::string& tp_path,
                  const std::string& pp_path) {
  check_tensor_parallel(m, l.tp, tp_path);
  if (m.num_layers % l.pp != 0)
    fail(error_code::kConstraint, pp_path,
         "pp (" + std::to_string(l.pp) + ") must divide num_layers (" + std::to_string(m.num_layers) + ")");
  if (l.tp > hw.gpus_per_node)
    fail(error_code::kConstraint, tp_path,
         "tp (" + std::to_string(l.tp) + ") must fit inside one node (gpus_per_node = " +
             std::to_string(hw.gpus_per_node) + ")");
}

ClusterSpec read_cluster(const json* v, const std::string& path, const Scenario& s, const ParallelLayout& default_layout,
                         bool has_parallelism, const std::string& parallelism_path) {
  ClusterSpec c;
  const int total = s.hardware.total_gpus();
  if (!v) {
    const std::string tp_path = pointer_append(parallelism_path, "tp");
    check_layout(s.model, default_layout, s.hardware, tp_path, pointer_append(parallelism_path, "pp"));
    const int per = default_layout.tp * default_layout.pp;
    if (total % per != 0)
      fail(error_code::kConstraint, tp_path,
           "tp × pp = " + std::to_string(per) + " does not divide the " + std::to_string(total) +
               " GPUs of the hardware into whole replicas");
    PoolSpec p;
    p.name = "replicas";
    p.replicas = total / per;
    p.layout = default_layout;
    c.pools.push_back(p);
    return c;
  }
  if (has_parallelism)
    fail(error_code::kConstraint, parallelism_path,
         "with serving.cluster the parallelism is given per pool; remove serving.parallelism");
  ObjectReader r(*v, path, {"router", "pools", "kv_transfer_link"});
  c.router = pick<RouterKind>(r.choice("router", registry_names(routers()), "round_robin"),
                              {{"round_robin", RouterKind::RoundRobin},
                               {"least_outstanding", RouterKind::LeastOutstanding},
                               {"least_kv_load", RouterKind::LeastKvLoad}});
  const json& pools = r.required("pools");
  const std::string ppath = r.child_path("pools");
  if (!pools.is_array() || pools.empty())
    fail(pools.is_array() ? error_code::kInvalidValue : error_code::kType, ppath, "expected a non-empty array of pools");
  if (pools.size() > 64) fail(error_code::kRange, ppath, "at most 64 pools");
  int used = 0;
  int n_prefill = 0, n_decode = 0, n_mixed = 0;
  for (size_t i = 0; i < pools.size(); ++i) {
    const std::string ip = pointer_append(ppath, i);
    ObjectReader pr(pools[i], ip, {"name", "replicas", "tp", "pp", "gpu", "role", "intra_node"});
    PoolSpec p;
    p.name = pr.string("name", "pool" + std::to_string(i));
    p.replicas = static_cast<int>(pr.integer("replicas", 1, 4096, 1));
    p.layout.tp = static_cast<int>(pr.integer("tp", 1, 1024, 1));
    p.layout.pp = static_cast<int>(pr.integer("pp", 1, 1024, 1));
    if (const json* g = pr.find("gpu")) {
      p.gpu = read_gpu(*g, pr.child_path("gpu"));
      const Dtype act = s.precision.activations;
      if (p.gpu->peak_tflops_for(act) <= 0 && !(act == Dtype::BF16 && p.gpu->peak_tflops.bf16 > 0))
        fail(error_code::kConstraint, pr.child_path("gpu"),
             p.gpu->name + " has no " + dtype_name(act) + " support for this scenario's activations");
    }
    if (const json* link = pr.find("intra_node")) {
      p.intra_node = read_interconnect(*link, pr.child_path("intra_node"));
      if (p.intra_node->scope != "intra_node")
        fail(error_code::kConstraint, pr.child_path("intra_node"),
             "interconnect '" + p.intra_node->id + "' is an inter-node network; a pool's intra_node links its GPUs");
    } else if (p.gpu && !p.gpu->default_intra_node.empty() && p.gpu->id != s.hardware.gpu.id) {
      p.intra_node = read_interconnect(json(p.gpu->default_intra_node), pr.child_path("gpu"));
    }
    if (p.intra_node && p.intra_node->domain_gpus > 0 && p.layout.tp * p.layout.pp > p.intra_node->domain_gpus)
      fail(error_code::kConstraint, pr.child_path("tp"),
           "tp x pp (" + std::to_string(p.layout.tp * p.layout.pp) + ") exceeds the " +
               std::to_string(p.intra_node->domain_gpus) + " GPUs one '" + p.intra_node->id + "' domain joins");
    p.role = pick<PoolRole>(pr.choice("role", registry_names(pool_roles()), "mixed"),
                            {{"mixed", PoolRole::Mixed}, {"prefill", PoolRole::Prefill}, {"decode", PoolRole::Decode}});
    check_layout(s.model, p.layout, s.hardware, pr.child_path("tp"), pr.child_path("pp"));
    used += p.replicas * p.layout.tp * p.layout.pp;
    (p.role == PoolRole::Prefill ? n_prefill : p.role == PoolRole::Decode ? n_decode : n_mixed)++;
    c.pools.push_back(p);
  }
  if (used != total)
    fail(error_code::kConstraint, ppath,
         "the pools use " + std::to_string(used) + " GPUs (replicas × tp × pp), but the hardware has " +
             std::to_string(total) + " (gpus_per_node × nodes); they must match");
  if ((n_prefill > 0 || n_decode > 0) && (n_mixed > 0 || n_prefill == 0 || n_decode == 0))
    fail(error_code::kConstraint, ppath,
         "disaggregated serving needs at least one 'prefill' and one 'decode' pool and no 'mixed' pool");
  c.disaggregated = n_prefill > 0;
  if (const json* link = r.find("kv_transfer_link")) {
    if (!c.disaggregated)
      fail(error_code::kConstraint, r.child_path("kv_transfer_link"),
           "kv_transfer_link needs prefill and decode pools (disaggregated serving)");
    c.kv_transfer_link = read_interconnect(*link, r.child_path("kv_transfer_link"));
  } else if (c.disaggregated) {
    if (s.hardware.nodes > 1 && s.hardware.inter_node) c.kv_transfer_link = *s.hardware.inter_node;
    else if (s.hardware.intra_node) c.kv_transfer_link = *s.hardware.intra_node;
    else {
      InterconnectSpec pcie;
      pcie.id = "gpu-pcie";
      pcie.name = "PCIe of " + s.hardware.gpu.name;
      pcie.source = "the GPU preset's pcie_bandwidth_GBps";
      pcie.kind = "pcie";
      pcie.scope = "intra_node";
      pcie.bandwidth_per_gpu_GBps = s.hardware.gpu.pcie_bandwidth_GBps;
      pcie.latency_us = 5;
      c.kv_transfer_link = pcie;
    }
  }
  return c;
}

SchedulerSpec read_scheduler(const json* v, const std::string& path, int64_t max_len) {
  SchedulerSpec sc;
  const json empty = json::object();
  const std::string policy = v ? peek_string(*v, "policy") : "";
  std::vector<std::string> keys = {"policy", "priority", "max_num_seqs", "cpu_overhead_us"};
  if (policy == "static") keys.insert(keys.end(), {"batch_size", "max_wait_ms", "max_num_batched_tokens"});
  else if (policy == "chunked_prefill") keys.insert(keys.end(), {"chunk_size", "max_prefill_chunk"});
  else if (policy == "continuous" || policy.empty()) keys.insert(keys.end(), {"max_num_batched_tokens"});
  else keys.insert(keys.end(), {"batch_size", "max_wait_ms", "max_num_batched_tokens", "chunk_size", "max_prefill_chunk"});
  ObjectReader r(v ? *v : empty, path, keys);
  sc.policy = pick<SchedulerPolicy>(r.choice("policy", registry_names(scheduler_policies()), "continuous"),
                                    {{"continuous", SchedulerPolicy::Continuous},
                                     {"chunked_prefill", SchedulerPolicy::ChunkedPrefill},
                                     {"static", SchedulerPolicy::Static}});
  const char* default_priority = sc.policy == SchedulerPolicy::Continuous ? "prefill_first"
                                 : sc.policy == SchedulerPolicy::ChunkedPrefill ? "decode_first"
                                                                                : "fcfs";
  sc.priority = pick<Priority>(r.choice("priority", registry_names(scheduler_priorities()), default_priority),
                               {{"prefill_first", Priority::PrefillFirst},
                                {"decode_first", Priority::DecodeFirst},
                                {"fcfs", Priority::Fcfs}});
  sc.max_num_seqs = r.integer("max_num_seqs", 1, 65536, 256);
  sc.cpu_overhead_us = r.number("cpu_overhead_us", 0.0, 1e6, 0.0);
  if (sc.policy == SchedulerPolicy::ChunkedPrefill) {
    sc.max_num_batched_tokens = r.integer("chunk_size", 1, 1 << 20, 512);
    sc.max_prefill_chunk = r.integer("max_prefill_chunk", 1, sc.max_num_batched_tokens, sc.max_num_batched_tokens);
  } else {
    sc.max_num_batched_tokens = r.integer("max_num_batched_tokens", 1, 1 << 24, std::max<int64_t>(max_len, 2048));
  }
  if (sc.policy == SchedulerPolicy::Static) {
    sc.batch_size = r.integer("batch_size", 1, 65536, 8);
    sc.max_wait_ms = r.number("max_wait_ms", 0.0, 1e7, 0.0);
    if (sc.batch_size > sc.max_num_seqs) sc.max_num_seqs = sc.batch_size;
  }
  return sc;
}

json scheduler_to_json(const SchedulerSpec& sc) {
  json j = {{"policy", to_string(sc.policy)},
            {"priority", to_string(sc.priority)},
            {"max_num_seqs", sc.max_num_seqs},
            {"cpu_overhead_us", sc.cpu_overhead_us}};
  if (sc.policy == SchedulerPolicy::ChunkedPrefill) {
    j["chunk_size"] = sc.max_num_batched_tokens;
    j["max_prefill_chunk"] = sc.max_prefill_chunk;
  }
  else j["max_num_batched_tokens"] = sc.max_num_batched_tokens;
  if (sc.policy == SchedulerPolicy::Static) {
    j["batch_size"] = sc.batch_size;
    j["max_wait_ms"] = sc.max_wait_ms;
  }
  return j;
}

KvCacheSpec read_kv(const json* v, const std::string& path, const ModelArch& m) {
  KvCacheSpec kv;
  kv.max_model_len = m.max_context;
  if (!v) return kv;
  ObjectReader r(*v, path, {"allocation", "block_size", "gpu_memory_utilization", "watermark", "preemption",
                            "swap_space_GiB", "prefix_caching", "max_model_len"});
  kv.allocation = pick<KvAllocation>(r.choice("allocation", registry_names(kv_allocations()), "paged"),
                                     {{"paged", KvAllocation::Paged}, {"contiguous", KvAllocation::Contiguous}});
  kv.block_size = r.integer("block_size", 1, 4096, 16);
  kv.gpu_memory_utilization = r.number("gpu_memory_utilization", 0.05, 1.0, 0.9);
  kv.watermark = r.number("watermark", 0.0, 0.5, 0.01);
  kv.preemption = pick<PreemptionMode>(r.choice("preemption", registry_names(preemption_modes()), "recompute"),
                                       {{"recompute", PreemptionMode::Recompute}, {"swap", PreemptionMode::Swap}});
  kv.swap_space_GiB = r.number("swap_space_GiB", 0.0, 1e5, 4.0);
  kv.prefix_caching = r.boolean("prefix_caching", false);
  kv.max_model_len = r.integer("max_model_len", 2, m.max_context, m.max_context);
  if (kv.allocation == KvAllocation::Contiguous && kv.prefix_caching)
    fail(error_code::kConstraint, r.child_path("prefix_caching"),
         "prefix caching shares KV blocks and needs allocation \"paged\"");
  return kv;
}

SpeculativeSpec read_speculative(const json* v, const std::string& path, const Scenario& s, const ClusterSpec& c,
                                 const SchedulerSpec& sc) {
  SpeculativeSpec sp;
  if (!v) return sp;
  const std::string method = peek_string(*v, "method");
  std::vector<std::string> keys = {"method", "k", "acceptance_rate"};
  if (method == "draft") keys.insert(keys.end(), {"draft_model", "draft_tp"});
  else if (method == "ngram") keys.insert(keys.end(), {"ngram_lookup_us"});
  else if (method != "mtp") keys.insert(keys.end(), {"draft_model", "draft_tp", "ngram_lookup_us"});
  ObjectReader r(*v, path, keys);
  const std::string name = r.choice("method", registry_names(speculative_methods()));
  sp.method = name == "draft" ? SpecMethod::Draft : name == "mtp" ? SpecMethod::Mtp : SpecMethod::Ngram;
  sp.k = static_cast<int>(r.integer("k", 1, 16, 5));
  sp.acceptance_assumed = r.find("acceptance_rate") == nullptr;
  sp.acceptance_rate = r.number("acceptance_rate", 0.0, 1.0, 0.7);
  int min_tp = 1 << 30;
  for (const auto& p : c.pools) min_tp = std::min(min_tp, p.layout.tp);
  if (sp.method == SpecMethod::Draft) {
    sp.draft_model = read_model(r.required("draft_model"), r.child_path("draft_model"));
    if (sp.draft_model->vocab_size != s.model.vocab_size)
      fail(error_code::kConstraint, r.child_path("draft_model"),
           "the draft model's vocabulary (" + std::to_string(sp.draft_model->vocab_size) +
               ") must equal the target's (" + std::to_string(s.model.vocab_size) + ")");
    sp.draft_tp = static_cast<int>(r.integer("draft_tp", 1, 1024, min_tp));
    if (sp.draft_tp > min_tp)
      fail(error_code::kConstraint, r.child_path("draft_tp"),
           "draft_tp (" + std::to_string(sp.draft_tp) + ") must not exceed the target's tp (" + std::to_string(min_tp) + ")");
    check_tensor_parallel(*sp.draft_model, sp.draft_tp, r.child_path("draft_tp"));
  } else if (sp.method == SpecMethod::Mtp) {
    // The draft is the model's own MTP module(s), on the target's GPUs.
    if (s.model.mtp_layers <= 0)
      fail(error_code::kConstraint, r.child_path("method"),
           "method \"mtp\" drafts with the model's multi-token-prediction layers, and model '" + s.model.id +
               "' has none (mtp_layers 0; DeepSeek-V3/R1 and GLM-4.5 configs carry num_nextn_predict_layers). "
               "Use \"draft\" with a draft model or \"ngram\"");
  } else {
    sp.ngram_lookup_us = r.number("ngram_lookup_us", 0.0, 1e5, 20.0);
  }
  if (sc.policy == SchedulerPolicy::Static)
    fail(error_code::kConstraint, r.path(), "speculative decoding needs a continuous or chunked_prefill scheduler");
  return sp;
}

json speculative_to_json(const SpeculativeSpec& sp) {
  if (sp.method == SpecMethod::None) return nullptr;
  json j = {{"method", to_string(sp.method)}, {"k", sp.k}, {"acceptance_rate", sp.acceptance_rate}};
  if (sp.method == SpecMethod::Draft) {
    j["draft_model"] = sp.draft_model->to_json();
    j["draft_tp"] = sp.draft_tp;
  } else if (sp.method == SpecMethod::Ngram) {
    j["ngram_lookup_us"] = sp.ngram_lookup_us;
  }
  return j;
}

}  // namespace

namespace {

constexpr size_t kMaxCompareVariants = 16;

// One comparison variant: the scenario with `serving` = `serving` (less its
// compare) and the merge patch applied, read and checked like any scenario.
SimulationSpec::CompareVariant read_compare_variant(const json& item, const std::string& cpath, const Scenario& s,
                                                    const json& serving) {
  SimulationSpec::CompareVariant out;
  ObjectReader cr(item, cpath, {"label", "patch"});
  out.label = cr.string("label", "baseline");
  const json& patch = cr.required("patch");
  const std::string patch_path = cr.child_path("patch");
  require_object(patch, patch_path);
  if (patch.contains("serving") && patch["serving"].is_object() && patch["serving"].contains("compare"))
    fail(error_code::kConstraint, pointer_append(pointer_append(patch_path, "serving"), "compare"),
         "a comparison variant cannot itself have a comparison");
  json doc = scenario_to_json(s);
  doc["serving"] = serving;
  doc["serving"].erase("compare");
  doc.merge_patch(patch);
  try {
    auto variant = std::make_shared<Scenario>(read_scenario(doc));
    if (!variant->serving || variant->serving->mode != "simulate")
      fail(error_code::kConstraint, patch_path, "the comparison variant must stay in serving mode \"simulate\"");
    out.scenario = variant;
  } catch (const SightlineError& e) {
    // Point into the patch when the offending value came from it.
    std::string p = e.path();
    bool in_patch = false;
    try {
      in_patch = !p.empty() && patch.contains(json::json_pointer(p));
    } catch (...) {
      in_patch = false;
    }
    fail(e.code().c_str(), in_patch ? patch_path + p : patch_path,
         "comparison variant: " + std::string(e.what()) + (in_patch || p.empty() ? "" : " (at " + p + ")"));
  }
  out.patch = patch;
  return out;
}

}  // namespace

std::shared_ptr<const SimulationSpec> read_simulation(const json& v, const std::string& path, const Scenario& s,
                                                      ParallelLayout& default_layout) {
  ObjectReader r(v, path,
                 {"mode", "parallelism", "attention", "runtime_overhead_GiB", "workload", "cluster", "scheduler",
                  "kv_cache", "speculative", "lora", "moe", "colocated_model", "slo", "max_qps_search",
                  "steady_state", "compare", "key_metrics", "outputs", "limits"});
  auto spec = std::make_shared<SimulationSpec>();
  SimulationSpec& sp = *spec;
  if (const json* par = r.find("parallelism")) {
    ObjectReader pr(*par, r.child_path("parallelism"), {"tp", "pp"});
    default_layout.tp = static_cast<int>(pr.integer("tp", 1, 1024, 1));
    default_layout.pp = static_cast<int>(pr.integer("pp", 1, 1024, 1));
  }
  sp.limits = read_limits(r.find("limits"), r.child_path("limits"));
  sp.kv = read_kv(r.find("kv_cache"), r.child_path("kv_cache"), s.model);
  sp.workload = read_workload(r.required("workload"), r.child_path("workload"), sp.kv.max_model_len, sp.limits);
  sp.cluster = read_cluster(r.find("cluster"), r.child_path("cluster"), s, default_layout, r.has("parallelism"),
                            r.child_path("parallelism"));
  if (r.has("cluster")) default_layout = sp.cluster.pools.front().layout;
  sp.scheduler = read_scheduler(r.find("scheduler"), r.child_path("scheduler"), sp.kv.max_model_len);
  sp.speculative = read_speculative(r.find("speculative"), r.child_path("speculative"), s, sp.cluster, sp.scheduler);

  if (const json* lv = r.find("lora")) {
    ObjectReader lr(*lv, r.child_path("lora"),
                    {"adapters", "rank", "max_adapters_per_batch", "load_time_ms", "popularity_zipf", "targets"});
    sp.lora.enabled = true;
    sp.lora.adapters = static_cast<int>(lr.integer("adapters", 1, 100000));
    sp.lora.rank = static_cast<int>(lr.integer("rank", 1, 4096, 16));
    sp.lora.max_adapters_per_batch = static_cast<int>(lr.integer("max_adapters_per_batch", 1, 4096, 4));
    if (lr.has("load_time_ms")) sp.lora.load_time_ms = lr.number("load_time_ms", 0.0, 1e6);
    sp.lora.popularity_zipf = lr.number("popularity_zipf", 0.0, 10.0, 0.0);
    sp.lora.targets = lr.choice("targets", registry_names(lora_targets()), "all_linear") == "attention"
                          ? LoraTargets::Attention
                          : LoraTargets::AllLinear;
    if (sp.speculative.method != SpecMethod::None)
      fail(error_code::kConstraint, r.child_path("lora"), "multi-LoRA serving with speculative decoding is not modelled");
  }
  if (const json* mv = r.find("moe")) {
    ObjectReader mr(*mv, r.child_path("moe"),
                    {"load_imbalance", "expert_parallel", "attention_data_parallel", "redundant_experts", "all_to_all"});
    if (!s.model.is_moe())
      fail(error_code::kConstraint, r.child_path("moe"), "serving.moe needs a mixture-of-experts model");
    sp.moe.load_imbalance = mr.number("load_imbalance", 1.0, 64.0, 1.0);
    sp.moe.expert_parallel = static_cast<int>(mr.integer("expert_parallel", 1, 1024, 1));
    sp.moe.attention_data_parallel = static_cast<int>(mr.integer("attention_data_parallel", 1, 1024, 1));
    sp.moe.redundant_experts = static_cast<int>(mr.integer("redundant_experts", 0, 4096, 0));
    sp.moe.all_to_all = pick<AllToAllMode>(mr.choice("all_to_all", registry_names(all_to_all_modes()), "auto"),
                                           {{"auto", AllToAllMode::Auto},
                                            {"low_latency", AllToAllMode::LowLatency},
                                            {"high_throughput", AllToAllMode::HighThroughput}});
    const int ep = sp.moe.expert_parallel, dp = sp.moe.attention_data_parallel;
    const int slots = s.model.moe.num_experts + sp.moe.redundant_experts;
    if (slots % ep != 0)
      fail(error_code::kConstraint, mr.child_path(sp.moe.redundant_experts > 0 ? "redundant_experts" : "expert_parallel"),
           "expert_parallel (" + std::to_string(ep) + ") must divide num_experts" +
               (sp.moe.redundant_experts > 0 ? " + redundant_experts (" : " (") + std::to_string(slots) + ")");
    if (sp.moe.redundant_experts > 0 && ep == 1)
      fail(error_code::kConstraint, mr.child_path("redundant_experts"),
           "redundant experts balance an expert-parallel group; set expert_parallel > 1");
    for (const auto& p : sp.cluster.pools) {
      if (dp == 1 && p.layout.tp % ep != 0)
        fail(error_code::kConstraint, mr.child_path("expert_parallel"),
             "expert_parallel (" + std::to_string(ep) + ") must divide every pool's tp (" +
                 std::to_string(p.layout.tp) +
                 "): experts are spread over the tensor-parallel GPUs (or set attention_data_parallel for wide EP)");
      if (dp > 1 && ep != dp * p.layout.tp)
        fail(error_code::kConstraint, mr.child_path("expert_parallel"),
             "with attention_data_parallel " + std::to_string(dp) + " the experts are spread over all its GPUs: " +
                 "expert_parallel must be attention_data_parallel × tp (" + std::to_string(dp * p.layout.tp) +
                 " for pool '" + p.name + "')");
      if (dp > 1 && p.replicas % dp != 0)
        fail(error_code::kConstraint, mr.child_path("attention_data_parallel"),
             "attention_data_parallel (" + std::to_string(dp) + ") must divide pool '" + p.name + "''s replicas (" +
                 std::to_string(p.replicas) + "): each data-parallel group is that many replicas");
    }
    for (auto& p : sp.cluster.pools) {
      p.layout.ep = ep;
      p.layout.expert_slots = slots;
    }
    default_layout.ep = ep;
    default_layout.expert_slots = slots;
  }
  if (const json* cv = r.find("colocated_model")) {
    const std::string cpath = r.child_path("colocated_model");
    ObjectReader cr(*cv, cpath, {"model", "memory_fraction", "traffic_fraction"});
    sp.colocated.enabled = true;
    sp.colocated.model = read_model(cr.required("model"), cr.child_path("model"));
    sp.colocated.memory_fraction = cr.number("memory_fraction", 0.01, 0.99, 0.5);
    sp.colocated.traffic_fraction = cr.number("traffic_fraction", 0.0, 1.0, 0.5);
    for (const auto& p : sp.cluster.pools) {
      check_tensor_parallel(*sp.colocated.model, p.layout.tp, cr.child_path("model"));
      if (sp.colocated.model->num_layers % p.layout.pp != 0)
        fail(error_code::kConstraint, cr.child_path("model"), "the pools' pp must divide the co-located model's layers");
    }
    if (sp.cluster.disaggregated || sp.speculative.method != SpecMethod::None || sp.lora.enabled)
      fail(error_code::kConstraint, cpath,
           "a co-located second model cannot be combined with disaggregation, speculative decoding or LoRA");
    if (sp.workload.arrival.process != ArrivalProcess::Trace && sp.colocated.model->max_context < sp.kv.max_model_len)
      fail(error_code::kConstraint, cr.child_path("model"),
           "the co-located model's max_context (" + std::to_string(sp.colocated.model->max_context) +
               ") is below max_model_len (" + std::to_string(sp.kv.max_model_len) + "); lower kv_cache.max_model_len");
  }
  if (const json* sv = r.find("slo")) {
    const std::string spath = r.child_path("slo");
    ObjectReader sr(*sv, spath, {"ttft_ms", "tpot_ms", "itl_ms", "e2e_ms", "attainment", "percentiles"});
    sp.slo.enabled = true;
    sp.slo.ttft_ms = sr.number("ttft_ms", 0.0, 1e9, 0.0);
    sp.slo.tpot_ms = sr.number("tpot_ms", 0.0, 1e9, 0.0);
    sp.slo.itl_ms = sr.number("itl_ms", 0.0, 1e9, 0.0);
    sp.slo.e2e_ms = sr.number("e2e_ms", 0.0, 1e9, 0.0);
    sp.slo.attainment = sr.number("attainment", 0.01, 1.0, 0.9);
    if (sp.slo.ttft_ms <= 0 && sp.slo.tpot_ms <= 0 && sp.slo.itl_ms <= 0 && sp.slo.e2e_ms <= 0)
      fail(error_code::kInvalidValue, spath, "an SLO needs at least one of ttft_ms, tpot_ms, itl_ms, e2e_ms above 0");
    // "percentiles": {"ttft": "p99", ...}: the named bound is judged alone at
    // that percentile; "joint" (the default) keeps it in the attainment share.
    static const std::vector<std::string> kPct = {"joint", "p50", "p90", "p95", "p99"};
    static const double kPctShare[] = {0.0, 0.5, 0.9, 0.95, 0.99};
    const json none = json::object();
    const json* pv = sr.find("percentiles");
    const std::string ppath = pointer_append(spath, "percentiles");
    ObjectReader pr(pv ? *pv : none, ppath, {"ttft", "tpot", "itl", "e2e"});
    const struct { const char* key; const char* bound; double* pct; double ms; } rows[] = {
        {"ttft", "ttft_ms", &sp.slo.ttft_percentile, sp.slo.ttft_ms},
        {"tpot", "tpot_ms", &sp.slo.tpot_percentile, sp.slo.tpot_ms},
        {"itl", "itl_ms", &sp.slo.itl_percentile, sp.slo.itl_ms},
        {"e2e", "e2e_ms", &sp.slo.e2e_percentile, sp.slo.e2e_ms}};
    for (const auto& row : rows) {
      const std::string v = pr.choice(row.key, kPct, std::string("joint"));
      for (size_t i = 0; i < kPct.size(); ++i)
        if (v == kPct[i]) *row.pct = kPctShare[i];
      if (*row.pct > 0 && row.ms <= 0)
        fail(error_code::kConstraint, pointer_append(ppath, row.key),
             std::string("a percentile for ") + row.key + " needs a bound: set slo." + row.bound + " above 0");
    }
    const bool joint_left = (sp.slo.ttft_ms > 0 && sp.slo.ttft_percentile == 0) ||
                            (sp.slo.tpot_ms > 0 && sp.slo.tpot_percentile == 0) ||
                            (sp.slo.itl_ms > 0 && sp.slo.itl_percentile == 0) ||
                            (sp.slo.e2e_ms > 0 && sp.slo.e2e_percentile == 0);
    if (!joint_left && sr.has("attainment"))
      fail(error_code::kConstraint, pointer_append(spath, "attainment"),
           "attainment applies to the bounds that name no percentile, and every bound names one: drop attainment "
           "or a percentile");
  }
  // One place for the price of a GPU-hour: the scenario's cost_model.
  if (s.cost_model.gpu_hour_usd > 0) sp.usd_per_gpu_hour = s.cost_model.gpu_hour_usd;
  if (const json* qv = r.find("max_qps_search")) {
    const std::string qpath = r.child_path("max_qps_search");
    ObjectReader qr(*qv, qpath,
                    {"min_qps", "max_qps", "iterations", "num_requests", "precision", "max_requests_per_run", "confidence"});
    sp.search.enabled = true;
    sp.search.min_qps = qr.number("min_qps", 1e-6, 1e6, 0.1);
    sp.search.max_qps = qr.number("max_qps", 0.0, 1e6, 0.0);
    sp.search.iterations = static_cast<int>(qr.integer("iterations", 1, 30, 12));
    sp.search.precision = qr.number("precision", 0.001, 1.0, 0.03);
    sp.search.num_requests = qr.integer("num_requests", std::min<int64_t>(100, sp.limits.max_requests), sp.limits.max_requests, std::min<int64_t>(600, sp.limits.max_requests));
    sp.search.max_requests_per_run = qr.integer("max_requests_per_run", sp.search.num_requests, sp.limits.max_requests,
                                                std::max(sp.search.num_requests, std::min<int64_t>(60000, sp.limits.max_requests)));
    const double conf = qr.number("confidence", 0.8, 0.99, 0.9);
    if (conf != 0.8 && conf != 0.9 && conf != 0.95 && conf != 0.99)
      fail(error_code::kInvalidValue, qr.child_path("confidence"), "confidence must be one of 0.8, 0.9, 0.95, 0.99");
    sp.search.confidence = conf;
    if (sp.search.max_qps > 0 && sp.search.max_qps <= sp.search.min_qps)
      fail(error_code::kConstraint, qr.child_path("max_qps"), "max_qps must exceed min_qps");
    if (!sp.slo.enabled)
      fail(error_code::kMissingKey, r.child_path("slo"), "max_qps_search needs an slo to search against");
    if (sp.workload.arrival.process == ArrivalProcess::AllAtOnce)
      fail(error_code::kConstraint, qpath, "max_qps_search needs arrivals with a rate (not all_at_once)");
  }
  if (const json* cv = r.find("steady_state")) {
    const std::string cpath = r.child_path("steady_state");
    ObjectReader cr(*cv, cpath, {"max_requests", "confidence"});
    sp.steady_state.enabled = true;
    sp.steady_state.max_requests = cr.integer("max_requests", sp.workload.num_requests, sp.limits.max_requests,
                                              std::max(sp.workload.num_requests, std::min<int64_t>(60000, sp.limits.max_requests)));
    const double conf = cr.number("confidence", 0.8, 0.99, 0.9);
    if (conf != 0.8 && conf != 0.9 && conf != 0.95 && conf != 0.99)
      fail(error_code::kInvalidValue, cr.child_path("confidence"), "confidence must be one of 0.8, 0.9, 0.95, 0.99");
    sp.steady_state.confidence = conf;
    if (!sp.slo.enabled) fail(error_code::kMissingKey, r.child_path("slo"), "steady_state needs an slo to judge against");
    if (sp.workload.arrival.process == ArrivalProcess::AllAtOnce)
      fail(error_code::kConstraint, cpath, "steady_state needs arrivals with a rate (not all_at_once)");
  }
  if (const json* kv = r.find("key_metrics")) {
    const std::string kpath = r.child_path("key_metrics");
    if (!kv->is_array()) fail(error_code::kType, kpath, "expected an array of key metric ids");
    for (size_t i = 0; i < kv->size(); ++i) {
      const json& item = (*kv)[i];
      const std::string ip = pointer_append(kpath, i);
      if (!item.is_string()) fail(error_code::kType, ip, "expected a key metric id (string)");
      if (!find_metric(MetricKind::kServing, item.get<std::string>())) {
        std::string names;
        for (const auto& id : metric_ids(MetricKind::kServing)) names += (names.empty() ? "" : ", ") + id;
        fail(error_code::kInvalidValue, ip, "unknown key metric '" + item.get<std::string>() + "'; valid: " + names);
      }
      sp.key_metrics.push_back(item.get<std::string>());
    }
  }
  if (const json* ov = r.find("outputs")) {
    ObjectReader orr(*ov, r.child_path("outputs"), {"trace", "trace_max_steps", "max_request_records", "time_series_points"});
    sp.outputs.trace = orr.boolean("trace", false);
    sp.outputs.trace_max_steps = orr.integer("trace_max_steps", 1, 10000000, 20000);
    sp.outputs.max_request_records = orr.integer("max_request_records", 0, 1000000, 1000);
    sp.outputs.time_series_points = static_cast<int>(orr.integer("time_series_points", 2, 10000, 500));
  }

  // Memory: every pool's replicas must hold the weights and leave room for KV blocks.
  const double runtime = r.number("runtime_overhead_GiB", 0, 1e4, 1.0);
  for (size_t i = 0; i < sp.cluster.pools.size(); ++i) {
    const PoolSpec& p = sp.cluster.pools[i];
    const GpuSpec& gpu = p.gpu ? *p.gpu : s.hardware.gpu;
    const ReplicaMemoryPlan plan = plan_replica_memory(s.model, s.precision, p.layout, gpu, runtime, sp);
    const std::string where = r.has("cluster") ? pointer_append(pointer_append(r.child_path("cluster"), "pools"), i)
                                               : pointer_append(r.child_path("parallelism"), "tp");
    const double fixed = plan.weights_GiB + plan.draft_weights_GiB + plan.lora_GiB + plan.activations_GiB + plan.runtime_GiB;
    for (size_t e = 0; e < plan.engines.size(); ++e) {
      // Like vLLM at start-up, the KV cache must hold one max_model_len
      // sequence (paged or contiguous); otherwise the engine refuses to serve.
      const int64_t need = (sp.kv.max_model_len + sp.kv.block_size - 1) / sp.kv.block_size;
      if (plan.engines[e].blocks < need) {
        std::ostringstream m;
        m << "a " << gpu.name << " with tp=" << p.layout.tp << " pp=" << p.layout.pp << " cannot serve "
          << (e == 0 ? s.model.name : sp.colocated.model->name) << ": of " << plan.usable_GiB
          << " GiB usable (gpu_memory_utilization " << sp.kv.gpu_memory_utilization << "), weights take "
          << plan.weights_GiB + plan.draft_weights_GiB << " GiB, LoRA " << plan.lora_GiB << " GiB, activations "
          << plan.activations_GiB << " GiB and runtime " << plan.runtime_GiB << " GiB (" << fixed
          << " GiB), leaving " << plan.engines[e].kv_budget_GiB << " GiB for the KV cache"
          << ", less than one max_model_len (" << sp.kv.max_model_len << "-token) sequence"
          << "; raise tp/pp, quantize, or lower max_model_len/max_num_batched_tokens";
        fail(error_code::kDoesNotFit, where, m.str());
      }
    }
  }

  if (const json* cv = r.find("compare")) {
    const std::string cpath = r.child_path("compare");
    sp.compare_is_array = cv->is_array();
    if (sp.compare_is_array && (cv->empty() || cv->size() > kMaxCompareVariants))
      fail(error_code::kRange, cpath, "compare takes 1 to " + std::to_string(kMaxCompareVariants) + " variants");
    const size_t n = sp.compare_is_array ? cv->size() : 1;
    for (size_t i = 0; i < n; ++i)
      sp.compares.push_back(read_compare_variant(sp.compare_is_array ? (*cv)[i] : *cv,
                                                 sp.compare_is_array ? pointer_append(cpath, i) : cpath, s, v));
  }
  return spec;
}

double SloSpec::bound_ms(SloMetric m) const {
  switch (m) {
    case kSloTtft: return ttft_ms;
    case kSloTpot: return tpot_ms;
    case kSloItl: return itl_ms;
    case kSloE2e: return e2e_ms;
  }
  return 0;
}

double SloSpec::percentile(SloMetric m) const {
  switch (m) {
    case kSloTtft: return ttft_percentile;
    case kSloTpot: return tpot_percentile;
    case kSloItl: return itl_percentile;
    case kSloE2e: return e2e_percentile;
  }
  return 0;
}

namespace {
const SloMetric kSloMetrics[] = {kSloTtft, kSloTpot, kSloItl, kSloE2e};
}  // namespace

std::vector<SloCondition> slo_conditions(const SloSpec& slo) {
  std::vector<SloCondition> out;
  SloCondition joint{0, slo.attainment};
  for (SloMetric m : kSloMetrics)
    if (slo.bound_ms(m) > 0 && slo.percentile(m) == 0) joint.metrics |= m;
  if (joint.metrics != 0) out.push_back(joint);
  for (SloMetric m : kSloMetrics)
    if (slo.bound_ms(m) > 0 && slo.percentile(m) > 0) out.push_back({static_cast<unsigned>(m), slo.percentile(m)});
  return out;
}

double slo_strictest_share(const SloSpec& slo) {
  double s = 0;
  for (const SloCondition& c : slo_conditions(slo)) s = std::max(s, c.share);
  return s > 0 ? s : slo.attainment;
}

const char* slo_metric_name(SloMetric m) {
  switch (m) {
    case kSloTtft: return "TTFT";
    case kSloTpot: return "TPOT";
    case kSloItl: return "ITL";
    case kSloE2e: return "E2E";
  }
  return "?";
}

json slo_to_json(const SloSpec& slo) {
  // attainment only where a bound is judged in the joint share (a document
  // with every bound at a percentile and an attainment does not read).
  json j = json::object();
  const std::vector<SloCondition> cs = slo_conditions(slo);
  if (cs.empty() || slo.percentile(static_cast<SloMetric>(cs.front().metrics)) == 0) j["attainment"] = slo.attainment;
  if (slo.ttft_ms > 0) j["ttft_ms"] = slo.ttft_ms;
  if (slo.tpot_ms > 0) j["tpot_ms"] = slo.tpot_ms;
  if (slo.itl_ms > 0) j["itl_ms"] = slo.itl_ms;
  if (slo.e2e_ms > 0) j["e2e_ms"] = slo.e2e_ms;
  json pct = json::object();
  static const char* kKeys[] = {"ttft", "tpot", "itl", "e2e"};
  for (int i = 0; i < 4; ++i) {
    const double p = slo.percentile(kSloMetrics[i]);
    if (p > 0) pct[kKeys[i]] = "p" + std::to_string(static_cast<int>(p * 100 + 0.5));
  }
  if (!pct.empty()) j["percentiles"] = pct;
  return j;
}

json simulation_to_json(const SimulationSpec& sp) {
  json j;
  j["workload"] = workload_to_json(sp.workload);
  json pools = json::array();
  for (const auto& p : sp.cluster.pools) {
    json pj = {{"name", p.name},
               {"replicas", p.replicas},
               {"tp", p.layout.tp},
               {"pp", p.layout.pp},
               {"role", to_string(p.role)}};
    if (p.gpu) pj["gpu"] = p.gpu->to_json();
    if (p.intra_node) pj["intra_node"] = p.intra_node->to_json();
    pools.push_back(pj);
  }
  j["cluster"] = {{"router", to_string(sp.cluster.router)}, {"pools", pools}};
  if (sp.cluster.kv_transfer_link) j["cluster"]["kv_transfer_link"] = sp.cluster.kv_transfer_link->to_json();
  j["scheduler"] = scheduler_to_json(sp.scheduler);
  j["kv_cache"] = {{"allocation", to_string(sp.kv.allocation)},
                   {"block_size", sp.kv.block_size},
                   {"gpu_memory_utilization", sp.kv.gpu_memory_utilization},
                   {"watermark", sp.kv.watermark},
                   {"preemption", to_string(sp.kv.preemption)},
                   {"swap_space_GiB", sp.kv.swap_space_GiB},
                   {"prefix_caching", sp.kv.prefix_caching},
                   {"max_model_len", sp.kv.max_model_len}};
  if (sp.speculative.method != SpecMethod::None) j["speculative"] = speculative_to_json(sp.speculative);
  if (sp.lora.enabled) {
    j["lora"] = {{"adapters", sp.lora.adapters},
                 {"rank", sp.lora.rank},
                 {"max_adapters_per_batch", sp.lora.max_adapters_per_batch},
                 {"popularity_zipf", sp.lora.popularity_zipf},
                 {"targets", sp.lora.targets == LoraTargets::Attention ? "attention" : "all_linear"}};
    if (sp.lora.load_time_ms >= 0) j["lora"]["load_time_ms"] = sp.lora.load_time_ms;
  }
  if (sp.moe.load_imbalance != 1.0 || sp.moe.expert_parallel != 1) {
    j["moe"] = {{"load_imbalance", sp.moe.load_imbalance}, {"expert_parallel", sp.moe.expert_parallel}};
    if (sp.moe.attention_data_parallel != 1) j["moe"]["attention_data_parallel"] = sp.moe.attention_data_parallel;
    if (sp.moe.redundant_experts != 0) j["moe"]["redundant_experts"] = sp.moe.redundant_experts;
    if (sp.moe.all_to_all != AllToAllMode::Auto)
      j["moe"]["all_to_all"] = sp.moe.all_to_all == AllToAllMode::LowLatency ? "low_latency" : "high_throughput";
  }
  if (sp.colocated.enabled)
    j["colocated_model"] = {{"model", sp.colocated.model->to_json()},
                            {"memory_fraction", sp.colocated.memory_fraction},
                            {"traffic_fraction", sp.colocated.traffic_fraction}};
  if (sp.slo.enabled) j["slo"] = slo_to_json(sp.slo);
  if (sp.search.enabled) {
    j["max_qps_search"] = {{"min_qps", sp.search.min_qps},
                           {"iterations", sp.search.iterations},
                           {"precision", sp.search.precision},
                           {"num_requests", sp.search.num_requests},
                           {"max_requests_per_run", sp.search.max_requests_per_run},
                           {"confidence", sp.search.confidence}};
    if (sp.search.max_qps > 0) j["max_qps_search"]["max_qps"] = sp.search.max_qps;
  }
  if (sp.steady_state.enabled)
    j["steady_state"] = {{"max_requests", sp.steady_state.max_requests}, {"confidence", sp.steady_state.confidence}};
  if (!sp.key_metrics.empty()) j["key_metrics"] = sp.key_metrics;
  if (!sp.compares.empty()) {
    json list = json::array();
    for (const auto& c : sp.compares) list.push_back({{"label", c.label}, {"patch", c.patch}});
    j["compare"] = sp.compare_is_array ? list : list.front();
  }
  j["outputs"] = {{"trace", sp.outputs.trace},
                  {"trace_max_steps", sp.outputs.trace_max_steps},
                  {"max_request_records", sp.outputs.max_request_records},
                  {"time_series_points", sp.outputs.time_series_points}};
  j["limits"] = {{"max_requests", sp.limits.max_requests},
                 {"max_events", sp.limits.max_events},
                 {"max_sim_time_s", sp.limits.max_sim_time_s}};
  return j;
}

}  // namespace sightline::serve
