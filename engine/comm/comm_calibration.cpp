#include "comm/comm_calibration.hpp"

#include <cmath>
#include <map>
#include <sstream>

#include "core/det_math.hpp"
#include "core/csv.hpp"
#include "core/error.hpp"
#include "presets/preset_store.hpp"

namespace sightline {

double AlgorithmParams::eta_for(int gpus) const {
  if (eta_by_gpus.empty()) return eta_bandwidth;
  if (gpus <= eta_by_gpus.front().first) return eta_by_gpus.front().second;
  if (gpus >= eta_by_gpus.back().first) return eta_by_gpus.back().second;
  for (size_t i = 1; i < eta_by_gpus.size(); ++i) {
    const auto& [n1, e1] = eta_by_gpus[i];
    if (gpus > n1) continue;
    const auto& [n0, e0] = eta_by_gpus[i - 1];
    const double w = det_log(static_cast<double>(gpus) / n0) / det_log(static_cast<double>(n1) / n0);
    return e0 + w * (e1 - e0);
  }
  return eta_by_gpus.back().second;
}

json AlgorithmParams::to_json() const {
  json j = {{"provenance", provenance}, {"eta_bandwidth", eta_bandwidth}, {"latency_us", latency_us},
            {"chunk_bytes", chunk_bytes}, {"samples", samples}, {"median_ape", median_ape},
            {"log_q10", log_q10}, {"log_q90", log_q90}, {"base_latency_us", base_latency_us}};
  json by = json::array();
  for (const auto& [n, e] : eta_by_gpus) by.push_back({{"gpus", n}, {"eta_bandwidth", e}});
  j["eta_by_gpus"] = by;
  if (up_to_bytes > 0) j["up_to_bytes"] = up_to_bytes;  // absent: every size (the files without LL keep their bytes)
  return j;
}

AlgorithmParams AlgorithmParams::from_json(const json& j, const std::string& path) {
  ObjectReader r(j, path, {"provenance", "eta_bandwidth", "latency_us", "chunk_bytes", "samples", "median_ape",
                           "log_q10", "log_q90", "base_latency_us", "eta_by_gpus", "up_to_bytes"});
  AlgorithmParams a;
  a.provenance = r.string("provenance");
  a.eta_bandwidth = r.number("eta_bandwidth", 1e-3, 5);
  a.latency_us = r.number("latency_us", 0, 1e6);
  a.chunk_bytes = r.number("chunk_bytes", 0, 1e12);
  a.samples = static_cast<int>(r.integer("samples", 0, 1 << 30, 0));
  a.median_ape = r.number("median_ape", 0, 1e6, 0);
  a.log_q10 = r.number("log_q10", -20, 0, 0);
  a.log_q90 = r.number("log_q90", 0, 20, 0);
  a.base_latency_us = r.number("base_latency_us", 0, 1e6, 0);
  a.up_to_bytes = r.number("up_to_bytes", 0, 1e15, 0);
  if (const json* by = r.find("eta_by_gpus")) {
    if (!by->is_array()) fail(error_code::kType, r.child_path("eta_by_gpus"), "eta_by_gpus must be an array");
    for (size_t i = 0; i < by->size(); ++i) {
      ObjectReader e((*by)[i], r.child_path("eta_by_gpus") + "/" + std::to_string(i), {"gpus", "eta_bandwidth"});
      const int n = static_cast<int>(e.integer("gpus", 2, 1 << 20));
      if (!a.eta_by_gpus.empty() && n <= a.eta_by_gpus.back().first)
        fail(error_code::kInvalidValue, e.child_path("gpus"), "eta_by_gpus must be ordered by ascending gpus");
      a.eta_by_gpus.emplace_back(n, e.number("eta_bandwidth", 1e-3, 5));
    }
  }
  return a;
}

json CommCalibration::to_json() const {
  json j = {{"id", id}, {"name", "Collective calibration for " + id}, {"source", source},
            {"ring", ring.to_json()}, {"nvls", nvls ? nvls->to_json() : json(nullptr)}, {"p2p", p2p.to_json()}};
  if (ll) j["ll"] = ll->to_json();  // only links whose small calls were measured
  return j;
}

CommCalibration CommCalibration::from_json(const json& j, const std::string& path) {
  ObjectReader r(j, path, {"id", "name", "source", "ring", "nvls", "p2p", "ll"});
  CommCalibration c;
  c.id = r.string("id");
  c.source = r.string("source");
  c.ring = AlgorithmParams::from_json(r.required("ring"), r.child_path("ring"));
  if (const json* n = r.nullable("nvls")) c.nvls = AlgorithmParams::from_json(*n, r.child_path("nvls"));
  c.p2p = AlgorithmParams::from_json(r.required("p2p"), r.child_path("p2p"));
  if (const json* l = r.find("ll")) c.ll = AlgorithmParams::from_json(*l, r.child_path("ll"));
  return c;
}

const CommCalibration* find_comm_calibration(const std::string& interconnect_id) {
  static const std::map<std::string, CommCalibration> index = [] {
    std::map<std::string, CommCalibration> out;
    for (const json* p : list_presets("comm_calibrations")) {
      CommCalibration c = CommCalibration::from_json(*p, "/comm_calibrations/" + p->at("id").get<std::string>());
      out.emplace(c.id, std::move(c));
    }
    return out;
  }();
  auto it = index.find(interconnect_id);
  return it == index.end() ? nullptr : &it->second;
}

const CommBand& comm_transfer_error() {
  static const CommBand band = [] {
    CommBand b;
    const json* p = find_preset("transfer_errors", "collectives");
    if (!p) return b;
    ObjectReader r(*p, "/transfer_errors/collectives",
                   {"id", "name", "source", "log_q10", "log_q90", "median_ape", "samples"});
    b.log_q10 = r.number("log_q10", -20, 0);
    b.log_q90 = r.number("log_q90", 0, 20);
    b.median_ape = r.number("median_ape", 0, 1e6);
    b.samples = static_cast<int>(r.integer("samples", 0, 1 << 30));
    return b;
  }();
  return band;
}

CollectiveKind parse_collective_kind(const std::string& name, const std::string& path) {
  static const std::map<std::string, CollectiveKind> kinds = {
      {"all_reduce", CollectiveKind::AllReduce},         {"all_gather", CollectiveKind::AllGather},
      {"reduce_scatter", CollectiveKind::ReduceScatter}, {"all_to_all", CollectiveKind::AllToAll},
      {"send_recv", CollectiveKind::SendRecv},           {"broadcast", CollectiveKind::Broadcast}};
  auto it = kinds.find(name);
  if (it == kinds.end())
    fail(error_code::kInvalidValue, path,
         "unknown collective '" + name + "'; known: all_reduce, all_gather, reduce_scatter, all_to_all, send_recv, broadcast");
  return it->second;
}

std::vector<CollectiveSample> read_collective_csv(const std::string& csv_text, const std::string& source) {
  const CsvTable table(csv_text, source);
  std::vector<CollectiveSample> out;
  for (const CsvTable::Row& csv_row : table.rows()) {
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < table.header().size() && i < csv_row.cells.size(); ++i)
      row[table.header()[i]] = csv_row.cells[i].text;
    const std::string where = table.row_position(csv_row).describe();
    // An empty or absent cell is 0 (not given); anything else is a whole
    // finite decimal number, bounded so that the casts to int below are defined.
    auto num = [&](const std::string& key) {
      if (table.text(csv_row, key).empty()) return 0.0;
      return table.number(csv_row, key, -1e15, 1e15);
    };
    auto count = [&](const std::string& key) {
      return table.text(csv_row, key).empty() ? 0 : static_cast<int>(table.number(csv_row, key, -1e9, 1e9));
    };
    CollectiveSample s;
    s.interconnect = row["interconnect"];
    s.kind = parse_collective_kind(row["collective"], table.position(csv_row, "collective").describe());
    s.algorithm = row["algorithm"].empty() ? "auto" : row["algorithm"];
    s.gpus = count("gpus");
    s.nodes = std::max(1, count("nodes"));
    s.bytes = num("bytes");
    s.source = row["source"];
    const double n = s.gpus;
    const double factor = s.kind == CollectiveKind::AllReduce ? 2 * (n - 1) / n
                          : s.kind == CollectiveKind::SendRecv || s.kind == CollectiveKind::Broadcast ? 1.0
                                                                                                     : (n - 1) / n;
    if (num("time_us") > 0) s.time_s = num("time_us") * 1e-6;
    else if (num("busbw_GBps") > 0) s.time_s = factor * s.bytes / (num("busbw_GBps") * 1e9);
    else fail(error_code::kMissingKey, table.position(csv_row, "time_us").describe(), where + ": each row needs time_us or busbw_GBps");
    if (s.gpus < 2 || s.bytes <= 0) fail(error_code::kRange, where, where + ": rows need gpus >= 2 and bytes > 0");
    out.push_back(s);
  }
  return out;
}

}  // namespace sightline
