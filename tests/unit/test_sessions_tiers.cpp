// Multi-turn sessions, KV offload tiers and cache-aware routers (issue 42):
// their properties (more tier capacity never lowers the hit rate, longer tool
// gaps never raise it, prefix affinity never lowers it against round robin),
// the session lifecycle, and the located errors of their inputs.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "serve/router.hpp"
#include "request_outcomes.hpp"
#include "test_helpers.hpp"

using sightline::test::envelope;
using sightline::test::json;
using sightline::test::validate;
using sightline::test::expect_validation_error;

namespace {

json central(const json& s) {
  const json e = envelope(sightline::api::run_scenario_central_only(s.dump()));
  if (!e["ok"].get<bool>()) FAIL_CHECK(e["error"].dump());
  REQUIRE(e["ok"].get<bool>());
  return e["result"];
}

double at(const json& r, const char* pointer) { return r.at(json::json_pointer(pointer)).get<double>(); }

// Agentic sessions on one H100 with a KV budget small enough that the prefix
// cache evicts: returning turns then hit only what stayed (in HBM or a tier).
// A KV pool under pressure: about 7.6 GiB of the H100 (0.31 of it, less
// Llama-3-8B's weights, the vllm-like sampler reserve and the runtime).
json sessions_scenario(double think_s = 20, int sessions = 60) {
  return json::parse(R"({
    "schema_version": 1, "seed": 3, "model": "llama-3-8b",
    "hardware": {"gpu": "h100-sxm", "gpus_per_node": 1},
    "precision": {"weights": "bf16", "activations": "bf16", "kv_cache": "bf16"},
    "serving": {"mode": "simulate",
      "workload": {"arrival": {"process": "poisson", "rate_qps": 2}, "num_sessions": 60,
        "sessions": {"turns": {"dist": "uniform", "min": 2, "max": 8}, "system_prompt_tokens": 1000,
          "first_input_tokens": 1500, "input_tokens": {"dist": "uniform", "min": 100, "max": 600},
          "output_tokens": {"dist": "uniform", "min": 50, "max": 250}, "think_time_s": 20}},
      "scheduler": {"policy": "chunked_prefill", "chunk_size": 2048},
      "kv_cache": {"prefix_caching": true, "gpu_memory_utilization": 0.31}}})")
      .patch(json::parse(R"([{"op": "replace", "path": "/serving/workload/sessions/think_time_s", "value": )" +
                         std::to_string(think_s) + R"(}, {"op": "replace", "path": "/serving/workload/num_sessions", "value": )" +
                         std::to_string(sessions) + "}]"));
}

json with_host_tier(json s, double capacity_GiB) {
  s["serving"]["kv_cache"]["offload"] = {{"tiers", {{{"preset", "pcie5-host-dram"}, {"capacity_GiB", capacity_GiB}}}}};
  return s;
}

// A shared-prefix workload on 8 replicas.
json shared_prefix_scenario(const char* router, int groups, uint64_t seed) {
  json s = json::parse(R"({
    "schema_version": 1, "model": "llama-3-8b",
    "hardware": {"gpu": "h100-sxm", "gpus_per_node": 8, "intra_node": "nvlink4-nvswitch"},
    "precision": {"weights": "bf16", "activations": "bf16", "kv_cache": "bf16"},
    "serving": {"mode": "simulate",
      "cluster": {"pools": [{"replicas": 8, "tp": 1}]},
      "workload": {"arrival": {"process": "poisson", "rate_qps": 30}, "num_requests": 600,
        "prompt_tokens": 5000, "output_tokens": 100, "shared_prefix": {"tokens": 4000}},
      "kv_cache": {"prefix_caching": true, "gpu_memory_utilization": 0.4}}})");
  s["seed"] = seed;
  s["serving"]["cluster"]["router"] = router;
  s["serving"]["workload"]["shared_prefix"]["groups"] = groups;
  return s;
}

}  // namespace

TEST_CASE("sessions: every turn runs, returning turns hit the cache, later turns wait for the think time") {
  json s = sessions_scenario(10, 30);
  s["serving"]["workload"]["sessions"]["turns"] = 4;
  s["serving"]["kv_cache"]["gpu_memory_utilization"] = 0.9;
  const json r = central(s);
  const json& m = r["metrics"]["sessions"];
  CHECK(m["total"] == 30);
  CHECK(m["turns"].get<int64_t>() + 0 == r["metrics"]["requests"]["total"].get<int64_t>());
  CHECK(m["completed"].get<int64_t>() + m["cut_at_max_model_len"].get<int64_t>() >= 30);
  // Three 10 s gaps between four turns: no session is shorter.
  CHECK(at(r, "/metrics/sessions/session_duration_s/min") >= 30.0);
  // With room for every session's context, a returning turn recomputes only its new input.
  CHECK(at(r, "/metrics/sessions/returning_cached_token_fraction") > 0.6);
  CHECK(at(r, "/metrics/sessions/ttft_returning_turn_ms/mean") < at(r, "/metrics/sessions/ttft_first_turn_ms/mean"));
  // Same seed, same result.
  CHECK(central(s)["metrics"] == r["metrics"]);
}

