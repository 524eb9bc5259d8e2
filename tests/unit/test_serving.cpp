// The serving simulator through the public JSON API: invariants that hold for
// every run, and the expected behaviours of the seed suite's I2-I5 scenarios.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "presets/preset_store.hpp"
#include "test_helpers.hpp"

using namespace sightline::test;

namespace {

// A preset with its serving.steady_state left out: these tests judge mechanisms on
// runs of the requests they ask for, not runs grown until the SLO verdict is
// decided (the presets as shipped, growth included, are the determinism test's).
json scenario(const std::string& id) {
  json s = preset("scenarios", id);
  if (s.contains("serving")) s["serving"].erase("steady_state");
  return s;
}

json ok_result(const json& s) {
  const json e = run(s);
  if (!e["ok"].get<bool>()) FAIL_CHECK(e["error"].dump());
  REQUIRE(e["ok"].get<bool>());
  return e["result"];
}

// The central run alone (no cost-bound runs): a third of the work, for checks
// of the central run's own numbers and invariants.
json ok_central_result(const json& s) {
  const json e = envelope(sightline::api::run_scenario_central_only(s.dump()));
  if (!e["ok"].get<bool>()) FAIL_CHECK(e["error"].dump());
  REQUIRE(e["ok"].get<bool>());
  json r = e["result"];
  CHECK(r["intervals"] == "central_only");
  return r;
}

double at(const json& r, const char* pointer) { return r.at(json::json_pointer(pointer)).get<double>(); }

// Column index of the per-request records.
size_t col(const json& r, const std::string& name) {
  const json& cols = r["requests"]["columns"];
  for (size_t i = 0; i < cols.size(); ++i)
    if (cols[i] == name) return i;
  FAIL("no column " << name);
  return 0;
}

// Invariants every run must satisfy.
void check_invariants(const json& r) {
  const json& req = r["metrics"]["requests"];
  CHECK(req["completed"].get<int64_t>() + req["dropped"].get<int64_t>() + req["unfinished"].get<int64_t>() ==
        req["total"].get<int64_t>());
  if (r["limits"]["limit_hit"].is_null()) {
    CHECK(req["unfinished"] == 0);  // every request completes or is reported dropped
  }
  // Tokens: each completed request put prompt + output - 1 tokens into its KV
  // cache, less prefix-cache hits, plus what recompute preemption discarded.
  const json& t = r["tokens"];
  CHECK(t["conservation_violations"] == 0);
  CHECK(t["processed"] == t["expected_processed"]);
  // KV blocks are never over-allocated.
  const json& kv = r["metrics"]["kv_cache"];
  CHECK(kv["peak_blocks_used"].get<int64_t>() <= kv["blocks_total"].get<int64_t>());
  CHECK(kv["peak_block_utilization"].get<double>() <= 1.0);
  // Per-request timestamps are ordered and TTFT <= E2E.
  if (r.contains("requests")) {
    const size_t a = col(r, "arrival_s"), s = col(r, "first_scheduled_s"), f = col(r, "first_token_s"),
                 c = col(r, "completion_s"), st = col(r, "state");
    for (const json& row : r["requests"]["rows"]) {
      if (row[st] != "completed") continue;
      CHECK(row[a].get<double>() <= row[s].get<double>());
      CHECK(row[s].get<double>() <= row[f].get<double>());
      CHECK(row[f].get<double>() <= row[c].get<double>());
    }
  }
  CHECK(r["metrics"]["ttft_ms"]["max"].get<double>() <= r["metrics"]["e2e_s"]["max"].get<double>() * 1e3 + 1e-9);
}

json smaller(json s, int64_t n) {
  s["serving"]["workload"]["num_requests"] = n;
  return s;
}

}  // namespace

