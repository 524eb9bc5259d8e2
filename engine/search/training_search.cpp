#include "search/training_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "perf/cost_setup.hpp"
#include "presets/preset_store.hpp"
#include "search/axis_list.hpp"
#include "search/explorer.hpp"
#include "search/pareto.hpp"
#include "search/search_key_metrics.hpp"
#include "train/estimator.hpp"

namespace sightline::search {

namespace {

constexpr int64_t kRunToTheEnd = int64_t{1} << 40;
const std::vector<std::string> kRecomputeModes = {"none", "selective", "selective_op", "full"};
const char* const kMemoryKey = "does not fit in GPU memory (the estimator's memory block)";

std::string str(int64_t v) { return std::to_string(v); }

// A GPU count as the hardware section takes it: whole nodes of gpus_per_node,
// or one partly filled node.
void check_count(int count, int per_node, const std::string& path) {
  if (count > per_node && count % per_node != 0)
    fail(error_code::kConstraint, path,
         str(count) + " GPUs do not fill whole nodes of " + str(per_node) + " GPUs (gpus_per_node)");
}

void check_links(const TrainGpuOption& g, const std::string& path) {
  for (int n : g.counts) {
    const int per_node = std::min(n, g.gpus_per_node);
    if (per_node > 1 && g.intra_node.is_null())
      fail(error_code::kMissingKey, pointer_append(path, "intra_node"),
           str(n) + " GPUs need an intra_node interconnect, and the base hardware has none; give gpus as "
                    "[{gpu, usd_per_hour, gpus_per_node, intra_node, inter_node, count}]");
    if (n > per_node && g.inter_node.is_null())
      fail(error_code::kMissingKey, pointer_append(path, "inter_node"),
           str(n) + " GPUs span " + str(n / per_node) + " nodes: they need an inter_node interconnect, and the base "
                    "hardware has none; give gpus as [{gpu, usd_per_hour, gpus_per_node, intra_node, inter_node, count}]");
  }
}

// The candidate as a scenario document: the base with its hardware resized to
// the GPU option and count, the training parallelism, batch, schedule,
// recompute and ZeRO stage of the candidate, the global batch kept.
json candidate_document(const TrainingSearchSpec& spec, const TrainCandidate& c) {
  const TrainGpuOption& g = spec.gpus[c.gpu];
  json d = spec.base;
  const int per_node = std::min(c.gpus, g.gpus_per_node);
  d["hardware"] = {{"gpu", g.gpu_value}, {"gpus_per_node", per_node}, {"nodes", c.gpus / per_node}};
  if (per_node > 1) d["hardware"]["intra_node"] = g.intra_node;
  if (c.gpus > per_node) d["hardware"]["inter_node"] = g.inter_node;
  if (!d.contains("cost_model") || !d["cost_model"].is_object()) d["cost_model"] = json::object();
  if (g.usd_per_hour > 0) d["cost_model"]["gpu_hour_usd"] = g.usd_per_hour;
  else d["cost_model"].erase("gpu_hour_usd");
  json& t = d["training"];
  for (const char* k : {"compare", "scaling", "key_metrics"}) t.erase(k);
  if (!t.contains("parallelism") || !t["parallelism"].is_object()) t["parallelism"] = json::object();
  json& p = t["parallelism"];
  p.erase("fsdp");
  p.erase("stage_layers");
  p["dp"] = c.dp;
  p["tp"] = c.tp;
  p["pp"] = c.pp;
  p["cp"] = c.cp;
  p["ep"] = c.ep;
  p["virtual_stages"] = c.virtual_stages;
  p["zero_stage"] = c.zero_stage;
  p["sequence_parallel"] = c.sequence_parallel;
  t["batch"] = {{"seq_len", spec.seq_len}, {"micro_batch_size", c.micro_batch}, {"global_batch_size", spec.global_batch_size}};
  const std::string base_schedule = t.value("schedule", "1f1b");
  t["schedule"] = c.virtual_stages > 1 ? "interleaved_1f1b" : base_schedule == "gpipe" ? "gpipe" : "1f1b";
  t["recompute"] = c.recompute;
  if (c.tp < 2 && t.contains("overlap") && t["overlap"].is_object()) t["overlap"].erase("tp");
  t["tokens_to_train"] = spec.tokens_to_train;
  return d;
}

json outcome_json(const TrainOutcome& o) {
  if (!o.ok) return {{"error", o.error}};
  json j = {{"fits", o.fits},
            {"step_time_ms", o.step_time_ms},
            {"tokens_per_s", o.tokens_per_s},
            {"tokens_per_s_per_gpu", o.tokens_per_s_per_gpu},
            {"mfu_pct", o.mfu_pct},
            {"memory_per_gpu_GiB", o.memory_GiB},
            {"capacity_GiB", o.capacity_GiB},
            {"max_micro_batch", o.max_micro_batch},
            {"pipeline_bubble_pct", o.bubble_pct},
            {"exposed_comm_ms", o.exposed_comm_ms}};
  if (o.time_to_train_days > 0) j["time_to_train_days"] = o.time_to_train_days;
  if (o.cost_usd > 0) j["cost_usd"] = o.cost_usd;
  if (o.tokens_per_usd > 0) j["tokens_per_usd"] = o.tokens_per_usd;
  return j;
}

json candidate_json(const TrainCandidate& c) {
  return {{"gpus", c.gpus},  {"dp", c.dp}, {"tp", c.tp}, {"pp", c.pp}, {"cp", c.cp}, {"ep", c.ep},
          {"virtual_stages", c.virtual_stages}, {"micro_batch_size", c.micro_batch}, {"gradient_accumulation", c.ga},
          {"recompute", c.recompute}, {"zero_stage", c.zero_stage}, {"sequence_parallel", c.sequence_parallel}};
}

json ranked_json(const RankedTrainCandidate& r, size_t rank) {
  json j = {{"rank", rank + 1}, {"configuration", r.label}, {"candidate", r.index}, {"gpu", r.gpu},
            {"usd_per_hour", r.usd_per_hour}, {"pareto", r.on_front}};
  j.update(candidate_json(r.c));
  write_ranked_outcomes(j, r, [](const auto& o) { return outcome_json(o); });
  if (r.has_interval) {
    json km = json::array();
    if (r.central.time_to_train_days > 0) km.push_back(training_search_key_metric("time_to_train_days", &r));
    km.push_back(training_search_key_metric("step_time_ms", &r));
    km.push_back(training_search_key_metric("tokens_per_s", &r));
    km.push_back(training_search_key_metric("mfu_pct", &r));
    if (r.central.tokens_per_usd > 0) km.push_back(training_search_key_metric("tokens_per_usd", &r));
    if (r.central.cost_usd > 0) km.push_back(training_search_key_metric("cost_usd", &r));
    km.push_back(training_search_key_metric("memory_per_gpu_GiB", &r));
    j["key_metrics"] = km;
  }
  return j;
}

bool usable(const TrainOutcome& o) { return o.ok && o.fits; }

// Plan indices of the usable outcomes, best first: the objective, then fewer
// GPUs, then less memory per GPU; the plan order breaks exact ties.
std::vector<size_t> by_objective(const TrainingSearchSpec& spec, const TrainPlan& plan, const std::vector<TrainOutcome>& o) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < o.size(); ++i)
    if (usable(o[i])) idx.push_back(i);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    const double sa = objective_score(spec, o[a]), sb = objective_score(spec, o[b]);
    if (sa != sb) return sa > sb;
    if (plan.candidates[a].gpus != plan.candidates[b].gpus) return plan.candidates[a].gpus < plan.candidates[b].gpus;
    return o[a].memory_GiB < o[b].memory_GiB;
  });
  return idx;
}

