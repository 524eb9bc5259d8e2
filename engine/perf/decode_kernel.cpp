#include "perf/decode_kernel.hpp"

#include <algorithm>

#include "core/det_math.hpp"
#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "presets/preset_store.hpp"

namespace sightline {

namespace {

// Strictly increasing positive numbers (sequences or tokens).
std::vector<double> read_axis(const json& value, const std::string& path, const char* what) {
  if (!value.is_array() || value.empty())
    fail(error_code::kType, path, std::string("expected a non-empty array of ") + what);
  std::vector<double> out;
  double last = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    const double v = read_number(value[i], pointer_append(path, i), 1, 1e9);
    if (v <= last) fail(error_code::kConstraint, pointer_append(path, i), std::string(what) + " must be strictly increasing");
    last = v;
    out.push_back(v);
  }
  return out;
}

// Index of the cell below `x` on `axis` and the weight of the one above, held at the edges.
std::pair<size_t, double> locate(const std::vector<double>& axis, double x) {
  if (axis.size() == 1 || x <= axis.front()) return {0, 0.0};
  if (x >= axis.back()) return {axis.size() - 2, 1.0};
  const size_t hi = static_cast<size_t>(std::upper_bound(axis.begin(), axis.end(), x) - axis.begin());
  return {hi - 1, (x - axis[hi - 1]) / (axis[hi] - axis[hi - 1])};
}

}  // namespace

bool DecodeKernel::runs_on(const std::string& architecture) const {
  return std::find(architectures.begin(), architectures.end(), architecture) != architectures.end();
}

double DecodeKernel::time_ratio_at(double sequences, double tokens_per_sequence) const {
  const auto [b, wb] = locate(log2_batch, det_log2(std::max(sequences, 1.0)));
  const auto [c, wc] = locate(log2_context, det_log2(std::max(tokens_per_sequence, 1.0)));
  const auto at = [&](size_t i, size_t j) {
    return time_ratio[std::min(i, time_ratio.size() - 1)][std::min(j, time_ratio[0].size() - 1)];
  };
  const double low = at(b, c) * (1 - wc) + at(b, c + 1) * wc;
  const double high = at(b + 1, c) * (1 - wc) + at(b + 1, c + 1) * wc;
  return low * (1 - wb) + high * wb;
}

json DecodeKernel::to_json() const {
  return {{"id", id},       {"name", name},   {"source", source}, {"architectures", architectures},
          {"batch", batch}, {"context_tokens", context_tokens}, {"time_ratio", time_ratio}};
}

DecodeKernel read_decode_kernel(const json& value, const std::string& path) {
  const json& v = value.is_string() ? require_preset("decode_kernels", value.get<std::string>(), path) : value;
  ObjectReader r(v, path, {"id", "name", "source", "architectures", "batch", "context_tokens", "time_ratio"});
  DecodeKernel k;
  k.id = r.string("id", "custom-decode-kernel");
  k.name = r.string("name", k.id);
  k.source = r.string("source", "user-supplied");
  k.architectures = read_architecture_names(r.required("architectures"), r.child_path("architectures"));
  k.batch = read_axis(r.required("batch"), r.child_path("batch"), "batch sizes");
  k.context_tokens = read_axis(r.required("context_tokens"), r.child_path("context_tokens"), "context lengths");
  for (double b : k.batch) k.log2_batch.push_back(det_log2(b));
  for (double c : k.context_tokens) k.log2_context.push_back(det_log2(c));
  const json& grid = r.required("time_ratio");
  const std::string grid_path = r.child_path("time_ratio");
  if (!grid.is_array() || grid.size() != k.log2_batch.size())
    fail(error_code::kConstraint, grid_path, "time_ratio needs one row per batch size");
  for (size_t i = 0; i < grid.size(); ++i) {
    const std::string row_path = pointer_append(grid_path, i);
    if (!grid[i].is_array() || grid[i].size() != k.log2_context.size())
      fail(error_code::kConstraint, row_path, "each time_ratio row needs one value per context length");
    std::vector<double> row;
    for (size_t j = 0; j < grid[i].size(); ++j) row.push_back(read_number(grid[i][j], pointer_append(row_path, j), 0.1, 10));
    k.time_ratio.push_back(std::move(row));
  }
  return k;
}

}  // namespace sightline