TEST_CASE("serving: every I2-I5 preset runs and reports its key metrics") {
  // The central run only: every metric and invariant checked here is the
  // central run's (the cost bounds add intervals, nothing else). The full runs
  // as shipped, intervals included, are the determinism test's
  // (tests/wasm/determinism.test.mjs: every preset, native and wasm); running
  // them here too cost about 25 s of CI CPU for no check of its own.
  // The presets that ship a max-QPS search (I2.3, I5.5: a minute of CPU
  // between them) are run as shipped by the determinism test too, which
  // checks their answer against the recorded brute-force capacity
  // (tests/cli/capacity_record.mjs); the invariants below are the
  // simulator's, checked on every other preset.
  std::vector<std::string> ids;
  for (const json* p : sightline::list_presets("scenarios")) {
    const std::string id = p->at("id").get<std::string>();
    const bool serving_suite = id.size() > 2 && id[0] == 'I' && id[1] >= '2' && id[1] <= '5';
    const bool ships_search = p->contains("serving") && p->at("serving").contains("max_qps_search");
    if (serving_suite && !ships_search) ids.push_back(id);
  }
  CHECK(ids.size() >= 17);
  for (const std::string& id : ids) {
    CAPTURE(id);
    json s = scenario(id);
    CHECK(s["title"].get<std::string>().size() > 3);
    CHECK(s["source"].get<std::string>().find(id) != std::string::npos);
    const json r = ok_central_result(s);
    CHECK(r["kind"] == "serving_simulation");
    REQUIRE(r["key_metrics"].is_array());
    REQUIRE(r["key_metrics"].size() == s["serving"]["key_metrics"].size());
    for (size_t i = 0; i < r["key_metrics"].size(); ++i) {
      const json& k = r["key_metrics"][i];
      CAPTURE(k.dump());
      CHECK(k["id"] == s["serving"]["key_metrics"][i]);  // the scenario's order
      CHECK(!k["value"].is_null());
    }
    check_invariants(r);
  }
}

TEST_CASE("serving: invariants hold across schedulers, preemption modes and techniques") {
  std::vector<std::pair<std::string, json>> cases;
  {
    json s = smaller(scenario("I2.3"), 400);  // overload with little KV memory: preemption by recompute
    s["serving"].erase("max_qps_search");
    s["serving"]["kv_cache"] = {{"gpu_memory_utilization", 0.3}};
    cases.emplace_back("overload recompute", s);
    s["serving"]["kv_cache"] = {{"preemption", "swap"}, {"gpu_memory_utilization", 0.3}};
    cases.emplace_back("overload swap", s);
    s["serving"]["kv_cache"] = {{"preemption", "swap"}, {"gpu_memory_utilization", 0.25}, {"swap_space_GiB", 0.5}};
    cases.emplace_back("swap space full", s);
  }
  {
    json s = smaller(scenario("I2.5"), 300);
    cases.emplace_back("chunked prefill", s);
    s["serving"]["scheduler"]["priority"] = "fcfs";
    cases.emplace_back("chunked fcfs", s);
    s["serving"]["scheduler"]["priority"] = "prefill_first";
    cases.emplace_back("chunked prefill-first", s);
  }
  {
    json s = smaller(scenario("I2.2"), 300);
    s["serving"]["scheduler"] = {{"policy", "continuous"}, {"priority", "decode_first"}};
    cases.emplace_back("continuous decode-first", s);
    s["serving"]["scheduler"] = {{"policy", "continuous"}, {"priority", "fcfs"}};
    cases.emplace_back("continuous fcfs", s);
    s["serving"]["scheduler"] = {{"policy", "static"}, {"batch_size", 16}, {"max_wait_ms", 50}};
    cases.emplace_back("static", s);
  }
  cases.emplace_back("paged vs contiguous", smaller(scenario("I3.2"), 150));
  cases.emplace_back("speculative", smaller(scenario("I5.1"), 60));
  cases.emplace_back("prefix cache", smaller(scenario("I5.2"), 100));
  cases.emplace_back("disaggregated", smaller(scenario("I5.3"), 120));
  {
    json s = smaller(scenario("I5.5"), 200);
    s["serving"].erase("max_qps_search");
    cases.emplace_back("multi-LoRA", s);
  }
  cases.emplace_back("MoE", smaller(scenario("I4.2"), 150));
  for (const auto& entry : cases) {
    const auto& name = entry.first;  // not a structured binding: CAPTURE/INFO are lambdas, which may not capture one in C++17
    const auto& s = entry.second;
    CAPTURE(name);
    const json r = ok_result(s);
    check_invariants(r);
    if (r.contains("compare")) {
      CHECK(r["compare"]["baseline"]["tokens"]["conservation_violations"] == 0);
      CHECK(r["compare"]["baseline"]["tokens"]["processed"] == r["compare"]["baseline"]["tokens"]["expected_processed"]);
    }
    if (name.rfind("overload", 0) == 0 || name == "swap space full")
      CHECK(r["metrics"]["kv_cache"]["preemptions"].get<int64_t>() > 0);
    if (name == "overload swap") {
      CHECK(r["metrics"]["kv_cache"]["swaps_out"].get<int64_t>() > 0);
      CHECK(r["metrics"]["gpu"]["busy_time_s_by_family"]["kv_swap"].get<double>() > 0);
    }
  }
}

