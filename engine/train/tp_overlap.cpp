#include "train/tp_overlap.hpp"

#include <algorithm>

namespace sightline {

double tp_overlap_sm_share(int sm_count) {
  return sm_count > kTpOverlapCommSms ? static_cast<double>(kTpOverlapCommSms) / sm_count : 0.5;
}

double nccl_overlap_sm_share(int sm_count) {
  return sm_count > kNcclOverlapCommSms ? static_cast<double>(kNcclOverlapCommSms) / sm_count : 0.5;
}

std::string tp_overlap_partner(const std::string& comm) {
  // Names follow the training micro-batch's sequence-parallel collectives:
  // "<block>_all_gather" gathers the input of the next block, "<block>_reduce_scatter"
  // scatters this block's output; "_bwd" are their backward conjugates and
  // "_wgrad" the re-gather of a block input for its weight gradient.
  static const std::map<std::string, std::string> partner = {
      // forward: gather into a GEMM, scatter out of one
      {"attn_all_gather", "mlp_up_proj"},
      {"mlp_all_gather", "attn_pre_proj"},
      {"attn_reduce_scatter", "attn_post_proj"},
      {"mlp_reduce_scatter", "mlp_down_proj"},
      // backward: gather the output gradient into the data-gradient GEMM...
      {"attn_all_gather_bwd", "attn_post_proj_dgrad"},
      {"mlp_all_gather_bwd", "mlp_down_proj_dgrad"},
      // ...gather the block input for the weight gradient behind the data gradient...
      {"attn_all_gather_wgrad", "mlp_up_proj_dgrad"},
      {"mlp_all_gather_wgrad", "attn_pre_proj_dgrad"},
      // ...and reduce-scatter the input gradient behind the weight gradient.
      {"attn_reduce_scatter_bwd", "mlp_up_proj_wgrad"},
      {"mlp_reduce_scatter_bwd", "attn_pre_proj_wgrad"},
  };
  auto it = partner.find(comm);
  return it == partner.end() ? std::string() : it->second;
}

double overlapped_pair_extra_s(double comm_s, double gemm_s, double sm_share) {
  return std::max(comm_s - gemm_s, sm_share * comm_s);
}

double tp_exposed_with_overlap_s(const std::vector<NamedTime>& comms, const std::map<std::string, double>& gemm_s,
                                 double sm_share) {
  double exposed = 0;
  for (const NamedTime& c : comms) {
    const std::string gemm = tp_overlap_partner(c.name);
    auto it = gemm.empty() ? gemm_s.end() : gemm_s.find(gemm);
    exposed += it == gemm_s.end() ? c.time_s : overlapped_pair_extra_s(c.time_s, it->second, sm_share);
  }
  return exposed;
}

}  // namespace sightline
