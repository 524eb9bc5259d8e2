#pragma once
// A serving run's metrics, typed: filled once by the simulation
// (SimReport::serving_metrics) and written once by to_json (the result's
// "metrics" block). The serving job's comparisons and the deployment search
// read these fields, never the JSON the writer made.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "scenario/spec_acceptance.hpp"
#include "serve/stats.hpp"

namespace sightline::serve {

struct ServingMetrics {
  struct Requests {
    int64_t total = 0, completed = 0, dropped = 0, unfinished = 0;
  } requests;
  double duration_s = 0;
  Summary ttft_ms, tpot_ms, itl_ms, e2e_s, queueing_ms;
  // 1000 / mean TPOT; none when TPOT has no mean or it is 0.
  std::optional<double> decode_tokens_per_s_per_request;
  struct Throughput {
    double requests_per_s = 0, input_tokens_per_s = 0, output_tokens_per_s = 0, total_tokens_per_s = 0,
           output_tokens_per_s_per_gpu = 0;
    int gpus = 0;
  } throughput;
  struct Goodput {
    double requests_per_s = 0, slo_attainment = 0;
    json conditions;  // SloShareCounter::to_json, the conditions' one writer
    bool meets_slo = false;
  };
  std::optional<Goodput> goodput;  // none without an SLO
  struct Concurrency {
    double running_mean = 0;
    int64_t running_max = 0;
    double waiting_mean = 0;
    int64_t waiting_max = 0;
    double batch_size_mean = 0, tokens_per_step_mean = 0;
    int64_t steps = 0;
  } concurrency;
  struct KvCache {
    std::string allocation;
    int64_t blocks_total = 0, peak_blocks_used = 0;
    double peak_block_utilization = 0, mean_block_utilization = 0, token_utilization = 0, fragmentation = 0;
    int64_t preemptions = 0, recomputes = 0, swaps_out = 0;
  } kv_cache;
  struct PrefixCache {
    int64_t admissions = 0, admissions_with_hits = 0, cached_tokens = 0;
    double cached_token_fraction = 0;
    int64_t evicted_blocks = 0;
  };
  std::optional<PrefixCache> prefix_cache;
  // Multi-turn sessions (serving.workload.sessions): per session and per turn.
  struct Sessions {
    int64_t total = 0, completed = 0, dropped = 0, cut_at_max_model_len = 0;
    int64_t turns = 0, turns_completed = 0;
    Summary turns_per_session;
    Summary ttft_first_turn_ms, ttft_returning_turn_ms;  // a session's first turn; its later turns
    Summary session_duration_s;  // first turn's arrival to last turn's last token, completed sessions
    double returning_cached_token_fraction = 0;  // of the returning turns' prompt tokens, served from a cache
  };
  std::optional<Sessions> sessions;
  // Offload tiers below HBM (serving.kv_cache.offload): where prompt tokens were found.
  struct OffloadTier {
    std::string name;
    int64_t hit_tokens = 0;
    double hit_token_fraction = 0;  // of the completed requests' prompt tokens (as prefix_cache's)
    int64_t stored_blocks = 0, dropped_blocks = 0;
    double reloaded_GiB_per_gpu = 0;  // the bytes one GPU loaded (each holds its shard of a block)
  };
  struct KvOffload {
    int64_t hbm_hit_tokens = 0;
    double hbm_hit_token_fraction = 0;
    std::vector<OffloadTier> tiers;
    std::string reload_overlap;
    double reload_time_s = 0;          // the reloads' own time, summed over steps
    double exposed_reload_time_s = 0;  // what they added to the steps
  };
  std::optional<KvOffload> kv_offload;
  struct Speculative {
    std::string method;
    int k = 0;
    double acceptance_rate = 0;
    bool acceptance_rate_assumed = false;
    int64_t verify_steps = 0;
    double tokens_per_verify_step = 0, expected_tokens_per_verify_step = 0;
    int64_t rejected_tokens = 0;
    double draft_time_fraction = 0;
    // Present when the rate came from presets/spec_acceptance: which rows, their spread.
    std::optional<AcceptanceEstimate> published;
  };
  std::optional<Speculative> speculative;
  struct Lora {
    int adapters = 0;
    int64_t adapter_loads = 0;
    double load_time_s = 0, load_time_per_adapter_ms = 0, load_time_fraction = 0, lora_gemm_time_fraction = 0;
  };
  std::optional<Lora> lora;
  struct KvTransfer {
    std::string link;
    int64_t transfers = 0;
    Summary transfer_ms;
    double MiB_per_transfer = 0;
  };
  std::optional<KvTransfer> kv_transfer;
  struct Moe {
    double load_imbalance = 0;
    int expert_parallel = 0;
    double expert_time_fraction = 0;
    int attention_data_parallel = 0;  // written when > 1
    int redundant_experts = 0;        // written when > 0
    std::string load_imbalance_basis;  // given, the published default, or none
    // Two-batch overlap (written when on): of its steps' EP all-to-all time, the share no
    // stage of the other micro-batch hid.
    bool two_batch_overlap = false;
    double all_to_all_exposed_fraction = 0;
  };
  std::optional<Moe> moe;
  struct Utilization {
    double over_wall_time = 0, over_busy_time = 0;
    Summary per_step;
  };
  struct Gpu {
    double busy_fraction = 0;
    Utilization mfu, mbu;
    double step_time_s = 0;
    std::map<std::string, double> busy_time_s_by_family;
  } gpu;
  struct Energy {
    double total_J = 0, busy_J = 0, idle_J = 0, per_output_token_J = 0, mean_power_per_gpu_W = 0;
  } energy;
  struct Cost {
    double usd_per_gpu_hour = 0, usd_total = 0, usd_per_million_output_tokens = 0, usd_per_million_tokens = 0;
  };
  std::optional<Cost> cost;  // none without a GPU price

  json to_json() const;

 private:
  // to_json()'s optional blocks.
  void write_sessions_and_offload(json& m) const;
  void write_features(json& m) const;
};

}  // namespace sightline::serve
