// The deployment search's one JSON writer: its typed result
// (DeploymentSearchResult, search/deployment_search.hpp) written once, with
// each ranked deployment's outcome and key metrics.
#include "search/deployment_search.hpp"
#include "search/search_key_metrics.hpp"

namespace sightline::search {

namespace {

// A run's outcome, with its latencies at the question's percentiles (`res`'s).
json outcome_json(const CandidateOutcome& o, const DeploymentSearchResult& res) {
  if (!o.ok) return {{"error", o.error}};
  if (o.capacity)
    return {{"meets_slo", o.meets_slo},
            {"verdict", o.verdict},
            {"max_qps", o.max_qps},
            {"max_qps_upper", o.max_qps_upper},
            {"service_rate_qps", o.service_rate_qps},
            {"requests", o.requests},
            {"usd_per_million_tokens", o.usd_per_million_tokens}};
  json j = {{"meets_slo", o.meets_slo},
            {"verdict", o.verdict},
            {"slo_attainment", o.attainment},
            {"slo_attainment_low", o.attainment_low},
            {"slo_attainment_high", o.attainment_high},
            {"requests", o.requests},
            {"ttft_p99_ms", o.ttft_p99_ms},
            {"tpot_p99_ms", o.tpot_p99_ms},
            {"output_tokens_per_s", o.output_tokens_per_s},
            {"usd_per_million_tokens", o.usd_per_million_tokens}};
  // The question's latencies beside the P99 figures when it judges another percentile.
  const LatencyPercentile ttft = res.ttft_percentile, tpot = res.tpot_percentile;
  if (ttft != LatencyPercentile::P99) j[latency_id("ttft", ttft)] = o.ttft_ms(ttft);
  if (tpot != LatencyPercentile::P99) j[latency_id("tpot", tpot)] = o.tpot_ms(tpot);
  return j;
}

// A deployment's key metrics: $/Mtok, then the budget question's rate or the
// latencies at the question's percentiles (each with its 80% interval).
json deployment_key_metrics(const DeploymentSearchResult& res, const RankedCandidate& r) {
  if (res.budget)
    return json::array({deployment_search_key_metric("usd_per_million_tokens", &r), deployment_search_key_metric("max_qps", &r)});
  return json::array({deployment_search_key_metric("usd_per_million_tokens", &r),
                      deployment_search_key_metric(latency_id("ttft", res.ttft_percentile).c_str(), &r),
                      deployment_search_key_metric(latency_id("tpot", res.tpot_percentile).c_str(), &r)});
}

json ranked_json(const DeploymentSearchResult& res, const RankedCandidate& r) {
  json j = {{"deployment", r.label},
            {"candidate", r.index},
            {"gpus", r.c.gpus()},
            {"replicas", r.c.replicas},
            {"tp", r.c.tp},
            {"pp", r.c.pp},
            {"max_num_seqs", r.c.max_num_seqs},
            {"chunked_prefill", r.c.chunked},
            {"usd_per_hour", r.usd_per_hour},
            {"pareto", r.on_front}};
  if (res.show_tokens && r.c.batched_tokens > 0) j[r.c.chunked ? "chunk_size" : "max_num_batched_tokens"] = r.c.batched_tokens;
  if (res.show_weights) j["weights"] = r.c.weights;
  if (res.show_kv) j["kv_cache"] = r.c.kv_cache;
  if (res.show_ratio) {
    j["prefill_decode_ratio"] = ratio_name(r.c.ratio);
    if (r.c.ratio.disaggregated()) {
      j["prefill_replicas"] = r.c.prefill_replicas();
      j["decode_replicas"] = r.c.decode_replicas();
    }
  }
  if (res.show_dp) {
    j["attention_data_parallel"] = r.c.attention_dp;
    j["expert_parallel"] = r.c.attention_dp > 1 ? r.c.attention_dp * r.c.tp : 0;  // 0: the base's serving.moe
  }
  if (res.show_mixed && r.c.ratio.disaggregated()) {
    // The decode pool's own GPU and tp (the prefill pool's when not mixed).
    j["decode_gpu"] = res.gpu_ids[r.c.decode_gpu()];
    j["decode_tp"] = r.c.decode_tp();
  }
  write_ranked_outcomes(j, r, [&](const auto& o) { return outcome_json(o, res); });
  if (r.has_interval) j["key_metrics"] = deployment_key_metrics(res, r);
  return j;
}

}  // namespace

json question_latencies_json(LatencyPercentile ttft, LatencyPercentile tpot) {
  return {{"ttft", {{"id", latency_id("ttft", ttft)}, {"words", latency_words("ttft", ttft)}}},
          {"tpot", {{"id", latency_id("tpot", tpot)}, {"words", latency_words("tpot", tpot)}}}};
}

json DeploymentSearchResult::to_json() const {
  json table = json::array();
  for (const auto& r : ranked) table.push_back(ranked_json(*this, r));
  json front_j = json::array();
  for (size_t k : front) front_j.push_back(ranked_json(*this, ranked[k]));
  json pruned_j = json::array();
  for (size_t i = 0; i < pruned_layouts.size(); ++i)
    pruned_j.push_back({{"layout", pruned_labels[i]}, {"reason", pruned_layouts[i].reason}});
  const json best = cheapest >= 0 ? ranked_json(*this, ranked[static_cast<size_t>(cheapest)]) : json(nullptr);
  json key_metrics = json::array();
  if (cheapest >= 0) {
    const RankedCandidate& b = ranked[static_cast<size_t>(cheapest)];
    key_metrics = deployment_key_metrics(*this, b);
    key_metrics.push_back(deployment_search_key_metric("gpus", &b));
  }
  key_metrics.push_back(deployment_search_key_metric("deployments_simulated", nullptr, space.run));
  // The parts both questions share; json objects keep their keys sorted, so
  // the order they are set in does not change the output.
  json out = {{"kind", "deployment_search"},
              {"max_gpus", max_gpus},
              {"slo", slo},
              {"accuracy", accuracy},
              {"key_metrics", key_metrics},
              {"space", {{"layouts", space.planned}, {"pruned", space.pruned}, {"simulated", space.run}, {"requests_simulated", requests_simulated}}},
              {"cheapest_meeting_slo", best},
              {"pareto_front", front_j},
              {"ranked", table},
              {"pruned", pruned_j}};
  if (budget) {
    out["objective"] = "usd_per_million_tokens_at_max_qps";
    out["target_qps"] = nullptr;
    out["pareto_axes"] = {"usd_per_million_tokens", "max_qps"};
    out["criterion"] =
      "no target rate: each layout fills max_gpus (the most replicas on whole nodes) and its highest rate within "
      "the SLO comes from the steady-state capacity search (serving.max_qps_search: stable, and the batch-means "
      "interval of the post-warm-up SLO attainment at or above the target; undecided counts as a miss, so "
      "max_qps errs low); ranked by $/Mtok at that rate (the deployment's price per hour over the input and "
      "output tokens per hour it carries there), the same order as requests per dollar; the Pareto front of "
      "$/Mtok against max_qps re-runs the search at the kernels' low and high cost bounds for the 80% interval";
    // The same rule in plain words, for people (the page's "How it was decided"): written beside
    // the criterion so that a change of the rule changes both.
    out["criterion_words"] =
        "each layout uses the whole GPU budget, and its highest rate within the SLO was found by simulating rising "
        "rates (a rate whose verdict stays undecided counts as a miss, so the rate errs low); layouts are ranked by "
        "cost per million tokens at that rate.";
  } else {
    out["target_qps"] = target_qps;
    // The percentile the question judges each latency at (question_percentile);
    // the front is $/Mtok against TTFT at its own.
    out["question_percentiles"] = {{"ttft", percentile_name(ttft_percentile)}, {"tpot", percentile_name(tpot_percentile)}};
    out["question_latencies"] = question_latencies_json(ttft_percentile, tpot_percentile);
    out["pareto_axes"] = {"usd_per_million_tokens", latency_id("ttft", ttft_percentile)};
    out["criterion"] =
      "each candidate runs at target_qps with serving.steady_state: the capacity search's run sizing and growth, "
      "and its verdict (stable, and the batch-means interval of the post-warm-up SLO attainment at or above the "
      "target; undecided counts as a miss); ranked at the cost model's central bound; the Pareto front of $/Mtok "
      "against TTFT at question_percentiles.ttft (the SLO's percentile for TTFT, else its attainment share, as the "
      "smallest reported percentile at or above it) among those meeting the SLO; its points re-run at the kernels' "
      "low and high cost bounds give the 80% interval; $/Mtok counts input and output tokens";
    out["criterion_words"] =
        "each deployment was simulated at the target rate, with as many requests as it took to decide whether it "
        "meets the SLO (one left undecided counts as a miss); deployments are ranked by cost per million tokens "
        "(input and output); the Pareto front weighs that cost against TTFT at the question's percentile, and "
        "its deployments were simulated again at the cost model's low and high "
        "bounds for their 80% ranges.";
  }
  return out;
}

}  // namespace sightline::search