// Among `ranked` (plan indices, best first), those that no other beats on
// both the objective and memory per GPU; an exact tie keeps the better-ranked one.
std::vector<size_t> pareto_front(const TrainingSearchSpec& spec, const std::vector<size_t>& ranked,
                                 const std::vector<TrainOutcome>& o) {
  std::vector<ParetoPoint> points;
  for (size_t i : ranked) points.push_back({i, -objective_score(spec, o[i]), o[i].memory_GiB});
  return search::pareto_front(points);  // in ranked order: the objective falls along the front
}

}  // namespace

std::string training_candidate_label(const TrainingSearchSpec& spec, const TrainCandidate& c) {
  std::string s = spec.gpus[c.gpu].gpu + "×" + str(c.gpus) + " tp" + str(c.tp) + " pp" + str(c.pp);
  if (c.virtual_stages > 1) s += " vs" + str(c.virtual_stages);
  if (c.cp > 1) s += " cp" + str(c.cp);
  if (c.ep > 1) s += " ep" + str(c.ep);
  s += " dp" + str(c.dp) + " mb" + str(c.micro_batch) + " rc:" + c.recompute + " z" + str(c.zero_stage);
  if (c.sequence_parallel) s += " sp";
  return s;
}

double objective_score(const TrainingSearchSpec& spec, const TrainOutcome& o) {
  return spec.objective == TrainObjective::TokensPerUsd ? o.tokens_per_usd : o.tokens_per_s;
}