// Token conservation counted outside the engine's token counters: every token
// a step computed (the trace's prefill and decode tokens) belongs to a
// completed request, which needs prompt + output - 1 tokens in its KV cache
// less what it found in the prefix cache (the per-request records).
// Scenarios without preemption, speculation or static padding, where every
// computed token is one of those.
TEST_CASE("serving: tokens computed by the steps equal the tokens the per-request records need") {
  std::vector<std::pair<std::string, json>> cases;
  cases.emplace_back("continuous", smaller(scenario("I2.2"), 300));
  {
    json s = smaller(scenario("I2.5"), 200);
    s["serving"].erase("compare");
    cases.emplace_back("chunked prefill", s);
    s["serving"]["scheduler"]["priority"] = "fcfs";
    cases.emplace_back("chunked fcfs", s);
  }
  {
    json s = smaller(scenario("I5.2"), 150);
    s["serving"].erase("compare");
    cases.emplace_back("prefix cache", s);
  }
  {
    json s = smaller(scenario("I5.3"), 120);
    s["serving"].erase("compare");
    cases.emplace_back("disaggregated", s);
  }
  {
    json s = smaller(scenario("I2.2"), 400);
    s["hardware"] = {{"gpu", "a100-80g-sxm"}, {"gpus_per_node", 4}, {"intra_node", "nvlink3-nvswitch"}};
    s["serving"].erase("parallelism");
    s["serving"]["cluster"] = {{"router", "least_outstanding"}, {"pools", {{{"name", "a"}, {"replicas", 2}, {"tp", 1}, {"pp", 2}}}}};
    cases.emplace_back("two replicas, pp 2", s);
  }
  for (auto& entry : cases) {
    auto& name = entry.first;  // not a structured binding: CAPTURE/INFO are lambdas, which may not capture one in C++17
    auto& s = entry.second;
    CAPTURE(name);
    s["serving"]["outputs"] = {{"trace", true}, {"trace_max_steps", 1000000}, {"max_request_records", 100000}};
    const json r = ok_result(s);
    REQUIRE(r["metrics"]["kv_cache"]["preemptions"] == 0);
    REQUIRE(r["metrics"]["requests"]["completed"] == r["metrics"]["requests"]["total"]);
    int64_t needed = 0;
    const size_t p = col(r, "prompt_tokens"), o = col(r, "output_tokens"), c = col(r, "cached_tokens");
    REQUIRE(r["requests"]["truncated"] == false);
    for (const json& row : r["requests"]["rows"])
      needed += row[p].get<int64_t>() + row[o].get<int64_t>() - 1 - row[c].get<int64_t>();
    int64_t computed = 0, steps = 0;
    for (const json& e : r["trace"]["traceEvents"]) {
      if (e["ph"] != "X" || e["cat"] != "step") continue;
      ++steps;
      computed += e["args"]["prefill_tokens"].get<int64_t>() + e["args"]["decode_tokens"].get<int64_t>();
    }
    CHECK(steps == r["metrics"]["concurrency"]["steps"]);
    CHECK(needed > 0);
    CHECK(computed == needed);
  }
}

TEST_CASE("serving: same seed gives identical bytes; a different seed changes arrivals") {
  json s = smaller(scenario("I2.2"), 200);
  const std::string a = sightline::api::run_scenario(s.dump());
  const std::string b = sightline::api::run_scenario(s.dump());
  CHECK(a == b);
  s["seed"] = 2;
  const json r1 = json::parse(a)["result"];
  const json r2 = ok_result(s);
  const size_t ac = col(r1, "arrival_s");
  int differ = 0;
  for (size_t i = 0; i < 50; ++i) differ += r1["requests"]["rows"][i][ac] != r2["requests"]["rows"][i][ac] ? 1 : 0;
  CHECK(differ > 45);
}

TEST_CASE("serving: a sliced run equals a one-shot run and reports monotone progress") {
  const json s = smaller(scenario("I5.3"), 80);
  sightline::api::Engine engine;
  const json started = json::parse(engine.start(s.dump()));
  REQUIRE(started["ok"] == true);
  const int handle = started["result"]["handle"];
  double last = 0;
  int slices = 0;
  for (;;) {
    const json st = json::parse(engine.step(handle, 200));
    REQUIRE(st["ok"] == true);
    CHECK(st["result"]["progress"].get<double>() >= last);
    last = st["result"]["progress"];
    ++slices;
    if (st["result"]["done"].get<bool>()) break;
  }
  CHECK(slices > 5);
  CHECK(last == 1.0);
  const json sliced = json::parse(engine.result(handle));
  CHECK(sliced == run(s));
}