// A multi-turn workload's rate_qps is sessions per second. The headline named
// it as requests ("stable at 0.5 req/s: 0.736 req/s completed", S.chat-offload):
// it now names the turns' measured rate in req/s and the sessions' beside it.
TEST_CASE("sessions: the headline names the turns' rate in req/s and the sessions' rate as sessions") {
  const json r = central(sessions_scenario(10, 60));
  const std::string line = r["headline"]["line"].get<std::string>();
  CAPTURE(line);
  CHECK(line.find("(2 sessions/s)") != std::string::npos);
  CHECK(line.find(" at 2 req/s") == std::string::npos);
  // The turns arrive faster than the sessions start: each session sends several.
  CHECK(r["headline"]["arrival_rate_qps"].get<double>() > 2.0);
}

TEST_CASE("sessions: without prefix caching every turn recomputes its whole context") {
  json s = sessions_scenario(5, 20);
  s["serving"]["kv_cache"]["prefix_caching"] = false;
  const json r = central(s);
  CHECK(at(r, "/metrics/sessions/returning_cached_token_fraction") == 0.0);
  CHECK_FALSE(r["metrics"].contains("kv_offload"));
}

TEST_CASE("kv tiers: a larger host tier never lowers the hit rate, and lowers returning turns' TTFT") {
  double last = -1, first_ttft = 0, last_ttft = 0;
  for (double gib : {0.0, 0.5, 2.0, 8.0, 64.0}) {
    const json r = central(with_host_tier(sessions_scenario(), gib));
    const double hit = at(r, "/metrics/prefix_cache/cached_token_fraction");
    INFO("capacity_GiB " << gib << ": hit rate " << hit);
    CHECK(hit >= last);
    last = hit;
    const double ttft = at(r, "/metrics/sessions/ttft_returning_turn_ms/mean");
    if (gib == 0.0) first_ttft = ttft;
    last_ttft = ttft;
    CHECK(at(r, "/metrics/kv_offload/tiers/0/hit_token_fraction") >= 0.0);
  }
  CHECK(last_ttft < first_ttft);
}

TEST_CASE("kv tiers: a tier that holds nothing changes nothing but the offload report") {
  const json base = central(sessions_scenario());
  const json empty = central(with_host_tier(sessions_scenario(), 0.0));
  CHECK(empty["metrics"]["kv_offload"]["tiers"][0]["hit_tokens"] == 0);
  for (const char* k : {"ttft_ms", "e2e_s", "prefix_cache", "sessions", "throughput"}) CHECK(empty["metrics"][k] == base["metrics"][k]);
}

TEST_CASE("kv tiers: with no sessions, a tier that holds nothing leaves a shipped shared-prefix preset as it was") {
  // I5.2 (80% shared prefix, prefix caching on): HBM alone and HBM plus an
  // empty host tier give the same run, figure for figure, but the offload report.
  json s = sightline::test::preset("scenarios", "I5.2");
  s["serving"].erase("compare");
  const json base = central(s);
  s["serving"]["kv_cache"]["offload"] = {{"tiers", {{{"preset", "pcie5-host-dram"}, {"capacity_GiB", 0.0}}}}};
  const json empty = central(s);
  CHECK_FALSE(base["metrics"].contains("kv_offload"));
  CHECK(empty["metrics"]["kv_offload"]["tiers"][0]["hit_tokens"] == 0);
  json a = base["metrics"], b = empty["metrics"];
  b.erase("kv_offload");
  CHECK(a == b);
  CHECK(base["headline"] == empty["headline"]);
}