int64_t training_search_space(const TrainingSearchSpec& spec) {
  int64_t space = 0;
  for (const auto& g : spec.gpus) space += static_cast<int64_t>(g.counts.size());
  return space * static_cast<int64_t>(spec.tp.size() * spec.pp.size() * spec.cp.size() * spec.ep.size() *
                                      spec.micro_batch.size() * spec.virtual_stages.size() * spec.recompute.size() *
                                      spec.zero_stage.size() * spec.sequence_parallel.size());
}

TrainingSearchSpec read_training_search(const json& doc) {
  ObjectReader r(doc, "", {"kind", "base", "objective", "gpus", "tokens_to_train", "tp", "pp", "cp", "ep", "micro_batch",
                           "virtual_stages", "recompute", "zero_stage", "sequence_parallel", "top", "max_interval_points"});
  TrainingSearchSpec spec;
  if (r.string("kind") != "training_search") fail(error_code::kInvalidValue, "/kind", "expected \"training_search\"");
  const json& b = r.required("base");
  if (b.is_string()) {
    spec.base = require_preset("scenarios", b.get<std::string>(), "/base");
  } else {
    require_object(b, "/base");
    spec.base = b;
  }
  spec.objective = r.choice("objective", {"time_to_train", "tokens_per_usd"}, "time_to_train") == "tokens_per_usd"
                       ? TrainObjective::TokensPerUsd
                       : TrainObjective::TimeToTrain;
  // The base must be a valid training scenario: its global batch, sequence
  // length, tokens to train, hardware and price are the question's defaults.
  Scenario s;
  try {
    s = read_scenario(spec.base);
    if (!s.training) fail(error_code::kMissingKey, "/training", "the base must be a training scenario");
  } catch (const SightlineError& e) {
    fail(e.code().c_str(), std::string("/base") + e.path(), e.what());
  }
  spec.base_id = s.id;
  const TrainConfig& bc = s.training->config;
  spec.global_batch_size = bc.batch.global_batch_size;
  spec.seq_len = bc.batch.seq_len;
  spec.tokens_to_train = r.number("tokens_to_train", 0, 1e18, bc.tokens_to_train);

  // GPUs: the base's hardware (optionally another count), or a list of options.
  const json& hw = spec.base["hardware"];
  auto base_option = [&](int count) {
    TrainGpuOption g;
    g.gpu = s.hardware.gpu.id;
    g.gpu_value = hw["gpu"];
    g.usd_per_hour = s.cost_model.gpu_hour_usd;
    g.intra_node = hw.contains("intra_node") ? hw["intra_node"] : json(nullptr);
    g.inter_node = hw.contains("inter_node") ? hw["inter_node"] : json(nullptr);
    g.gpus_per_node = s.hardware.gpus_per_node;
    g.counts = {count};
    return g;
  };
  const json* gv = r.find("gpus");
  if (!gv) {
    spec.gpus.push_back(base_option(s.hardware.total_gpus()));
    check_count(s.hardware.total_gpus(), spec.gpus[0].gpus_per_node, "/base/hardware");
    check_links(spec.gpus[0], "/gpus");
  } else if (gv->is_number()) {
    const int n = static_cast<int>(read_integer(*gv, "/gpus", 1, 1 << 20));
    spec.gpus.push_back(base_option(n));
    check_count(n, spec.gpus[0].gpus_per_node, "/gpus");
    check_links(spec.gpus[0], "/gpus");
  } else {
    if (!gv->is_array() || gv->empty())
      fail(error_code::kType, "/gpus", "expected a GPU count or a non-empty array of GPU options");
    for (size_t i = 0; i < gv->size(); ++i) {
      const std::string path = pointer_append("/gpus", i);
      ObjectReader gr((*gv)[i], path, {"gpu", "usd_per_hour", "intra_node", "inter_node", "gpus_per_node", "count"});
      const GpuOptionFields fields = read_gpu_option(gr, 0.0);
      TrainGpuOption g{fields.gpu,        json(fields.gpu),        fields.usd_per_hour,
                       json(fields.intra_node), json(fields.inter_node), fields.gpus_per_node, {}};
      const json* cv = gr.find("count");
      const std::string cp = gr.child_path("count");
      if (!cv) {
        g.counts = {s.hardware.total_gpus()};
      } else if (cv->is_array()) {
        g.counts = read_int_axis_as<int>(gr, "count", std::vector<int>{}, 1, 1 << 20);
      } else {
        g.counts = {static_cast<int>(read_integer(*cv, cp, 1, 1 << 20))};
      }
      for (size_t k = 0; k < g.counts.size(); ++k)
        check_count(g.counts[k], g.gpus_per_node, cv && cv->is_array() ? pointer_append(cp, k) : cp);
      spec.gpus.push_back(g);
    }
  }
  if (spec.objective == TrainObjective::TokensPerUsd)
    for (size_t i = 0; i < spec.gpus.size(); ++i)
      if (spec.gpus[i].usd_per_hour <= 0)
        fail(error_code::kMissingKey, gv && gv->is_array() ? pointer_append(pointer_append("/gpus", i), "usd_per_hour") : "/objective",
             "tokens_per_usd needs a price per GPU-hour: give gpus [{gpu, usd_per_hour}] or the base's cost_model.gpu_hour_usd");

  // The axes.
  spec.tp = read_int_axis_as<int>(r, "tp", spec.tp, 1, 1024);
  spec.pp = read_int_axis_as<int>(r, "pp", spec.pp, 1, 1024);
  spec.cp = read_int_axis_as<int>(r, "cp", spec.cp, 1, 1024);
  spec.ep = read_int_axis_as<int>(r, "ep", spec.ep, 1, 1024);
  spec.micro_batch = read_int_axis(r, "micro_batch", spec.micro_batch, 1, 1 << 16);
  spec.virtual_stages = read_int_axis_as<int>(r, "virtual_stages", spec.virtual_stages, 1, 64);
  spec.zero_stage = read_int_axis_as<int>(r, "zero_stage", spec.zero_stage, 0, 3);
  spec.recompute = read_name_axis(r, "recompute", spec.recompute, kRecomputeModes, "recompute mode");
  spec.sequence_parallel = read_bool_axis(r, "sequence_parallel", spec.sequence_parallel);
  spec.top = static_cast<int>(r.integer("top", 1, 64, spec.top));  // defaults: the spec's (training_search.hpp)
  spec.max_interval_points = static_cast<int>(r.integer("max_interval_points", 0, 256, spec.max_interval_points));
  const int64_t space = training_search_space(spec);
  if (space > 200000)
    fail(error_code::kRange, "", "the space has " + str(space) + " configurations; at most 200000 (narrow the axes)");
  return spec;
}