TEST_CASE("serving: a sliced central-only run equals the one-shot central-only run (the page's search points)") {
  const json s = smaller(scenario("I2.2"), 60);
  sightline::api::Engine engine;
  const json started = json::parse(engine.start_central_only(s.dump()));
  REQUIRE(started["ok"] == true);
  const int handle = started["result"]["handle"];
  while (!json::parse(engine.step(handle, 50))["result"]["done"].get<bool>()) {
  }
  const json sliced = json::parse(engine.result(handle));
  REQUIRE(sliced["ok"] == true);
  CHECK(sliced["result"]["intervals"] == "central_only");
  CHECK(sliced == json::parse(sightline::api::run_scenario_central_only(s.dump())));
  CHECK(sliced != run(s));  // the full run carries its intervals
}

TEST_CASE("serving: the resolved scenario from validate runs to the same result") {
  const json s = smaller(scenario("I5.1"), 40);
  const json v = validate(s);
  REQUIRE(v["ok"] == true);
  CHECK(v["result"]["serving"]["mode"] == "simulate");
  CHECK(v["result"]["serving"]["cluster"]["pools"][0]["tp"] == 4);
  const json r1 = ok_result(s);
  json resolved = v["result"];
  const json r2 = ok_result(resolved);
  CHECK(r1["metrics"] == r2["metrics"]);
}

TEST_CASE("serving I2.1 vs I2.3: light load keeps the tail near the median; QPS 50 builds a queue") {
  const json low = ok_result(scenario("I2.1"));
  json hs = scenario("I2.3");
  hs["serving"].erase("max_qps_search");
  const json high = ok_result(hs);
  const double low_p50 = at(low, "/metrics/ttft_ms/p50"), low_p99 = at(low, "/metrics/ttft_ms/p99");
  const double high_p50 = at(high, "/metrics/ttft_ms/p50"), high_p99 = at(high, "/metrics/ttft_ms/p99");
  MESSAGE("QPS 2: TTFT p50 " << low_p50 << " ms, p99 " << low_p99 << " ms; QPS 50: p50 " << high_p50 << " ms, p99 "
                             << high_p99 << " ms");
  CHECK(low_p99 - low_p50 < 250.0);        // within a quarter second
  CHECK(at(low, "/metrics/queueing_ms/p99") < 100.0);
  CHECK(high_p99 - high_p50 > 100 * (low_p99 - low_p50));
  CHECK(high_p99 > 50 * low_p99);
  CHECK(at(high, "/metrics/concurrency/waiting_max") > 500);
  CHECK(at(low, "/metrics/concurrency/waiting_max") < 10);
  // The queue grows while arrivals exceed the service rate: 2000 requests at
  // QPS 50 arrive over 40 s; compare the queue at 5 s and at 35 s.
  const json& t = high["time_series"]["t_s"];
  const json& w = high["time_series"]["waiting"];
  REQUIRE(w.size() > 20);
  size_t early = 0, late = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t[i].get<double>() <= 5.0) early = i;
    if (t[i].get<double>() <= 35.0) late = i;
  }
  CHECK(w[late].get<double>() > 4 * w[early].get<double>());
  CHECK(at(high, "/metrics/throughput/requests_per_s") < 0.5 * 50);
}

TEST_CASE("serving I2.4: continuous batching gives at least twice the throughput of static batching") {
  const json r = ok_result(smaller(scenario("I2.4"), 500));
  const double ratio = at(r, "/compare/ratio/output_tokens_per_s");
  MESSAGE("continuous / static throughput = " << ratio);
  CHECK(ratio >= 2.0);
  check_invariants(r);
}

TEST_CASE("serving I2.5: chunked prefill lowers TTFT variance and p99 near saturation, and TPOT/ITL spikes") {
  const json base = scenario("I2.5");
  const double rate = base["serving"]["workload"]["arrival"]["rate_qps"];
  bool ttft_better = false;
  // Around the preset's rate, on a grid fine enough to land near saturation
  // wherever the kernels put it (fused serving kernels moved it to ~1.05x).
  for (double f : {0.9, 1.0, 1.05, 1.1}) {
    json s = base;
    s["serving"]["workload"]["arrival"]["rate_qps"] = rate * f;
    const json r = ok_result(s);
    const json& b = r["compare"]["baseline"]["metrics"];
    const double sd = at(r, "/metrics/ttft_ms/stddev"), sd_b = b["ttft_ms"]["stddev"];
    const double p99 = at(r, "/metrics/ttft_ms/p99"), p99_b = b["ttft_ms"]["p99"];
    MESSAGE("rate " << rate * f << ": TTFT stddev " << sd << " vs " << sd_b << " ms, p99 " << p99 << " vs " << p99_b
                    << " ms; TPOT p99 " << at(r, "/metrics/tpot_ms/p99") << " vs " << b["tpot_ms"]["p99"]
                    << "; ITL p99 " << at(r, "/metrics/itl_ms/p99") << " vs " << b["itl_ms"]["p99"]);
    if (sd < 0.8 * sd_b && p99 < 0.8 * p99_b) ttft_better = true;
    if (f <= 1.0) CHECK(at(r, "/metrics/tpot_ms/p99") < b["tpot_ms"]["p99"].get<double>());
    CHECK(at(r, "/metrics/itl_ms/p99") < 0.6 * b["itl_ms"]["p99"].get<double>());
  }
  CHECK(ttft_better);
}

