#include "comm/comm_fit.hpp"

#include <algorithm>
#include <cmath>
#include <map>

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
  int group;  // GPUs taking part
  double bandwidth_share = 1;  // of the link's per-GPU bandwidth this group's calls can use
};

Row row_of(const CollectiveSample& s, const std::string& algorithm, const InterconnectSpec& link) {
  const double n = s.gpus;
  if (algorithm == "ring" && link.full_mesh()) {
    // A full mesh runs the direct algorithms (collectives.cpp): two latency
    // steps for all-reduce, one otherwise, over n-1 of the domain's links.
    const int domain = std::max(2, link.domain_gpus);
    const double share = static_cast<double>(std::min(s.gpus, domain) - 1) / (domain - 1);
    return {s.kind == CollectiveKind::AllReduce ? 2.0 : 1.0, bus_bandwidth_factor(s.kind, s.gpus), s.bytes,
            s.gpus, s.time_s, s.gpus, share};
  }
  if (algorithm == "ring")
    return {s.kind == CollectiveKind::AllReduce ? 2 * (n - 1) : n - 1, bus_bandwidth_factor(s.kind, s.gpus), s.bytes,
            s.gpus, s.time_s, s.gpus};
  const double factor = s.kind == CollectiveKind::AllToAll ? (n - 1) / n : 1.0;
  return {1, factor, s.bytes, 1, s.time_s, s.gpus};
}

double mean_abs_log_error(const std::vector<Row>& rows, const AlgorithmParams& p, double bw) {
  double sum = 0;
  for (const Row& r : rows)
    sum += std::fabs(std::log(pipelined_time_s(p, r.steps, r.factor, r.bytes, r.ranks, bw * r.bandwidth_share, r.group) /
                              r.time_s));
  return sum / static_cast<double>(rows.size());
}

// Group sizes with at least `min_rows` rows.
std::vector<int> group_sizes(const std::vector<Row>& rows, size_t min_rows) {
  std::map<int, size_t> count;
  for (const Row& r : rows) ++count[r.group];
  std::vector<int> out;
  for (const auto& [n, k] : count)
    if (k >= min_rows) out.push_back(n);
  return out;
}

// Bandwidth efficiency per measured group size, the other parameters held:
// what a group of that size achieves is measured, not assumed equal.
void fit_eta_by_group(const std::vector<Row>& rows, AlgorithmParams& p, double bw) {
  const std::vector<int> sizes = group_sizes(rows, 3);
  p.eta_by_gpus.clear();
  if (sizes.size() < 2) return;
  for (int n : sizes) {
    std::vector<Row> mine;
    for (const Row& r : rows)
      if (r.group == n) mine.push_back(r);
    auto objective = [&](const std::vector<double>& x) {
      AlgorithmParams q = p;
      q.eta_by_gpus.clear();
      q.eta_bandwidth = x[0];
      return x[0] < 0.01 || x[0] > 1.5 ? 1e9 : mean_abs_log_error(mine, q, bw);
    };
    p.eta_by_gpus.emplace_back(n, nelder_mead(objective, {p.eta_bandwidth}, {0.1}, 400).x[0]);
  }
}

constexpr double kLatencyRegimeBytes = 64.0 * 1024;  // below this the bandwidth term is negligible

