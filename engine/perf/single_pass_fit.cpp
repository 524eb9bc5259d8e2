#include "perf/single_pass_fit.hpp"

#include <algorithm>
#include <map>

namespace sightline {

double single_pass_streaming_s(const SinglePassTiming& t, const KernelCalibration& cal, const GpuSpec& g) {
  const MemoryKernelParams& stream = cal.memory.at(KernelClass::Elementwise);
  const double bytes_s = t.bytes / (g.hbm_bandwidth_GBps * 1e9 * stream.eta_memory);
  return std::max(bytes_s, row_programs_s(t.row_programs, g));
}

void fit_single_pass_fixed_times(KernelCalibration& cal, const GpuSpec& g, const std::vector<SinglePassTiming>& timings,
                                 const std::string& source) {
  // "Far from bandwidth-bound": streaming under half the launch, so the fixed
  // time is most of what was measured and the streaming estimate's own error
  // moves it little.
  const double far_s = 0.5 * cal.memory.at(KernelClass::Elementwise).launch_us * 1e-6;
  std::map<KernelClass, std::vector<double>> fixed_s;
  for (const SinglePassTiming& t : timings) {
    const double streaming_s = single_pass_streaming_s(t, cal, g);
    if (streaming_s < far_s) fixed_s[t.kernel_class].push_back(t.time_s - streaming_s);
  }
  for (auto& [k, v] : fixed_s) {
    auto p = cal.memory.find(k);
    if (p == cal.memory.end() || v.empty()) continue;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    const double median_s = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    if (!(median_s > 0)) continue;
    p->second.single_pass_fixed_us = median_s * 1e6;
    p->second.single_pass_source = "median of measured minus streaming over " + std::to_string(n) +
                                   " single-pass kernels streaming in under half the elementwise launch, " + source;
  }
}

}  // namespace sightline