TEST_CASE("kv tiers: a block evicted from a small first tier is found in the next one") {
  json s = sessions_scenario();
  s["serving"]["kv_cache"]["offload"] = {{"tiers", {{{"preset", "pcie5-host-dram"}, {"capacity_GiB", 0.5}}, "local-nvme-gen4"}}};
  const json r = central(s);
  const json& tiers = r["metrics"]["kv_offload"]["tiers"];
  REQUIRE(tiers.size() == 2);
  CHECK(tiers[0]["dropped_blocks"].get<int64_t>() > 0);
  CHECK(tiers[1]["hit_tokens"].get<int64_t>() > 0);
  CHECK(at(r, "/metrics/kv_offload/exposed_reload_time_s") <= at(r, "/metrics/kv_offload/reload_time_s") * 1.05);
  // Serial reloads add the whole reload time to the steps.
  s["serving"]["kv_cache"]["offload"]["reload_overlap"] = "serial";
  const json serial = central(s);
  CHECK(at(serial, "/metrics/kv_offload/exposed_reload_time_s") ==
        doctest::Approx(at(serial, "/metrics/kv_offload/reload_time_s")));
}

TEST_CASE("sessions: longer tool gaps never raise the hit rate") {
  for (bool tier : {false, true}) {
    double last = 2;
    for (double gap : {1.0, 5.0, 20.0, 80.0}) {
      json s = sessions_scenario(gap);
      if (tier) s = with_host_tier(s, 2.0);
      const double hit = at(central(s), "/metrics/prefix_cache/cached_token_fraction");
      INFO("tier " << tier << ", think_time_s " << gap << ": hit rate " << hit);
      CHECK(hit <= last);
      last = hit;
    }
  }
}

TEST_CASE("routers: prefix affinity never lowers the hit rate of a shared-prefix workload against round robin") {
  for (int groups : {4, 16, 64})
    for (uint64_t seed : {1u, 2u}) {
      const double rr = at(central(shared_prefix_scenario("round_robin", groups, seed)), "/metrics/prefix_cache/cached_token_fraction");
      const double pa = at(central(shared_prefix_scenario("prefix_affinity", groups, seed)), "/metrics/prefix_cache/cached_token_fraction");
      INFO(groups << " groups, seed " << seed << ": round robin " << rr << ", prefix affinity " << pa);
      CHECK(pa >= rr);
    }
}

TEST_CASE("routers: session affinity keeps a session's context on its replica") {
  json s = sessions_scenario(10, 40);
  s["hardware"] = {{"gpu", "h100-sxm"}, {"gpus_per_node", 4}, {"intra_node", "nvlink4-nvswitch"}};
  s["serving"]["cluster"] = {{"router", "round_robin"}, {"pools", {{{"replicas", 4}, {"tp", 1}}}}};
  const double rr = at(central(s), "/metrics/sessions/returning_cached_token_fraction");
  s["serving"]["cluster"]["router"] = "session_affinity";
  const double sticky = at(central(s), "/metrics/sessions/returning_cached_token_fraction");
  s["serving"]["cluster"]["router"] = "kv_aware";
  const double kv = at(central(s), "/metrics/sessions/returning_cached_token_fraction");
  INFO("round robin " << rr << ", session affinity " << sticky << ", kv_aware " << kv);
  CHECK(sticky > rr);
  CHECK(kv > rr);
}

namespace {
struct CacheLoads : sightline::serve::ReplicaLoads {
  std::vector<int64_t> requests, cached;
  int64_t outstanding(int replica) const override { return requests[static_cast<size_t>(replica)]; }
  double kv_load(int, int) const override { return 0; }
  int64_t cached_prefix_tokens(int replica, const sightline::serve::RequestSpec&) const override {
    return cached[static_cast<size_t>(replica)];
  }
  double kv_route_cost(int replica, const sightline::serve::RequestSpec& r) const override {
    return static_cast<double>(r.prompt - cached[static_cast<size_t>(replica)] + 100 * requests[static_cast<size_t>(replica)]);
  }
};
}  // namespace

TEST_CASE("routers: prefix affinity takes the longest cached prefix within the load bound") {
  using namespace sightline::serve;
  CacheLoads loads;
  loads.requests = {2, 9, 2, 1};
  loads.cached = {0, 4096, 1024, 0};
  const std::vector<int> all = {0, 1, 2, 3};
  RequestSpec r;
  r.prompt = 5000;
  // Mean outstanding 3.5: bound 1.25 x 3.5 + 1 = 5.375 leaves replica 1 out.
  CHECK(make_router("prefix_affinity", "")->pick_request(all, r, loads) == 2);
  CHECK(make_router("prefix_affinity", "", RouterOptions{4.0})->pick_request(all, r, loads) == 1);
  loads.cached = {0, 0, 0, 0};  // nothing cached anywhere: the fewest outstanding
  CHECK(make_router("prefix_affinity", "")->pick_request(all, r, loads) == 3);
  loads.cached = {0, 4096, 1024, 0};
  // Costs (prompt - cached + 100 x outstanding): 5200, 1804, 4176, 5100.
  CHECK(make_router("kv_aware", "")->pick_request(all, r, loads) == 1);
  loads.requests = {2, 40, 2, 1};  // 904 + 4000 now: replica 2's 4176 is the least
  CHECK(make_router("kv_aware", "")->pick_request(all, r, loads) == 2);
  loads.requests = {2, 9, 2, 1};
  auto sticky = make_router("session_affinity", "");
  r.session = 7;
  const int home = sticky->pick_request(all, r, loads);
  CHECK(home == 3);
  loads.requests = {0, 0, 0, 50};
  CHECK(sticky->pick_request(all, r, loads) == home);
}