namespace {

// Prunes one configuration (tp x pp x cp must divide the GPU count, virtual
// stages need a pipeline, the global batch a whole number of micro-batches per
// replica, then the training scenario checks) or adds it to the plan.
void plan_candidate(const TrainingSearchSpec& spec, TrainCandidate c, TrainPlan& plan) {
  auto prune = [&](const std::string& key, const std::string& reason) { plan.pruned.push_back({c, key, reason}); };
  const int64_t model_parallel = static_cast<int64_t>(c.tp) * c.pp * c.cp;
  if (c.gpus % model_parallel != 0) {
    prune("tp × pp × cp does not divide the GPU count",
          "tp × pp × cp = " + str(model_parallel) + " does not divide " + str(c.gpus) + " GPUs");
    return;
  }
  c.dp = static_cast<int>(c.gpus / model_parallel);
  if (c.virtual_stages > 1 && c.pp < 2) {
    prune("virtual_stages > 1 needs pp ≥ 2", "interleaving model chunks needs a pipeline");
    return;
  }
  if (spec.global_batch_size % (static_cast<int64_t>(c.dp) * c.micro_batch) != 0) {
    prune("the global batch is not a multiple of dp × micro_batch",
          "global batch " + str(spec.global_batch_size) + " is not a multiple of dp × micro_batch = " +
              str(static_cast<int64_t>(c.dp) * c.micro_batch));
    return;
  }
  // Everything else: the training scenario checks, as for any scenario.
  json d = candidate_document(spec, c);
  try {
    Scenario sc = read_scenario(d);
    c.ga = sc.training->config.batch.gradient_accumulation;
    plan.candidates.push_back(c);
    plan.scenarios.push_back(std::move(sc));
    plan.documents.push_back(std::move(d));
  } catch (const SightlineError& e) {
    prune(std::string(e.code()) + " at " + e.path(), e.what());
  }
}

}  // namespace

