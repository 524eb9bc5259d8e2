// Cost per event stays flat: what the serving simulator reads per event does
// not grow with the length of a queue or the number of replicas. These are
// complexity properties (counts of reads), not timings, so a busy machine
// cannot fail them; a scan of every queued prompt or every replica would.
#include <doctest/doctest.h>

#include <string>

#include "scenario/scenario.hpp"
#include "serve/simulation.hpp"
#include "serve/waiting_queue.hpp"
#include "test_helpers.hpp"

using namespace sightline;
using sightline::test::json;

namespace {

json small_serving(int64_t requests, double rate_qps) {
  return json::parse(R"({"schema_version":1,"seed":3,"model":"llama-2-7b",
    "hardware":{"gpu":"a100-80g-sxm","gpus_per_node":1},
    "precision":{"weights":"bf16","activations":"bf16","kv_cache":"bf16"},
    "serving":{"mode":"simulate","workload":{"arrival":{"process":"poisson","rate_qps":1},"num_requests":1,
      "prompt_tokens":{"dist":"fixed","value":64},"output_tokens":{"dist":"fixed","value":4}},
      "key_metrics":["output_tokens_per_s"]}})")
      .patch(json::array({{{"op", "replace"}, {"path", "/serving/workload/num_requests"}, {"value", requests}},
                          {{"op", "replace"}, {"path", "/serving/workload/arrival/rate_qps"}, {"value", rate_qps}}}));
}

struct Counts {
  int64_t events = 0, queue_reads = 0, router_reads = 0, completed = 0;
};

Counts simulate(const json& scenario) {
  const Scenario s = read_scenario(scenario);
  serve::Simulation sim(s, serve::WorkloadOverride{}, false);
  while (!sim.run(int64_t{1} << 30)) {
  }
  Counts c;
  c.events = sim.events_processed();
  c.queue_reads = sim.scheduler_queue_reads();
  c.router_reads = sim.router_load_reads();
  const json m = sim.metrics();
  c.completed = m.at("requests").at("completed").get<int64_t>();
  return c;
}

}  // namespace

TEST_CASE("waiting queue: order kept with pushes at both ends, removal anywhere, per-class queues in the same order") {
  serve::WaitingQueue q;
  q.index_by_class(true);
  const int64_t k1 = q.push_back(1, 7);
  q.push_back(2, 8);
  const int64_t k3 = q.push_back(3, 7);
  q.push_front(4, 8);  // a recompute preemption goes first
  std::vector<int32_t> order;
  for (const auto& [key, id] : q.entries()) order.push_back(id);
  CHECK(order == std::vector<int32_t>{4, 1, 2, 3});
  REQUIRE(q.class_entries(7) != nullptr);
  CHECK(q.class_entries(7)->size() == 2);
  q.erase(k3);  // from the middle of class 7's queue and the back of the whole
  q.erase(k1);
  CHECK(q.class_entries(7) == nullptr);  // an emptied class holds nothing
  CHECK(q.size() == 2);
  CHECK(q.front() == 4);
  q.pop_front();
  CHECK(q.front() == 2);
  CHECK(q.class_entries(8)->size() == 1);
}

TEST_CASE("serving: under multi-LoRA a step reads O(max_num_seqs) queued prompts, however long the queue") {
  // 20,000 prompts arrive at once for 200 adapters, at most 2 adapters per
  // batch and 8 sequences: almost every step passes over most of the queue
  // (vLLM's rule). Scanning it made each step cost the queue's length (a
  // 200,000-prompt run took 540 s); the per-adapter queues read at most
  // about 2 x (max_num_seqs + 1) entries per step.
  json s = small_serving(20000, 1e6);
  s["serving"]["scheduler"] = {{"max_num_seqs", 8}};
  s["serving"]["lora"] = {{"adapters", 200}, {"rank", 8}, {"max_adapters_per_batch", 2}};
  for (const char* policy : {"continuous", "chunked_prefill"}) {
    for (const char* priority : {"prefill_first", "decode_first", "prefill_alone", "fcfs"}) {
      s["serving"]["scheduler"]["policy"] = policy;
      s["serving"]["scheduler"]["priority"] = priority;
      const Counts c = simulate(s);
      const std::string what = std::string(policy) + " / " + priority;
      INFO(what);
      CHECK(c.completed == 20000);
      // Each event forms at most one step per pipeline slot, and a step builds
      // its candidates at most twice (decode_first: again after its decodes).
      CHECK(c.queue_reads <= 2 * (8 + 2) * c.events);
      CHECK(c.queue_reads < 20000 * 10);  // a scan per step would be about 20,000 x 2,500 steps
    }
  }
}

TEST_CASE("serving: routers read O(1) replica loads per event with 8,192 replicas") {
  // Two pools of 4,096 replicas; 20,000 requests. A scan of every candidate per
  // arrival reads 8,192 loads per request (1.6e8 here); the ordered index
  // re-reads only the replicas an event touched.
  json s = small_serving(20000, 2000);
  s["hardware"] = {{"gpu", "a100-80g-sxm"}, {"gpus_per_node", 8}, {"nodes", 1024}, {"intra_node", "nvlink3-nvswitch"},
                   {"inter_node", "ib-hdr"}};
  for (const char* router : {"least_kv_load", "least_outstanding", "round_robin"}) {
    s["serving"]["cluster"] = {{"router", router},
                               {"pools", {{{"name", "a"}, {"replicas", 4096}}, {{"name", "b"}, {"replicas", 4096}}}}};
    const Counts c = simulate(s);
    INFO(router);
    CHECK(c.completed == 20000);
    // The first pick reads every replica once to build the index.
    CHECK(c.router_reads <= 8192 + 3 * c.events);
  }
}