TEST_CASE("sessions and tiers: bad inputs fail with located errors") {
  json s = sessions_scenario();
  s["serving"]["workload"]["sessions"]["turn"] = 3;
  expect_validation_error(s, "unknown_key", "/serving/workload/sessions/turn");
  s = sessions_scenario();
  s["serving"]["workload"]["num_requests"] = 10;
  expect_validation_error(s, "unknown_key", "/serving/workload/num_requests");
  s = sessions_scenario();
  s["serving"]["workload"]["sessions"]["think_time_s"] = {{"dist", "exponential"}};
  expect_validation_error(s, "missing_key", "/serving/workload/sessions/think_time_s/mean_s");
  s = sessions_scenario();
  s["serving"]["workload"]["sessions"]["think_time_s"] = -1;
  expect_validation_error(s, "out_of_range", "/serving/workload/sessions/think_time_s");
  s = sessions_scenario();
  s["serving"]["workload"].erase("num_sessions");
  expect_validation_error(s, "missing_key", "/serving/workload/num_sessions");
  s = sessions_scenario();
  s["serving"]["workload"]["sessions"]["system_prompt_tokens"] = 7000;
  s["serving"]["workload"]["sessions"]["first_input_tokens"] = 1000;
  s["serving"]["workload"]["sessions"]["output_tokens"] = 500;
  expect_validation_error(s, "constraint_violation", "/serving/workload/sessions/first_input_tokens");
  s["serving"]["workload"]["sessions"]["first_input_tokens"] = 1200;
  expect_validation_error(s, "out_of_range", "/serving/workload/sessions/first_input_tokens");
  s = sessions_scenario();
  s["serving"]["max_qps_search"] = json::object();
  expect_validation_error(s, "constraint_violation", "/serving/max_qps_search");
  s = with_host_tier(sessions_scenario(), 1);
  s["serving"]["kv_cache"]["prefix_caching"] = false;
  expect_validation_error(s, "constraint_violation", "/serving/kv_cache/offload");
  s = sessions_scenario();
  s["serving"]["kv_cache"]["offload"] = {{"tiers", {"pcie9-host"}}};
  expect_validation_error(s, "unknown_preset", "/serving/kv_cache/offload/tiers/0");
  s = sessions_scenario();
  s["serving"]["kv_cache"]["offload"] = {{"tiers", {{{"capacity_GiB", 8}, {"bandwidth_GBps", 50}}}}};
  expect_validation_error(s, "missing_key", "/serving/kv_cache/offload/tiers/0/latency_us");
  s = sessions_scenario();
  s["serving"]["kv_cache"]["offload"] = {{"tiers", {{{"preset", "local-nvme-gen4"}, {"bandwidth", 5}}}}};
  expect_validation_error(s, "unknown_key", "/serving/kv_cache/offload/tiers/0/bandwidth");
  s = sessions_scenario();
  s["serving"]["kv_cache"]["offload"] = {{"tiers", {"local-nvme-gen4", "local-nvme-gen4"}}};
  expect_validation_error(s, "invalid_value", "/serving/kv_cache/offload/tiers/1");
  s = sessions_scenario();
  s["serving"]["kv_cache"]["offload"] = {{"tiers", {{{"preset", "local-nvme-gen4"}, {"name", "store"}, {"shared", true}}, "pcie5-host-dram"}}};
  expect_validation_error(s, "constraint_violation", "/serving/kv_cache/offload/tiers/1");
  s = sessions_scenario();
  s["serving"]["kv_cache"]["offload"] = {{"tiers", {"pcie5-host-dram"}}, {"reload_overlap", "partly"}};
  expect_validation_error(s, "invalid_value", "/serving/kv_cache/offload/reload_overlap");
  s = sessions_scenario();
  s["serving"]["cluster"] = {{"router", "round_robin"}, {"router_load_bound", 2}};
  expect_validation_error(s, "constraint_violation", "/serving/cluster/router_load_bound");
  s = sessions_scenario();
  s["serving"]["cluster"] = {{"router", "prefix_affinity"}, {"router_load_bound", 0.5}};
  expect_validation_error(s, "out_of_range", "/serving/cluster/router_load_bound");
}