TrainPlan plan_training_search(const TrainingSearchSpec& spec) {
  TrainPlan plan;
  enum Axis : size_t { kGpu, kCount, kTp, kPp, kCp, kEp, kVs, kMb, kRecompute, kZero, kSp, kAxes };
  const std::vector<size_t> sizes = {spec.gpus.size(),  0, spec.tp.size(), spec.pp.size(),
                                     spec.cp.size(),    spec.ep.size(),    spec.virtual_stages.size(),
                                     spec.micro_batch.size(), spec.recompute.size(), spec.zero_stage.size(), 0};
  // Sequence parallelism shards over tp: with tp = 1 there is one choice, off.
  const std::vector<bool> sp_off = {false};
  auto sp_axis = [&](int tp) -> const std::vector<bool>& { return tp < 2 ? sp_off : spec.sequence_parallel; };
  auto values = [&](size_t axis, const std::vector<size_t>& at) -> size_t {
    if (axis == kCount) return spec.gpus[at[kGpu]].counts.size();
    if (axis == kSp) return sp_axis(spec.tp[at[kTp]]).size();
    return sizes[axis];
  };
  for_each_combination(kAxes, values, [&](const std::vector<size_t>& at) {
    TrainCandidate c;
    c.gpu = at[kGpu];
    c.gpus = spec.gpus[c.gpu].counts[at[kCount]];
    c.tp = spec.tp[at[kTp]];
    c.pp = spec.pp[at[kPp]];
    c.cp = spec.cp[at[kCp]];
    c.ep = spec.ep[at[kEp]];
    c.virtual_stages = spec.virtual_stages[at[kVs]];
    c.micro_batch = spec.micro_batch[at[kMb]];
    c.recompute = spec.recompute[at[kRecompute]];
    c.zero_stage = spec.zero_stage[at[kZero]];
    c.sequence_parallel = sp_axis(c.tp)[at[kSp]];
    ++plan.space_size;
    plan_candidate(spec, c, plan);
  });
  return plan;
}

