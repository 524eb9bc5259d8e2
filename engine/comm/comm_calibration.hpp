#pragma once
// Calibrated collective models per interconnect (presets/comm_calibrations/).
// Every algorithm moves data in pipelined chunks, so a call costs its latency,
// its volume at the achieved bandwidth, and the pipeline fill (one chunk per
// step) before the bandwidth is reached:
//   t = base + steps · latency + (steps · min(chunk, bytes / n) + factor · bytes) / (link bandwidth · eta(n))
// with NCCL's own latency structure (tuning.cc: a base latency per call plus a
// hardware latency per step) and the bandwidth efficiency fitted per group size
// n where measurements of that size exist (eta_by_gpus; interpolated in log n,
// the nearest measured size outside the measured range).
//   ring (all-reduce, all-gather, reduce-scatter, broadcast): steps = 2(n−1) for
//       all-reduce, n−1 otherwise; factor as nccl-tests (2(n−1)/n, (n−1)/n, 1)
//   nvls (all-reduce reduced inside an NVSwitch with SHARP): steps = 1, factor = 1
//   p2p (send/recv, all-to-all): steps = 1, factor = 1 (all-to-all (n−1)/n)
//   ll (NCCL's low-latency protocol, small ring all-reduces; comm_fit.hpp): the
//       ring's steps, factor and per-call base, its own per-hop latency, no
//       pipeline fill, half the ring's bandwidth; only up to up_to_bytes
#include <optional>
#include <string>
#include <vector>

#include "core/json_reader.hpp"
#include "model/operators.hpp"

namespace sightline {

struct AlgorithmParams {
  std::string provenance;
  double eta_bandwidth = 0.8;
  double latency_us = 5;  // per step
  double chunk_bytes = 1 << 20;  // pipeline chunk: the fill cost per step at full bandwidth
  int samples = 0;
  double median_ape = 0;
  // 10th / 90th percentile of log(measured / predicted) over this algorithm's
  // rows, each predicted by a fit that left that row out: the 80% band of a
  // call priced by this model (0 when never measured).
  double log_q10 = 0, log_q90 = 0;
  double base_latency_us = 0;  // per call, whatever the group size
  // Bandwidth efficiency by group size (GPUs, eta), ascending; empty: eta_bandwidth for every size.
  std::vector<std::pair<int, double>> eta_by_gpus;
  // Largest message this algorithm was measured at, where it prices only that
  // range (the LL protocol); 0: every size.
  double up_to_bytes = 0;
  double eta_for(int gpus) const;
  json to_json() const;
  static AlgorithmParams from_json(const json& j, const std::string& path);
};

struct CommCalibration {
  std::string id;  // interconnect preset id
  std::string source;
  AlgorithmParams ring;
  std::optional<AlgorithmParams> nvls;
  AlgorithmParams p2p;
  // NCCL's LL protocol for small all-reduces, where this link's small calls were measured.
  std::optional<AlgorithmParams> ll;
  json to_json() const;
  static CommCalibration from_json(const json& j, const std::string& path);
};

// The shipped calibration of an interconnect, or nullptr.
const CommCalibration* find_comm_calibration(const std::string& interconnect_id);

// Residual band of a collective model (log(measured / predicted)).
struct CommBand {
  double log_q10 = 0, log_q90 = 0;
  double median_ape = 0;
  int samples = 0;
};

// The measured error of pricing a link from another link's calibration
// (presets/transfer_errors/collectives.json, written by `calibrate-comm
// --transfer-errors-out`); zero band with 0 samples when not generated.
const CommBand& comm_transfer_error();

// Fewer rows than this (left out one at a time) do not measure a band; the
// algorithm is then widened by the transfer error.
inline constexpr int kMinRowsForOwnBand = 5;

// One measured collective call.
struct CollectiveSample {
  std::string interconnect;
  CollectiveKind kind = CollectiveKind::AllReduce;
  std::string algorithm = "auto";  // auto | ring | nvls
  int gpus = 2;
  int nodes = 1;
  double bytes = 0;
  double time_s = 0;
  std::string source;
};

// Rows of a collective-measurement CSV (see presets/calibrations/data/published_collectives.csv).
std::vector<CollectiveSample> read_collective_csv(const std::string& csv_text, const std::string& source = "csv");
CollectiveKind parse_collective_kind(const std::string& name, const std::string& path);

}  // namespace sightline