// Latency, bandwidth efficiency and chunk size by Nelder–Mead on mean |log
// error| with 4+ samples; otherwise only the efficiency (anchored). With calls
// below 64 KiB at several group sizes, the fit is the alpha-beta split:
// the per-call and per-step latencies from those small calls, then the
// efficiency and chunk from the larger ones with the latencies held.
void fit_rows_once(const std::vector<Row>& rows, AlgorithmParams& p, const std::string& what, double bw) {
  if (rows.empty()) return;
  std::vector<Row> small, large;
  for (const Row& r : rows) (r.bytes < kLatencyRegimeBytes ? small : large).push_back(r);
  const bool split = group_sizes(small, 1).size() >= 2 && large.size() >= 4;
  if (split) {
    auto latency_objective = [&](const std::vector<double>& x) {
      if (x[0] > 9 || x[1] > 9) return 1e9;
      AlgorithmParams q = p;
      q.eta_by_gpus.clear();
      q.base_latency_us = std::exp(x[0]);
      q.latency_us = std::exp(x[1]);
      return mean_abs_log_error(small, q, bw);
    };
    MinimizeResult lat = nelder_mead(latency_objective, {std::log(5.0), std::log(1.0)}, {0.7, 0.7}, 2000);
    lat = nelder_mead(latency_objective, lat.x, {0.3, 0.3}, 2000);
    p.base_latency_us = std::exp(lat.x[0]);
    p.latency_us = std::exp(lat.x[1]);
    auto bandwidth_objective = [&](const std::vector<double>& x) {
      if (x[0] < 0.05 || x[0] > 1.5 || x[1] > 30) return 1e9;
      AlgorithmParams q = p;
      q.eta_by_gpus.clear();
      q.eta_bandwidth = x[0];
      q.chunk_bytes = std::exp(x[1]);
      return mean_abs_log_error(large, q, bw);
    };
    MinimizeResult bwf = nelder_mead(bandwidth_objective, {0.7, std::log(1 << 20)}, {0.1, 1.0}, 2000);
    bwf = nelder_mead(bandwidth_objective, bwf.x, {0.05, 0.5}, 2000);
    p.eta_bandwidth = bwf.x[0];
    p.chunk_bytes = std::exp(bwf.x[1]);
    fit_eta_by_group(large, p, bw);
    p.provenance = "measured: latencies from " + std::to_string(small.size()) + " " + what +
                   " calls below 64 KiB, efficiency" + (p.eta_by_gpus.empty() ? "" : " per group size") +
                   " and chunk from " + std::to_string(large.size()) + " larger ones";
  } else if (rows.size() >= 4) {
    p.base_latency_us = 0;  // one group size: the per-step latency holds it all
    p.eta_by_gpus.clear();
    auto apply = [&](AlgorithmParams& q, const std::vector<double>& x) {
      q.latency_us = std::exp(x[0]);
      q.eta_bandwidth = x[1];
      q.chunk_bytes = std::exp(x[2]);
    };
    auto objective = [&](const std::vector<double>& x) {
      if (x[1] < 0.05 || x[1] > 1.5 || x[0] > 9 || x[2] > 30) return 1e9;
      AlgorithmParams q = p;
      q.eta_by_gpus.clear();
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
}

double predicted_s(const Row& r, const AlgorithmParams& p, double bw) {
  return pipelined_time_s(p, r.steps, r.factor, r.bytes, r.ranks, bw * r.bandwidth_share, r.group);
}

// The fit's errors: the median in-sample |error|, and the 80% band of
// log(measured / predicted) with each row predicted by `refit` on the other
// rows (leave-one-out), so the band says how far an unmeasured call can be off.
template <typename Refit>
void set_errors(const std::vector<Row>& rows, AlgorithmParams& p, double bw, const Refit& refit) {
  std::vector<double> ape;
  for (const Row& r : rows) ape.push_back(std::fabs(predicted_s(r, p, bw) - r.time_s) / r.time_s);
  std::sort(ape.begin(), ape.end());
  p.samples = static_cast<int>(rows.size());
  p.median_ape = ape.empty() ? 0.0 : ape[ape.size() / 2];
  std::vector<double> held_out;
  if (rows.size() >= 2)
    for (size_t i = 0; i < rows.size(); ++i) {
      std::vector<Row> kept = rows;
      kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(i));
      held_out.push_back(std::log(rows[i].time_s / predicted_s(rows[i], refit(kept), bw)));
    }
  const CommBand band = residual_band(held_out);
  p.log_q10 = band.log_q10;
  p.log_q90 = band.log_q90;
}

void fit_rows(const std::vector<Row>& rows, AlgorithmParams& p, const std::string& what, double bw) {
  if (rows.empty()) return;
  const AlgorithmParams start = p;
  fit_rows_once(rows, p, what, bw);
  set_errors(rows, p, bw, [&](const std::vector<Row>& kept) {
    AlgorithmParams q = start;
    fit_rows_once(kept, q, what, bw);
    return q;
  });
}

// The efficiency level of `shape` scaled to `rows`: every group size keeps its
// measured ratio to the others.
void fit_scaled_shape(const std::vector<Row>& rows, const AlgorithmParams& shape, const std::string& shape_id,
                      AlgorithmParams& p, double bw) {
  auto fit = [&](const std::vector<Row>& use) {
    auto scaled = [&](double k) {
      AlgorithmParams q = shape;
      q.eta_bandwidth *= k;
      for (auto& e : q.eta_by_gpus) e.second *= k;
      return q;
    };
    auto objective = [&](const std::vector<double>& x) {
      return x[0] < 0.05 || x[0] > 3 ? 1e9 : mean_abs_log_error(use, scaled(x[0]), bw);
    };
    return scaled(nelder_mead(objective, {1.0}, {0.1}, 400).x[0]);
  };
  p = fit(rows);
  p.provenance = "anchored: latencies, chunk and efficiency by group size from " + shape_id +
                 ", efficiency level fitted to " + std::to_string(rows.size()) + " ring calls";
  set_errors(rows, p, bw, fit);
}

// NCCL's LL protocol writes 8 bytes of data and 8 of flag in every 16-byte
// line, so it moves half the payload the ring's Simple protocol moves (NCCL's
// tuning.cc halves a ring's bus bandwidth for LL).
constexpr double kLlPayloadShare = 0.5;

// The LL model with per-hop latency `hop_us` (see comm_calibration.hpp).
AlgorithmParams ll_params(const AlgorithmParams& ring, double hop_us) {
  AlgorithmParams p = ring;
  p.latency_us = hop_us;
  p.chunk_bytes = 0;  // no per-chunk handshake to fill: each line carries its own flag
  p.eta_bandwidth *= kLlPayloadShare;
  for (auto& e : p.eta_by_gpus) e.second *= kLlPayloadShare;
  return p;
}

// The per-hop latency that explains `rows` best: the median over the rows of
// (time − the ring's per-call base − LL's bandwidth term) / steps.
double ll_hop_us(const std::vector<Row>& rows, const AlgorithmParams& ring, double bw) {
  const AlgorithmParams zero_hop = ll_params(ring, 0);
  std::vector<double> hops;
  for (const Row& r : rows)
    hops.push_back((r.time_s - pipelined_time_s(zero_hop, r.steps, r.factor, r.bytes, r.ranks, bw, r.group)) * 1e6 /
                   r.steps);
  std::sort(hops.begin(), hops.end());
  const size_t n = hops.size();
  return n % 2 ? hops[n / 2] : 0.5 * (hops[n / 2 - 1] + hops[n / 2]);
}

// LL fitted to this link's small all-reduces (labelled "ll": the sizes where
// NCCL runs it), priced only up to the largest of them; its band from
// leave-one-out residuals, as the other algorithms'.
AlgorithmParams fit_ll(const std::vector<Row>& rows, const AlgorithmParams& ring, double bw) {
  AlgorithmParams p = ll_params(ring, ll_hop_us(rows, ring, bw));
  for (const Row& r : rows) p.up_to_bytes = std::max(p.up_to_bytes, r.bytes);
  p.samples = static_cast<int>(rows.size());
  p.provenance = "measured: per-hop latency, median of " + std::to_string(rows.size()) +
                 " small all-reduces; per-call base and bandwidth from the ring fit, LL moving half of it";
  set_errors(rows, p, bw, [&](const std::vector<Row>& kept) {
    AlgorithmParams q = ll_params(ring, ll_hop_us(kept, ring, bw));
    q.up_to_bytes = p.up_to_bytes;
    return q;
  });
  return p;
}

}  // namespace