TrainOutcome evaluate_training_candidate(const TrainingSearchSpec& spec, const TrainPlan& plan, size_t index,
                                         CostBound bound) {
  TrainOutcome o;
  try {
    Scenario s = plan.scenarios.at(index);
    s.cost_model.bound = bound;
    TrainRun run(s);
    int64_t budget = kRunToTheEnd;
    while (!run.advance(budget)) budget = kRunToTheEnd;
    const TrainRunResult& r = run.result();
    o.ok = true;
    o.fits = r.memory_per_gpu.fits;
    o.step_time_ms = r.metrics.step_time_ms;
    o.tokens_per_s = r.metrics.tokens_per_s;
    o.tokens_per_s_per_gpu = r.metrics.tokens_per_s_per_gpu;
    o.mfu_pct = r.metrics.mfu_pct;
    o.memory_GiB = r.memory_per_gpu.total_GiB;
    o.capacity_GiB = r.memory_per_gpu.capacity_GiB;
    o.max_micro_batch = r.memory_per_gpu.max_micro_batch;
    o.bubble_pct = r.pipeline.bubble_pct;
    o.exposed_comm_ms = r.communication.tp_exposed_ms + r.communication.ep_exposed_ms + r.communication.cp_exposed_ms +
                        r.step_breakdown_ms.exposed_dp_ms;
    if (r.training_run) {
      o.time_to_train_days = r.training_run->time_days;
      o.cost_usd = r.training_run->cost_usd.value_or(0.0);
    }
    const TrainCandidate& c = plan.candidates.at(index);
    const double usd_per_s = spec.gpus[c.gpu].usd_per_hour * c.gpus / 3600.0;
    if (usd_per_s > 0) o.tokens_per_usd = o.tokens_per_s / usd_per_s;
  } catch (const SightlineError& e) {
    o = TrainOutcome{};
    o.error = std::string(e.code()) + " at '" + e.path() + "': " + e.what();
  }
  return o;
}

std::vector<size_t> training_interval_candidates(const TrainingSearchSpec& spec, const TrainPlan& plan,
                                                 const std::vector<TrainOutcome>& central) {
  const std::vector<size_t> ranked = by_objective(spec, plan, central);
  const std::vector<size_t> front = pareto_front(spec, ranked, central);
  std::vector<size_t> out;
  for (size_t k = 0; k < ranked.size(); ++k) {
    const bool top = k < static_cast<size_t>(spec.top);
    const bool on_front = std::find(front.begin(), front.end(), ranked[k]) != front.end();
    if ((top || on_front) && out.size() < static_cast<size_t>(spec.max_interval_points)) out.push_back(ranked[k]);
  }
  return out;
}

