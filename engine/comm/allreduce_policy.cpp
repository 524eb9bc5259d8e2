#include "comm/allreduce_policy.hpp"

#include <algorithm>
#include <cmath>

#include "comm/collectives.hpp"
#include "core/error.hpp"

namespace sightline {

namespace {

constexpr double kBytesPerKiB = 1024.0;

AllReduceAlgorithm algorithm_from_name(const std::string& name) {
  if (name == "one_shot") return AllReduceAlgorithm::OneShot;
  if (name == "two_shot") return AllReduceAlgorithm::TwoShot;
  if (name == "multimem") return AllReduceAlgorithm::Multimem;
  return AllReduceAlgorithm::Nccl;
}

AllReduceImplementation read_implementation(const json& item, const std::string& path) {
  require_object(item, path);
  const json* name = item.contains("algorithm") ? &item.at("algorithm") : nullptr;
  const bool nccl = name && name->is_string() && name->get<std::string>() == "nccl";
  // NCCL is priced by the calibrated collective model: it takes no size limit
  // and no latency of its own, so those keys are refused rather than ignored.
  ObjectReader r(item, path,
                 nccl ? std::vector<std::string>{"algorithm"}
                      : std::vector<std::string>{"algorithm", "up_to_KiB", "latency_us"});
  AllReduceImplementation impl;
  impl.algorithm = algorithm_from_name(r.choice("algorithm", {"one_shot", "two_shot", "multimem", "nccl"}));
  if (nccl) return impl;
  impl.up_to_bytes = r.number("up_to_KiB", 1e-3, 1e9) * kBytesPerKiB;
  impl.latency_us = r.number("latency_us", 0, 1e6);
  return impl;
}

}  // namespace

const char* all_reduce_algorithm_name(AllReduceAlgorithm a) {
  switch (a) {
    case AllReduceAlgorithm::OneShot: return "one_shot";
    case AllReduceAlgorithm::TwoShot: return "two_shot";
    case AllReduceAlgorithm::Multimem: return "multimem";
    case AllReduceAlgorithm::Nccl: return "nccl";
  }
  return "nccl";
}

json AllReducePolicy::to_json() const {
  json list = json::array();
  for (const AllReduceImplementation& i : implementations) {
    json j = {{"algorithm", all_reduce_algorithm_name(i.algorithm)}};
    if (i.algorithm != AllReduceAlgorithm::Nccl) {
      j["up_to_KiB"] = i.up_to_bytes / kBytesPerKiB;
      j["latency_us"] = i.latency_us;
    }
    list.push_back(j);
  }
  return {{"source", source}, {"implementations", list}};
}

AllReducePolicy read_all_reduce_policy(const json& value, const std::string& path) {
  ObjectReader r(value, path, {"source", "implementations"});
  AllReducePolicy p;
  p.source = r.string("source");
  const json& list = r.required("implementations");
  const std::string list_path = r.child_path("implementations");
  if (!list.is_array() || list.empty())
    fail(error_code::kType, list_path, "implementations must be a non-empty array ending with {\"algorithm\": \"nccl\"}");
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string item_path = list_path + "/" + std::to_string(i);
    p.implementations.push_back(read_implementation(list[i], item_path));
    const bool is_nccl = p.implementations.back().algorithm == AllReduceAlgorithm::Nccl;
    const bool last = i + 1 == list.size();
    // Every engine falls back to NCCL for what its own kernels do not take
    // (large messages, other topologies): the list must say so, once, last.
    if (is_nccl != last)
      fail(error_code::kConstraint, item_path + "/algorithm",
           last ? "the last implementation must be {\"algorithm\": \"nccl\"}: the engine's fallback for every size"
                : "nccl must be the last implementation (it takes every message the ones before it do not)");
  }
  return p;
}

bool all_reduce_algorithm_runs_on(AllReduceAlgorithm a, const InterconnectSpec& link, int gpus) {
  if (a == AllReduceAlgorithm::Nccl) return true;
  // Peer loads and stores need NVLink to every member: a switch, or a
  // directly wired domain (bridge, mesh) that holds the whole group.
  const bool nvlink = link.kind == "nvswitch" || link.kind == "nvlink_p2p";
  const bool in_domain = link.domain_gpus <= 0 || gpus <= link.domain_gpus;
  if (!nvlink || !in_domain) return false;
  return a != AllReduceAlgorithm::Multimem || (link.kind == "nvswitch" && link.sharp);
}

double custom_all_reduce_time_s(const AllReduceImplementation& impl, double bytes, int gpus,
                                const InterconnectSpec& link) {
  const double n = gpus;
  const std::shared_ptr<const CommCalibration> held = comm_calibration_for(link);
  const CommCalibration& cal = *held;
  double bw = link.bandwidth_per_gpu_GBps * 1e9;
  // A directly wired domain gives a group of n the n-1 links to its peers.
  if (link.full_mesh()) bw *= (n - 1) / std::max(1, link.domain_gpus - 1);
  double factor = 1;
  double eta = cal.ring.eta_for(gpus);
  switch (impl.algorithm) {
    case AllReduceAlgorithm::OneShot: factor = n - 1; break;
    case AllReduceAlgorithm::TwoShot: factor = 2 * (n - 1) / n; break;
    case AllReduceAlgorithm::Multimem:
      factor = 1;
      if (cal.nvls) eta = cal.nvls->eta_for(gpus);
      break;
    case AllReduceAlgorithm::Nccl: return 0;
  }
  return impl.latency_us * 1e-6 + factor * bytes / (bw * eta);
}

}  // namespace sightline
