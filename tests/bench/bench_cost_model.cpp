// Speed of pricing one full-model step (build the operator list for every
// layer, price each operator with the calibrated model, add host overhead):
// the serving simulator does this once per iteration. Bound: 50 us.
#include <chrono>
#include <cstdio>

#include "api/api.hpp"
#include "perf/cost_setup.hpp"
#include "scenario/scenario.hpp"

using namespace sightline;

namespace {

double bench_us(const CostSetup& setup, const Scenario& s, const BatchShape& batch, int iterations) {
  StepOptions options;
  double sink = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    const StepOperators ops = build_forward_step(s.model, s.precision, s.serving->parallelism, batch, options);
    sink += setup.price(ops).time_s;
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (sink <= 0) std::printf("impossible\n");
  return elapsed / iterations * 1e6;
}

}  // namespace

int main() {
  const json doc = json::parse(api::get_preset("scenarios", "I1.5")).at("result");
  Scenario s = read_scenario(doc);  // Llama-3-8B on one H100, target-measured tier
  s.model = read_model(json("llama-3-70b"), "/model");
  s.serving->parallelism.tp = 1;
  const CostSetup setup = make_cost_setup(s.cost_model, s.hardware);
  struct Case {
    const char* name;
    BatchShape batch;
  };
  std::vector<Case> cases;
  BatchShape decode;
  decode.seqs.assign(256, SeqChunk{1, 2048});
  cases.push_back({"decode, 256 sequences", decode});
  BatchShape prefill;
  prefill.seqs.assign(1, SeqChunk{8192, 0});
  cases.push_back({"prefill, 8192 tokens", prefill});
  BatchShape mixed = decode;
  mixed.seqs.resize(128);
  mixed.seqs.push_back(SeqChunk{512, 1024});
  cases.push_back({"mixed, 128 decodes + 512-token chunk", mixed});
  int failures = 0;
  std::printf("Full-model step pricing, Llama-3-70B (80 layers), H100, %s tier\n", setup.model->tier().c_str());
  for (const Case& c : cases) {
    bench_us(setup, s, c.batch, 200);  // warm up
    const double us = bench_us(setup, s, c.batch, 5000);
    std::printf("  %-40s %8.2f us per step  (bound 50 us)\n", c.name, us);
    failures += us > 50 ? 1 : 0;
  }
  return failures == 0 ? 0 : 1;
}