TrainingSearchResult rank_training_search(const TrainingSearchSpec& spec, const TrainPlan& plan,
                                          const std::vector<TrainOutcome>& central,
                                          const std::vector<TrainOutcome>& low, const std::vector<TrainOutcome>& high) {
  TrainingSearchResult out;
  out.space = space_counts(plan.space_size, plan.pruned.size(), plan.candidates.size(), central.size());
  out.objective = spec.objective;
  out.base_id = spec.base_id;
  out.global_batch_size = spec.global_batch_size;
  out.seq_len = spec.seq_len;
  out.tokens_to_train = spec.tokens_to_train;
  std::map<std::string, size_t> reason_index;
  auto count_reason = [&](const std::string& key, const std::string& example) {
    auto it = reason_index.find(key);
    if (it == reason_index.end()) {
      reason_index[key] = out.reasons.size();
      out.reasons.push_back({key, example, 1});
    } else {
      ++out.reasons[it->second].count;
    }
  };
  for (const TrainPruned& p : plan.pruned) {
    count_reason(p.reason_key, p.reason);
    out.pruned.emplace_back(training_candidate_label(spec, p.c), p.reason);
  }
  for (size_t i = 0; i < central.size(); ++i) {
    const TrainOutcome& o = central[i];
    const std::string label = training_candidate_label(spec, plan.candidates[i]);
    if (!o.ok) {
      ++out.failed;
      count_reason("estimator error", o.error);
      out.pruned.emplace_back(label, o.error);
    } else if (!o.fits) {
      ++out.pruned_memory;
      char buf[200];
      std::snprintf(buf, sizeof buf, "needs %.1f GiB per GPU, the GPU has %.1f GiB (largest micro-batch that fits: %lld)",
                    o.memory_GiB, o.capacity_GiB, static_cast<long long>(o.max_micro_batch));
      count_reason(kMemoryKey, buf);
      out.pruned.emplace_back(label, std::string("does not fit: ") + buf);
    }
  }
  std::stable_sort(out.reasons.begin(), out.reasons.end(),
                   [](const TrainingSearchResult::Reason& a, const TrainingSearchResult::Reason& b) { return a.count > b.count; });

  const std::vector<size_t> ranked = by_objective(spec, plan, central);
  const std::vector<size_t> front = pareto_front(spec, ranked, central);
  const std::vector<size_t> with_interval = training_interval_candidates(spec, plan, central);
  for (size_t k = 0; k < ranked.size(); ++k) {
    const size_t i = ranked[k];
    RankedTrainCandidate r;
    r.index = i;
    r.c = plan.candidates[i];
    r.label = training_candidate_label(spec, r.c);
    r.gpu = spec.gpus[r.c.gpu].gpu;
    r.usd_per_hour = spec.gpus[r.c.gpu].usd_per_hour * r.c.gpus;
    r.central = central[i];
    r.on_front = std::find(front.begin(), front.end(), i) != front.end();
    const TrainOutcome* lo = nullptr;
    const TrainOutcome* hi = nullptr;
    if (interval_runs_of(i, with_interval, low, high, lo, hi)) {
      r.has_interval = true;
      r.low = *lo;
      r.high = *hi;
    }
    if (r.on_front) out.front.push_back(out.ranked.size());
    out.ranked.push_back(r);
  }
  // Whether the answer holds at the kernels' low and high cost bounds: the
  // best among the interval runs at each bound.
  auto best_at = [&](bool use_low) {
    std::string label;
    double best = -1;
    for (const RankedTrainCandidate& r : out.ranked) {
      if (!r.has_interval) continue;
      const TrainOutcome& o = use_low ? r.low : r.high;
      if (!usable(o)) continue;
      const double sc = objective_score(spec, o);
      if (sc > best) {
        best = sc;
        label = r.label;
      }
    }
    return label;
  };
  out.best_at_low_bound = best_at(true);
  out.best_at_high_bound = best_at(false);

  // The accuracy block of the cost model behind the answer.
  const Scenario& s0 = out.ranked.empty() ? plan.scenarios.empty() ? read_scenario(spec.base) : plan.scenarios.front()
                                          : plan.scenarios[out.ranked.front().index];
  out.model = s0.model.id;
  std::string provenance;
  out.accuracy = make_kernel_cost_model(s0.cost_model.tier, s0.hardware.gpu, &provenance)->accuracy().to_json();
  return out;
}

TrainingSearchResult run_training_search(const TrainingSearchSpec& spec, const ForEach& for_each) {
  const TrainPlan plan = plan_training_search(spec);
  const ExplorerRuns<TrainOutcome> runs = run_plan<TrainOutcome>(
      plan.candidates.size(), for_each,
      [&](size_t k, CostBound bound) { return evaluate_training_candidate(spec, plan, k, bound); },
      [&](const std::vector<TrainOutcome>& central) { return training_interval_candidates(spec, plan, central); });
  return rank_training_search(spec, plan, runs.central, runs.low, runs.high);
}