TEST_CASE("kv tiers: a shared store serves a session's context to another replica") {
  json s = sessions_scenario(20, 40);
  s["hardware"] = {{"gpu", "h100-sxm"}, {"gpus_per_node", 4}, {"intra_node", "nvlink4-nvswitch"}};
  s["serving"]["cluster"] = {{"router", "round_robin"}, {"pools", {{{"replicas", 4}, {"tp", 1}}}}};
  s["serving"]["kv_cache"]["gpu_memory_utilization"] = 0.25;
  const json local = central(with_host_tier(s, 1.0));
  s["serving"]["kv_cache"]["offload"] = {
      {"tiers", {{{"preset", "pcie5-host-dram"}, {"capacity_GiB", 1.0}},
                 {{"name", "store"}, {"capacity_GiB", 200}, {"bandwidth_GBps", 25}, {"latency_us", 50}, {"shared", true}}}}};
  const json shared = central(s);
  const double before = at(local, "/metrics/sessions/returning_cached_token_fraction");
  const double after = at(shared, "/metrics/sessions/returning_cached_token_fraction");
  INFO("host tier alone " << before << ", with a shared store " << after);
  CHECK(shared["metrics"]["kv_offload"]["tiers"][1]["hit_tokens"].get<int64_t>() > 0);
  CHECK(after > before);
}

namespace {
// A multi-turn trace of `sessions` sessions of `turns` turns, `gap_s` apart as recorded.
json trace_scenario(int sessions, int turns, double gap_s) {
  json s = sessions_scenario();
  json rows = json::array({"session_id,arrival_s,input_tokens,output_tokens"});
  for (int i = 0; i < sessions; ++i)
    for (int k = 0; k < turns; ++k)
      rows.push_back(std::to_string(1000 - i) + "," + std::to_string(i * 2.0 + k * gap_s) + "," +
                     std::to_string(k == 0 ? 1500 : 300 + 10 * k) + ",100");
  s["serving"]["workload"] = {{"sessions", {{"csv", rows}, {"system_prompt_tokens", 500}}}};
  return s;
}
}  // namespace

TEST_CASE("sessions trace: turns replay their recorded gaps, never before the previous turn's answer") {
  for (double gap : {0.0, 30.0}) {
    const json r = central(trace_scenario(6, 4, gap));
    CHECK(r["metrics"]["sessions"]["total"] == 6);
    CHECK(r["metrics"]["sessions"]["turns_completed"] == 24);
    const json& rows = r["requests"]["rows"];
    REQUIRE(rows.size() == 24);
    for (size_t i = 0; i < rows.size(); ++i) {
      if (i % 4 == 0) {
        CHECK(rows[i][1].get<double>() == doctest::Approx(static_cast<double>(i / 4) * 2.0));  // sessions by first arrival
        continue;
      }
      const double arrival = rows[i][1].get<double>(), previous_done = rows[i - 1][6].get<double>();
      const double recorded = rows[i - 1][1].get<double>() + gap;
      CHECK(arrival >= previous_done);
      CHECK(arrival == doctest::Approx(std::max(recorded, previous_done)));
      CHECK(rows[i][2].get<int64_t>() == rows[i - 1][2].get<int64_t>() + 100 + 300 + 10 * static_cast<int64_t>(i % 4));
    }
  }
  json s = trace_scenario(2, 2, 1.0);
  s["serving"]["workload"]["sessions"]["csv"][1] = "0,1.0,100";
  expect_validation_error(s, "invalid_value", "/serving/workload/sessions/csv/1");
  s = trace_scenario(2, 2, 1.0);
  s["serving"]["workload"]["sessions"]["csv"][0] = "session,arrival_s,input_tokens,output_tokens";
  expect_validation_error(s, "invalid_value", "/serving/workload/sessions/csv/0");
  s = trace_scenario(2, 2, 1.0);
  s["serving"]["workload"]["sessions"]["csv"][2] = "0,1.0,0,100";
  expect_validation_error(s, "out_of_range", "/serving/workload/sessions/csv/2");
  s = trace_scenario(2, 2, 1.0);
  s["serving"]["workload"]["arrival"] = {{"process", "poisson"}, {"rate_qps", 1}};
  expect_validation_error(s, "constraint_violation", "/serving/workload/arrival");
  s = trace_scenario(2, 2, 1.0);
  s["serving"]["workload"]["sessions"]["turns"] = 3;
  expect_validation_error(s, "unknown_key", "/serving/workload/sessions/turns");
}