TEST_CASE("serving I3.1 and I3.2: KV capacity and paged vs contiguous allocation") {
  const json r1 = ok_result(scenario("I3.1"));
  const double max_conc = at(r1, "/capacity/max_concurrent_at_max_len");
  MESSAGE("Llama-2-7B on A100-80G: " << max_conc << " concurrent 4096-token requests");
  CHECK(max_conc >= 26);
  CHECK(max_conc <= 32);
  CHECK(at(r1, "/metrics/concurrency/running_max") == max_conc);
  CHECK(at(r1, "/capacity/kv_GiB_per_max_len_request") == doctest::Approx(2.0));

  const json r2 = ok_result(smaller(scenario("I3.2"), 250));
  const double ratio = at(r2, "/compare/ratio/running_mean");
  const json& base = r2["compare"]["baseline"]["metrics"]["kv_cache"];
  MESSAGE("paged / contiguous concurrent requests = " << ratio << "; fragmentation " << at(r2, "/metrics/kv_cache/fragmentation")
                                                      << " vs " << base["fragmentation"]);
  CHECK(ratio > 1.6);
  CHECK(ratio < 3.0);
  CHECK(at(r2, "/metrics/kv_cache/fragmentation") < 0.05);
  CHECK(base["fragmentation"].get<double>() > 0.4);
  CHECK(at(r2, "/compare/ratio/output_tokens_per_s") > 1.0);
}

TEST_CASE("serving I4.3: GQA cuts the KV cache per token 8x for Llama-2-70B") {
  const json r = ok_result(smaller(scenario("I4.3"), 150));
  CHECK(at(r, "/capacity/kv_reduction_vs_mha") == doctest::Approx(8.0));
  CHECK(at(r, "/capacity/kv_KiB_per_token") == doctest::Approx(320.0));  // 2 x 80 layers x 8 heads x 128 x 2 B
  CHECK(at(r, "/compare/ratio/kv_KiB_per_token") == doctest::Approx(1.0 / 8.0));
  CHECK(at(r, "/compare/ratio/kv_tokens_per_replica") > 8.0);  // same weights, 8x smaller tokens
  CHECK(at(r, "/compare/ratio/tpot_mean_ms") < 1.0);          // less KV to read per decode step
}

TEST_CASE("serving I5.1: speculative decoding speeds up low-load decode and stops helping at high load") {
  const json low = ok_result(smaller(scenario("I5.1"), 150));
  const double speedup_low = at(low, "/compare/speedup/tpot_mean");
  CHECK(at(low, "/metrics/speculative/tokens_per_verify_step") ==
        doctest::Approx(at(low, "/metrics/speculative/expected_tokens_per_verify_step")).epsilon(0.05));
  json hs = smaller(scenario("I5.1"), 200);
  hs["serving"]["workload"]["arrival"]["rate_qps"] = 10;
  const json high = ok_result(hs);
  const double speedup_high = at(high, "/compare/speedup/tpot_mean");
  MESSAGE("speculative decode speedup: " << speedup_low << "x at QPS 1, " << speedup_high << "x at QPS 10");
  CHECK(speedup_low > 1.2);
  CHECK(speedup_high < 1.0);
}

TEST_CASE("serving I5.2: an 80% shared prefix cuts TTFT to about 20-30%") {
  const json r = ok_result(smaller(scenario("I5.2"), 200));
  const double ratio = at(r, "/compare/ratio/ttft_mean_ms");
  MESSAGE("TTFT with prefix caching / without = " << ratio);
  CHECK(ratio > 0.15);
  CHECK(ratio < 0.35);
  CHECK(at(r, "/metrics/prefix_cache/cached_token_fraction") > 0.75);
  CHECK(at(r, "/compare/ratio/kv_peak_blocks_used") < 0.6);  // the shared prefix is stored once
}

