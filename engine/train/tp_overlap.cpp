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

TpOverlapMethod tp_overlap_method(const std::string& comm) {
  if (tp_overlap_partner(comm).empty()) return TpOverlapMethod::None;
  if (comm == "attn_all_gather" || comm == "mlp_all_gather" || comm == "attn_all_gather_bwd" ||
      comm == "mlp_all_gather_bwd")
    return TpOverlapMethod::RingExchange;
  if (comm == "attn_reduce_scatter" || comm == "mlp_reduce_scatter") return TpOverlapMethod::Pipeline;
  return TpOverlapMethod::Bulk;
}

int tp_overlap_splits(const std::string& comm, int tp) {
  switch (tp_overlap_method(comm)) {
    case TpOverlapMethod::RingExchange: return std::max(1, tp);
    case TpOverlapMethod::Pipeline: return kTpPipelineSplits;
    default: return 1;
  }
}

double ring_exchange_extra_s(double comm_s, double gemm_s, int tp, double chunk_s) {
  if (tp < 2) return 0.0;
  // Chunk 0 runs on the local shard; chunk i needs step i of tp-1 to have
  // arrived; the steps run back to back on the copy engine (use_ce, no SM
  // margin), so the GEMM keeps every SM.
  const double chunk = chunk_s > 0 ? chunk_s : gemm_s / tp, step = comm_s / (tp - 1);
  double end = chunk;
  for (int i = 1; i < tp; ++i) end = std::max(end, i * step) + chunk;
  return end - gemm_s;
}

double pipelined_rs_extra_s(double comm_s, double gemm_s, int sm_count, double chunk_s) {
  // The GEMM on the SMs the margin leaves, in 4 chunks; chunk i's
  // reduce-scatter leaves when it is done, one after another.
  const double share = tp_overlap_sm_share(sm_count);
  const double chunk = (chunk_s > 0 ? chunk_s : gemm_s / kTpPipelineSplits) / (1.0 - share);
  const double piece = comm_s / kTpPipelineSplits;
  double comm_end = 0;
  for (int i = 0; i < kTpPipelineSplits; ++i) comm_end = std::max(comm_end, (i + 1) * chunk) + piece;
  return comm_end - gemm_s;
}

double tp_exposed_with_overlap_s(const std::vector<NamedTime>& comms, const std::map<std::string, double>& gemm_s,
                                 int tp, int sm_count, const std::map<std::string, double>& chunk_s) {
  double exposed = 0;
  for (const NamedTime& c : comms) {
    const std::string gemm = tp_overlap_partner(c.name);
    auto it = gemm.empty() ? gemm_s.end() : gemm_s.find(gemm);
    if (it == gemm_s.end()) {
      exposed += c.time_s;
      continue;
    }
    const auto ch = chunk_s.find(gemm);
    const double chunk = ch == chunk_s.end() ? 0.0 : ch->second;
    switch (tp_overlap_method(c.name)) {
      case TpOverlapMethod::RingExchange: exposed += ring_exchange_extra_s(c.time_s, it->second, tp, chunk); break;
      case TpOverlapMethod::Pipeline: exposed += pipelined_rs_extra_s(c.time_s, it->second, sm_count, chunk); break;
      default: exposed += overlapped_pair_extra_s(c.time_s, it->second, tp_overlap_sm_share(sm_count)); break;
    }
  }
  return exposed;
}

}  // namespace sightline