CommBand residual_band(std::vector<double> log_residuals) {
  CommBand b;
  b.samples = static_cast<int>(log_residuals.size());
  if (log_residuals.empty()) return b;
  std::sort(log_residuals.begin(), log_residuals.end());
  // Linear interpolation between order statistics.
  auto quantile = [&](double q) {
    const double pos = q * static_cast<double>(log_residuals.size() - 1);
    const size_t i = static_cast<size_t>(pos);
    if (i + 1 >= log_residuals.size()) return log_residuals.back();
    return log_residuals[i] + (pos - static_cast<double>(i)) * (log_residuals[i + 1] - log_residuals[i]);
  };
  b.log_q10 = std::min(0.0, quantile(0.1));
  b.log_q90 = std::max(0.0, quantile(0.9));
  std::vector<double> ape;
  for (double x : log_residuals) ape.push_back(std::fabs(std::exp(-x) - 1.0));  // |pred − meas| / meas
  std::sort(ape.begin(), ape.end());
  b.median_ape = ape[ape.size() / 2];
  return b;
}

std::vector<double> transfer_log_residuals(const std::vector<CollectiveSample>& samples, const InterconnectSpec& target,
                                           const CommCalibration& from) {
  const CommCalibration moved = transferred_comm_calibration(target, from);
  std::vector<double> out;
  for (const CollectiveSample& s : samples) {
    const bool single_level = s.nodes == 1 || s.nodes == s.gpus;
    if (s.interconnect != target.id || !single_level) continue;
    const double pred = flat_collective_cost(s.kind, s.bytes, s.gpus, target, moved).time_s;
    if (pred > 0) out.push_back(std::log(s.time_s / pred));
  }
  return out;
}

CommCalibration fit_comm_calibration(const InterconnectSpec& link, const std::vector<CollectiveSample>& samples,
                                     const CommCalibration& base, const std::string& source,
                                     const CommCalibration* ring_shape) {
  CommCalibration c = base;
  c.id = link.id;
  c.source = source;
  const double bw = link.bandwidth_per_gpu_GBps * 1e9;
  std::vector<Row> ring, nvls, p2p, ll;
  for (const CollectiveSample& s : samples) {
    const bool single_level = s.nodes == 1 || s.nodes == s.gpus;
    if (s.interconnect != link.id || !single_level) continue;
    const std::string alg = sample_algorithm(s, link);
    if (alg == "ll") ll.push_back(row_of(s, "ring", link));  // the ring's steps, its own protocol
    else (alg == "ring" ? ring : alg == "nvls" ? nvls : p2p).push_back(row_of(s, alg, link));
  }
  if (ring_shape && !ring.empty()) fit_scaled_shape(ring, ring_shape->ring, ring_shape->id, c.ring, bw);
  else fit_rows(ring, c.ring, "ring", bw);
  if (!nvls.empty()) {
    if (!c.nvls) c.nvls = AlgorithmParams{"default", 0.6, 10, 1 << 20, 0, 0};
    fit_rows(nvls, *c.nvls, "NVLS", bw);
  }
  if (!link.sharp) c.nvls.reset();
  if (!ll.empty()) c.ll = fit_ll(ll, c.ring, bw);
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