TEST_CASE("serving I5.3: disaggregation lowers TPOT, raises TTFT, and the KV transfer is visible") {
  const json r = ok_result(smaller(scenario("I5.3"), 300));
  const double transfer_ms = at(r, "/metrics/kv_transfer/transfer_ms/mean");
  MESSAGE("TPOT ratio " << at(r, "/compare/ratio/tpot_mean_ms") << ", TTFT ratio " << at(r, "/compare/ratio/ttft_mean_ms")
                        << ", transfer " << transfer_ms << " ms");
  CHECK(at(r, "/compare/ratio/tpot_mean_ms") < 0.9);  // no prefill interference in decode
  CHECK(at(r, "/compare/ratio/ttft_mean_ms") > 1.0);  // half the GPUs prefill
  CHECK(transfer_ms > 0.05);
  CHECK(at(r, "/metrics/kv_transfer/transfers") == at(r, "/metrics/requests/completed"));
  // Bytes: the prompt's KV cache, 320 KiB per token for Llama-2-70B over the 4 GPUs of a replica.
  const double mib = at(r, "/metrics/kv_transfer/MiB_per_transfer");
  CHECK(mib > 100);
  CHECK(mib < 1000);
}

TEST_CASE("serving I5.4: int4 weights make memory-bound decode 2.5-4x faster and fit Llama-2-70B on one A100") {
  const json r = ok_result(smaller(scenario("I5.4"), 80));
  MESSAGE("int4 decode speedup " << at(r, "/quantization/decode_speedup") << "x, weights "
                                 << at(r, "/quantization/weights_GiB") << " GiB");
  // The suite's "about 4x" is the weight-byte ratio; int4 kernels stream at a
  // lower bandwidth efficiency and add dequantization, so the realized step
  // speedup is below it (gpt-fast measured 1.88x for Llama-2-7B on A100,
  // measurements.md Q-4).
  CHECK(at(r, "/quantization/decode_speedup") > 2.5);
  CHECK(at(r, "/quantization/decode_speedup") < 4.2);
  CHECK(r["quantization"]["unquantized_fits"] == false);
  CHECK(at(r, "/quantization/weights_GiB") < 40);
  CHECK(at(r, "/quantization/prefill_speedup") < at(r, "/quantization/decode_speedup"));
  CHECK(r["deployment"]["gpus"] == 1);
}

TEST_CASE("serving: arrival processes and length distributions") {
  json s = smaller(scenario("I2.1"), 2000);
  s["serving"]["workload"]["arrival"] = {{"process", "gamma"}, {"rate_qps", 4}, {"cv", 3}};
  s["serving"]["outputs"] = {{"max_request_records", 2000}};
  s["serving"]["workload"]["prompt_tokens"] = {{"dist", "uniform"}, {"min", 10}, {"max", 20}};
  s["serving"]["workload"]["output_tokens"] = {{"dist", "zipf"}, {"min", 5}, {"max", 50}, {"theta", 1.1}};
  json r = ok_result(s);
  const size_t a = col(r, "arrival_s"), p = col(r, "prompt_tokens"), o = col(r, "output_tokens");
  std::vector<double> gaps;
  const json& rows = r["requests"]["rows"];
  for (size_t i = 1; i < rows.size(); ++i) gaps.push_back(rows[i][a].get<double>() - rows[i - 1][a].get<double>());
  double mean = 0, var = 0;
  for (double g : gaps) mean += g;
  mean /= static_cast<double>(gaps.size());
  for (double g : gaps) var += (g - mean) * (g - mean);
  const double cv = std::sqrt(var / static_cast<double>(gaps.size())) / mean;
  MESSAGE("gamma arrivals: mean gap " << mean << " s, cv " << cv);
  CHECK(mean == doctest::Approx(0.25).epsilon(0.12));
  CHECK(cv > 2.3);
  std::map<int64_t, int> outputs;
  for (const json& row : rows) {
    CHECK(row[p].get<int64_t>() >= 10);
    CHECK(row[p].get<int64_t>() <= 20);
    CHECK(row[o].get<int64_t>() >= 5);
    CHECK(row[o].get<int64_t>() <= 50);
    ++outputs[row[o].get<int64_t>()];
  }
  CHECK(outputs[5] > outputs[6]);
  CHECK(outputs[6] > outputs[20]);

  s["serving"]["workload"] = {{"arrival", {{"process", "fixed"}, {"rate_qps", 5}}},
                              {"duration_s", 20},
                              {"prompt_tokens", {{"dist", "normal"}, {"mean", 100}, {"stddev", 30}, {"min", 50}, {"max", 150}}},
                              {"output_tokens", 10}};
  r = ok_result(s);
  CHECK(r["metrics"]["requests"]["total"] == 100);
  const json& rows2 = r["requests"]["rows"];
  CHECK(rows2[7][a].get<double>() == doctest::Approx(1.4));
  for (const json& row : rows2) {
    CHECK(row[p].get<int64_t>() >= 50);
    CHECK(row[p].get<int64_t>() <= 150);
  }
}

