#include "comm/comm_fit.hpp"

#include <algorithm>
#include <cmath>

#include "comm/collectives.hpp"
#include "comm/comm_model.hpp"
#include "core/nelder_mead.hpp"

namespace sightline {

std::string sample_algorithm(const CollectiveSample& s, const InterconnectSpec& link) {
  if (s.kind == CollectiveKind::SendRecv || s.kind == CollectiveKind::AllToAll) return "p2p";
  if (s.kind != CollectiveKind::AllReduce) return "ring";
  if (s.algorithm != "auto") return s.algorithm;
  return link.sharp && s.bytes >= 2.0 * 1024 * 1024 ? "nvls" : "ring";
}

namespace {

// One measured call reduced to the pipelined model's terms.
struct Row {
  double steps;
  double factor;
  double bytes;
  int ranks;
  double time_s;
};

Row row_of(const CollectiveSample& s, const std::string& algorithm) {
  const double n = s.gpus;
  if (algorithm == "ring")
    return {s.kind == CollectiveKind::AllReduce ? 2 * (n - 1) : n - 1, bus_bandwidth_factor(s.kind, s.gpus), s.bytes,
            s.gpus, s.time_s};
  const double factor = s.kind == CollectiveKind::AllToAll ? (n - 1) / n : 1.0;
  return {1, factor, s.bytes, 1, s.time_s};
}

double mean_abs_log_error(const std::vector<Row>& rows, const AlgorithmParams& p, double bw) {
  double sum = 0;
  for (const Row& r : rows) sum += std::fabs(std::log(pipelined_time_s(p, r.steps, r.factor, r.bytes, r.ranks, bw) / r.time_s));
  return sum / static_cast<double>(rows.size());
}

// Latency, bandwidth efficiency and chunk size by Nelder–Mead on mean |log
// error| with 4+ samples; otherwise only the efficiency (anchored).
void fit_rows(const std::vector<Row>& rows, AlgorithmParams& p, const std::string& what, double bw) {
  if (rows.empty()) return;
  if (rows.size() >= 4) {
    auto apply = [](AlgorithmParams& q, const std::vector<double>& x) {
      q.latency_us = std::exp(x[0]);
      q.eta_bandwidth = x[1];
      q.chunk_bytes = std::exp(x[2]);
    };
    auto objective = [&](const std::vector<double>& x) {
      if (x[1] < 0.05 || x[1] > 1.5 || x[0] > 9 || x[2] > 30) return 1e9;
      AlgorithmParams q = p;
      apply(q, x);
      return mean_abs_log_error(rows, q, bw);
    };
    MinimizeResult best = nelder_mead(objective, {std::log(std::max(p.latency_us, 0.5)), 0.7, std::log(1 << 20)},
                                      {0.7, 0.1, 1.0}, 3000);
    best = nelder_mead(objective, best.x, {0.3, 0.05, 0.5}, 3000);
    apply(p, best.x);
    p.provenance = "measured (" + std::to_string(rows.size()) + " " + what + " calls)";
  } else {
    auto objective = [&](const std::vector<double>& x) {
      AlgorithmParams q = p;
      q.eta_bandwidth = x[0];
      return x[0] < 0.01 ? 1e9 : mean_abs_log_error(rows, q, bw);
    };
    p.eta_bandwidth = nelder_mead(objective, {p.eta_bandwidth}, {0.1}, 400).x[0];
    p.provenance = "anchored: eta fitted to " + std::to_string(rows.size()) + " " + what +
                   " measurement(s); latency and chunk from " + p.provenance;
  }
  std::vector<double> ape;
  for (const Row& r : rows) {
    const double pred = pipelined_time_s(p, r.steps, r.factor, r.bytes, r.ranks, bw);
    ape.push_back(std::fabs(pred - r.time_s) / r.time_s);
  }
  std::sort(ape.begin(), ape.end());
  p.samples = static_cast<int>(rows.size());
  p.median_ape = ape[ape.size() / 2];
}

}  // namespace

CommCalibration fit_comm_calibration(const InterconnectSpec& link, const std::vector<CollectiveSample>& samples,
                                     const CommCalibration& base, const std::string& source) {
  CommCalibration c = base;
  c.id = link.id;
  c.source = source;
  const double bw = link.bandwidth_per_gpu_GBps * 1e9;
  std::vector<Row> ring, nvls, p2p;
  for (const CollectiveSample& s : samples) {
    const bool single_level = s.nodes == 1 || s.nodes == s.gpus;
    if (s.interconnect != link.id || !single_level) continue;
    const std::string alg = sample_algorithm(s, link);
    (alg == "ring" ? ring : alg == "nvls" ? nvls : p2p).push_back(row_of(s, alg));
  }
  fit_rows(ring, c.ring, "ring", bw);
  if (!nvls.empty()) {
    if (!c.nvls) c.nvls = AlgorithmParams{"default", 0.6, 10, 1 << 20, 0, 0};
    fit_rows(nvls, *c.nvls, "NVLS", bw);
  }
  if (!link.sharp) c.nvls.reset();
  if (p2p.empty() && !ring.empty()) {
    // No point-to-point measurements: a ring step is one point-to-point transfer.
    c.p2p = c.ring;
    c.p2p.provenance = "derived from this link's ring fit";
  } else {
    fit_rows(p2p, c.p2p, "send/recv", bw);
  }
  return c;
}

std::vector<double> comm_errors(const std::vector<CollectiveSample>& samples, const InterconnectSpec& intra,
                                const InterconnectSpec* inter) {
  std::vector<double> out;
  for (const CollectiveSample& s : samples) {
    CommGroup g;
    g.size = s.gpus;
    g.gpus_per_node = s.gpus / s.nodes;
    g.intra = &intra;
    g.inter = inter;
    if (s.nodes == s.gpus && s.nodes > 1) {  // one GPU per node: flat on the network
      g.gpus_per_node = s.gpus;
      g.intra = inter ? inter : &intra;
    }
    const double pred = collective_cost(s.kind, s.bytes, g).time_s;
    out.push_back((pred - s.time_s) / s.time_s);
  }
  return out;
}

}  // namespace sightline