json TrainingSearchResult::to_json() const {
  json table = json::array();
  for (size_t k = 0; k < ranked.size(); ++k) table.push_back(ranked_json(ranked[k], k));
  json front_j = json::array();
  for (size_t k : front) front_j.push_back(ranked_json(ranked[k], k));
  json reasons_j = json::array();
  for (const Reason& r : reasons) reasons_j.push_back({{"reason", r.key}, {"count", r.count}, {"example", r.example}});
  json pruned_j = json::array();
  for (const auto& p : pruned) pruned_j.push_back({{"configuration", p.first}, {"reason", p.second}});
  const bool tpu = objective == TrainObjective::TokensPerUsd;
  json key_metrics = json::array();
  json best = nullptr;
  if (!ranked.empty()) {
    const RankedTrainCandidate& b = ranked.front();
    best = ranked_json(b, 0);
    if (tpu) key_metrics.push_back(training_search_key_metric("tokens_per_usd", &b));
    if (b.central.time_to_train_days > 0) key_metrics.push_back(training_search_key_metric("time_to_train_days", &b));
    key_metrics.push_back(training_search_key_metric("step_time_ms", &b));
    key_metrics.push_back(training_search_key_metric("tokens_per_s", &b));
    key_metrics.push_back(training_search_key_metric("mfu_pct", &b));
    if (!tpu && b.central.tokens_per_usd > 0) key_metrics.push_back(training_search_key_metric("tokens_per_usd", &b));
    if (b.central.cost_usd > 0) key_metrics.push_back(training_search_key_metric("cost_usd", &b));
    key_metrics.push_back(training_search_key_metric("memory_per_gpu_GiB", &b));
    key_metrics.push_back(training_search_key_metric("gpus", &b));
  }
  key_metrics.push_back(training_search_key_metric("configurations_estimated", nullptr, space.run));
  const bool holds = !ranked.empty() && ranked.front().has_interval && best_at_low_bound == ranked.front().label &&
                     best_at_high_bound == ranked.front().label;
  return {{"kind", "training_search"},
          {"base", base_id},
          {"model", model},
          {"objective", tpu ? "tokens_per_usd" : "time_to_train"},
          {"global_batch_size", global_batch_size},
          {"seq_len", seq_len},
          {"tokens_to_train", tokens_to_train},
          {"accuracy", accuracy},
          {"key_metrics", key_metrics},
          {"space",
           {{"configurations", space.planned},
            {"pruned_by_checks", space.pruned},
            {"estimated", space.run},
            {"do_not_fit", pruned_memory},
            {"failed", failed},
            {"ranked", static_cast<int64_t>(ranked.size())}}},
          {"pruned_by_reason", reasons_j},
          {"best", best},
          {"best_at_low_bound", best_at_low_bound},
          {"best_at_high_bound", best_at_high_bound},
          {"best_holds_at_both_bounds", holds},
          {"pareto_axes", {tpu ? "tokens_per_usd" : "tokens_per_s", "memory_per_gpu_GiB"}},
          {"pareto_front", front_j},
          {"ranked", table},
          {"pruned", pruned_j},
          {"criterion",
           "dp = gpus / (tp × pp × cp) with the base's global batch fixed (gradient accumulation = global batch / (dp × "
           "micro-batch)); invalid configurations pruned by the training scenario checks; every other one estimated by "
           "the training estimator at the cost model's central bound; those over the GPU's memory (the estimator's "
           "memory block) dropped; ranked by the objective (time_to_train: tokens per second, so the shortest time to "
           "train; tokens_per_usd: tokens per second per dollar-second), then fewer GPUs, then less memory; the top "
           "configurations and the Pareto front of the objective against memory per GPU re-run at the kernels' low and "
           "high cost bounds give the 80% intervals"}};
}

}  // namespace sightline::search