TEST_CASE("serving: trace replay from inline CSV, with prefix groups") {
  json s = scenario("I5.2");
  s["serving"].erase("compare");
  s["serving"]["workload"] = {
      {"arrival",
       {{"process", "trace"},
        {"csv", "arrival_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens\n"
                "0.0,3000,20,1,2048\n0.5,3000,20,1,2048\n1.0,500,5,-1,0\n# a comment\n2.0,3000,20,1,2048\n"}}}};
  json r = ok_result(s);
  CHECK(r["metrics"]["requests"]["completed"] == 4);
  const size_t a = col(r, "arrival_s"), cached = col(r, "cached_tokens");
  CHECK(r["requests"]["rows"][3][a].get<double>() == doctest::Approx(2.0));
  CHECK(r["requests"]["rows"][0][cached] == 0);
  CHECK(r["requests"]["rows"][1][cached] == 2048);
  CHECK(r["requests"]["rows"][2][cached] == 0);
  CHECK(r["requests"]["rows"][3][cached] == 2048);
  // The same trace as an array of lines.
  s["serving"]["workload"]["arrival"]["csv"] = {"0.0,3000,20,1,2048", "0.5,3000,20,1,2048", "1.0,500,5", "2.0,3000,20,1,2048"};
  const json r2 = ok_result(s);
  CHECK(r2["metrics"] == r["metrics"]);
}

TEST_CASE("serving: routers and heterogeneous pools") {
  json s = smaller(scenario("I2.2"), 400);
  s["hardware"] = {{"gpu", "a100-80g-sxm"}, {"gpus_per_node", 2}, {"intra_node", "nvlink3-nvswitch"}};
  s["serving"].erase("parallelism");
  s["serving"]["cluster"] = {{"router", "round_robin"},
                             {"pools", {{{"name", "a100"}, {"replicas", 1}}, {{"name", "h100"}, {"replicas", 1}, {"gpu", "h100-sxm"}}}}};
  json r = ok_result(s);
  check_invariants(r);
  const size_t rep = col(r, "replica");
  int on0 = 0, on1 = 0;
  for (const json& row : r["requests"]["rows"]) (row[rep] == 0 ? on0 : on1)++;
  CHECK(on0 == 200);
  CHECK(on1 == 200);
  CHECK(r["deployment"]["pools"][1]["gpu"] == "h100-sxm");
  CHECK(r["memory_per_gpu"].size() == 2);

  s["serving"]["cluster"]["router"] = "least_outstanding";
  r = ok_result(s);
  on0 = on1 = 0;
  for (const json& row : r["requests"]["rows"]) (row[rep] == 0 ? on0 : on1)++;
  CHECK(on1 > on0);  // the faster H100 frees its requests sooner and gets more
  check_invariants(r);

  s["serving"]["cluster"]["router"] = "least_kv_load";
  r = ok_result(s);
  check_invariants(r);
}

TEST_CASE("serving: two co-located models share the GPU's memory and time") {
  json s = smaller(scenario("I4.1"), 300);
  s["serving"]["colocated_model"] = {{"model", "mistral-7b"}, {"memory_fraction", 0.4}, {"traffic_fraction", 0.3}};
  s["serving"]["kv_cache"] = {{"max_model_len", 4096}};
  const json r = ok_result(s);
  check_invariants(r);
  CHECK(r["memory_per_gpu"][0]["kv_blocks"].size() == 2);
  CHECK(r["memory_per_gpu"][0]["weights_GiB"].get<double>() > 25);
  CHECK(r["deployment"]["colocated_model"].get<std::string>().find("Mistral-7B") == 0);
  const json alone = ok_result(smaller(scenario("I4.1"), 300));
  CHECK(at(r, "/metrics/tpot_ms/mean") > at(alone, "/metrics/tpot_ms/mean"));
}

