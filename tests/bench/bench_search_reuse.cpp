// Which of a deployment search's candidates run the same simulation, and
// whether the reuse rule (serve::runs_alike, search/candidate_reuse.hpp) says
// so: every candidate's central run, one after another on one thread, with
// what its limits decided; then, within each family (scenarios equal but for
// max_num_seqs), every ordered pair: the outcomes the same or not, and the
// rule's verdict. A pair the rule calls alike whose outcomes differ is a
// soundness failure (exit 1). Writes one JSON document: {candidates: [{label,
// max_num_seqs, run_ms, kv_blocks, seqs_below, seqs_at_or_above, kv_demand,
// kv_watermarked, kv_refused}], pairs: [{ran, other, same_outcome, rule}]}.
// Usage: bench_search_reuse QUESTION.json OUT.json   (the canonical question,
// examples/search-llama3-70b.json: about 30 s of CPU)
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/candidate_reuse.hpp"
#include "search/deployment_search.hpp"

namespace {

using nlohmann::json;
using sightline::search::CandidateOutcome;

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

bool same(const CandidateOutcome& a, const CandidateOutcome& b) {
  return a.ok == b.ok && a.error == b.error && a.meets_slo == b.meets_slo && a.verdict == b.verdict &&
         a.attainment == b.attainment && a.attainment_low == b.attainment_low && a.attainment_high == b.attainment_high &&
         a.requests == b.requests && a.ttft_p99_ms == b.ttft_p99_ms && a.tpot_p99_ms == b.tpot_p99_ms &&
         a.output_tokens_per_s == b.output_tokens_per_s && a.usd_per_million_tokens == b.usd_per_million_tokens;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bench_search_reuse QUESTION.json OUT.json\n");
    return 1;
  }
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  namespace search = sightline::search;
  const auto spec = search::read_deployment_search(json::parse(text.str()));
  const auto plan = search::plan_deployment_search(spec);
  std::vector<search::CandidateRun> runs;
  json out = {{"question", argv[1]}, {"candidates", json::array()}, {"pairs", json::array()}};
  for (size_t k = 0; k < plan.scenarios.size(); ++k) {
    const double t0 = thread_cpu_ms();
    runs.push_back(search::run_candidate(plan.scenarios[k], sightline::CostBound::Central));
    const search::CandidateRun& r = runs.back();
    out["candidates"].push_back({{"label", search::candidate_label(spec, plan.candidates[k])},
                                 {"max_num_seqs", r.limits.max_num_seqs},
                                 {"run_ms", thread_cpu_ms() - t0},
                                 {"kv_blocks", r.limits.kv_blocks},
                                 {"seqs_below", r.facts.seqs.below},
                                 {"seqs_at_or_above", r.facts.seqs.at_or_above},
                                 {"kv_demand", r.facts.kv.demand},
                                 {"kv_watermarked", r.facts.kv.watermarked},
                                 {"kv_refused", r.facts.kv.refused}});
  }
  int unsound = 0, alike = 0, same_pairs = 0;
  for (const auto& family : search::seqs_families(plan))
    for (size_t i : family)
      for (size_t j : family) {
        if (i == j) continue;
        const bool s = same(runs[i].outcome, runs[j].outcome);
        const bool rule = runs[i].outcome.ok && sightline::serve::runs_alike(runs[i].facts, runs[i].limits, runs[j].limits);
        out["pairs"].push_back({{"ran", i}, {"other", j}, {"same_outcome", s}, {"rule", rule}});
        same_pairs += s ? 1 : 0;
        alike += rule ? 1 : 0;
        if (rule && !s) {
          ++unsound;
          std::fprintf(stderr, "UNSOUND: %zu -> %zu\n", i, j);
        }
      }
  std::ofstream(argv[2]) << out.dump(1) << "\n";
  std::printf("%zu candidates; ordered sibling pairs with the same outcome: %d, proven alike by the rule: %d, unsound: %d\n",
              plan.scenarios.size(), same_pairs, alike, unsound);
  return unsound > 0 ? 1 : 0;
}