TEST_CASE("serving: multi-LoRA loads adapters and adds LoRA GEMMs; MoE imbalance slows expert kernels") {
  json s = smaller(scenario("I5.5"), 300);
  s["serving"].erase("max_qps_search");
  json r = ok_result(s);
  CHECK(at(r, "/metrics/lora/adapter_loads") >= 10);
  CHECK(at(r, "/metrics/lora/lora_gemm_time_fraction") > 0.01);
  CHECK(at(r, "/metrics/lora/load_time_per_adapter_ms") > 0.5);
  CHECK(at(r, "/compare/ratio/ttft_mean_ms") > 1.0);  // 4 adapter slots make prompts wait

  json m = smaller(scenario("I4.2"), 300);
  r = ok_result(m);
  CHECK(at(r, "/compare/ratio/tpot_mean_ms") > 1.0);
  CHECK(at(r, "/metrics/moe/expert_time_fraction") > 0.3);
  CHECK(r["metrics"]["gpu"]["busy_time_s_by_family"]["collective"].get<double>() > 0);  // expert-parallel all-to-all
}

TEST_CASE("serving: max-QPS search is bounded and brackets the SLO") {
  json s = scenario("I2.3");
  // The scenario's own search size (600 requests per run): 200-request runs
  // are bursts of a few seconds that measure burst absorption, not saturation.
  s["serving"]["workload"]["num_requests"] = 200;
  s["serving"]["max_qps_search"] = {{"iterations", 3}, {"num_requests", 600}};
  // The central search: the bracket and bisection checked here are its own.
  const json r = ok_central_result(s);
  const json& q = r["max_qps"];
  // Bracket + bisection steps, each rate run at most 3 times, and at most 3
  // replications of the bracket's lower end.
  CHECK(q["runs"].size() <= (8 + 3) * 3 + 3);
  CHECK(q["qps"].get<double>() > 1.0);
  CHECK(q["qps"].get<double>() < 50.0);
  CHECK(q["upper_qps"].get<double>() > q["qps"].get<double>());
  // Bisection on decided verdicts: every run that met the SLO is at or below the answer.
  for (const json& run : q["runs"])
    if (run["meets_slo"].get<bool>()) CHECK(run["qps"].get<double>() <= q["qps"].get<double>());
}

TEST_CASE("serving: work limits stop a run with a report, never a hang") {
  json s = smaller(scenario("I2.3"), 2000);
  s["serving"].erase("max_qps_search");
  s["serving"]["limits"] = {{"max_events", 5000}};
  json r = ok_result(s);
  CHECK(r["limits"]["limit_hit"] == "max_events");
  CHECK(r["metrics"]["requests"]["unfinished"].get<int64_t>() > 0);
  CHECK(r["warnings"].size() >= 1);
  check_invariants(r);

  s["serving"]["limits"] = {{"max_sim_time_s", 5}};
  r = ok_result(s);
  CHECK(r["limits"]["limit_hit"] == "max_sim_time_s");
  CHECK(r["limits"]["simulated_s"].get<double>() <= 5.0);

  s["serving"]["limits"] = {{"max_requests", 100}};
  s["serving"]["workload"].erase("num_requests");
  s["serving"]["workload"]["duration_s"] = 100;
  r = ok_result(s);
  CHECK(r["metrics"]["requests"]["total"] == 100);
  CHECK(r["warnings"][0].get<std::string>().find("max_requests") != std::string::npos);
}

TEST_CASE("serving: outputs - time series, per-request records and the Chrome trace") {
  json s = smaller(scenario("I5.3"), 100);
  s["serving"].erase("compare");
  s["serving"]["outputs"] = {{"trace", true}, {"trace_max_steps", 50}, {"max_request_records", 30}, {"time_series_points", 40}};
  const json r = ok_result(s);
  CHECK(r["requests"]["rows"].size() == 30);
  CHECK(r["requests"]["truncated"] == true);
  CHECK(r["time_series"]["t_s"].size() <= 40);
  CHECK(r["time_series"]["t_s"].size() == r["time_series"]["kv_blocks_used"].size());
  const json& ev = r["trace"]["traceEvents"];
  int steps = 0, transfers = 0;
  std::map<int, double> last_end;
  for (const json& e : ev) {
    if (e["ph"] != "X") continue;
    if (e["cat"] == "step") {
      ++steps;
      // One step at a time per replica (pp = 1), in time order: the clock is monotone.
      const int pid = e["pid"];
      CHECK(e["ts"].get<double>() >= last_end[pid] - 1e-6);
      last_end[pid] = e["ts"].get<double>() + e["dur"].get<double>();
    } else {
      ++transfers;
    }
  }
  CHECK(steps == 50);
  CHECK(transfers == 50);
  bool warned = false;
  for (const json& w : r["warnings"]) warned = warned || w.get<std::string>().find("trace keeps") != std::string::npos;
  CHECK(warned);
}
