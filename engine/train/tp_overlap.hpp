#pragma once
// Tensor-parallel communication overlap as Megatron-LM / Transformer Engine
// implement it (`--tp-comm-overlap`, userbuffers; it requires sequence
// parallelism). Only an all-gather or reduce-scatter next to a GEMM can hide,
// and only behind that one GEMM: the all-gather feeding a GEMM, the
// reduce-scatter of its output, and in backward the gather for a weight
// gradient behind the data gradient. While they overlap, the communication
// kernels occupy some of the SMs, so the GEMM runs slower.
#include <map>
#include <string>
#include <vector>

namespace sightline {

struct NamedTime {
  std::string name;
  double time_s = 0;
};

// SMs that Transformer Engine's userbuffers give to communication kernels:
// num_sm = 16 (the default of `add_ub` in transformer_engine/pytorch/module/base.py,
// initialize_ub, for its pipelined and bulk overlaps).
inline constexpr int kTpOverlapCommSms = 16;

// Share of a GPU's SMs taken by overlapped communication.
double tp_overlap_sm_share(int sm_count);

// SMs that NCCL's collectives hold while they run beside compute (FSDP's
// parameter all-gathers and gradient reduce-scatters): NCCL runs one thread
// block per channel, and its blocks never share an SM with compute kernels;
// on a node with 8 NICs it uses 16 channels, hence 16 SMs (NCCL maintainer,
// NVIDIA/nccl issue #689). No constant here is fitted to a training row.
inline constexpr int kNcclOverlapCommSms = 16;

// Share of a GPU's SMs taken by overlapped NCCL collectives.
double nccl_overlap_sm_share(int sm_count);

// The GEMM (by operator name) that the TP collective `comm` overlaps with, or "" for none.
std::string tp_overlap_partner(const std::string& comm);

// Time one overlapped pair adds on top of the GEMM alone. The GEMM does g of
// work; while the collective's c runs it progresses at (1 − share), so the pair
// takes max(c, g + share·c).
double overlapped_pair_extra_s(double comm_s, double gemm_s, double sm_share);

// How Transformer Engine overlaps a TP collective with its GEMM
// (transformer_engine/pytorch/module/base.py, initialize_ub, its default
// configuration per layer, NVIDIA/TransformerEngine commit fecb10bd):
//   ring_exchange (qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad: the all-gather
//     into a GEMM): num_splits = tp, peer copies on the copy engine (use_ce)
//     and no SM margin. The GEMM runs in tp chunks, each on the shard that
//     has arrived; the first on the local shard.
//   pipeline (proj_fprop, fc2_fprop: the reduce-scatter out of a GEMM):
//     num_splits = 4, num_sm = 16 with set_sm_margin, so the GEMM runs on the
//     SMs left for its whole duration; each chunk's reduce-scatter leaves when
//     the chunk is done, so the last one is never hidden.
//   bulk (qkv/fc1 dgrad and wgrad): one collective beside the whole GEMM on
//     16 SMs (overlapped_pair_extra_s).
// The chunked GEMMs are priced at the whole GEMM's efficiency (their smaller
// shapes are not priced again).
enum class TpOverlapMethod { None, RingExchange, Pipeline, Bulk };
TpOverlapMethod tp_overlap_method(const std::string& comm);
inline constexpr int kTpPipelineSplits = 4;

// Time a ring-exchange pair adds to its GEMM (all-gather of comm_s in tp-1
// steps); chunk_s is one of its tp chunks priced at its own shape (<= 0:
// gemm_s / tp).
double ring_exchange_extra_s(double comm_s, double gemm_s, int tp, double chunk_s = 0);
// Time a pipelined pair adds to its GEMM (reduce-scatter of comm_s in 4
// chunks); chunk_s is one chunk at its own shape on every SM (<= 0: gemm_s / 4).
double pipelined_rs_extra_s(double comm_s, double gemm_s, int sm_count, double chunk_s = 0);

// The number of chunks Transformer Engine splits the GEMM of `comm`'s overlap into (1: not split).
int tp_overlap_splits(const std::string& comm, int tp);

// Exposed time of a pass's TP collectives: each paired collective hides behind
// its own GEMM (gemm_s by name, for one layer) as its method overlaps it, the
// split GEMMs priced by chunk_s (one chunk by GEMM name, for one layer; a GEMM
// missing there is split evenly); unpaired collectives are fully exposed.
double tp_exposed_with_overlap_s(const std::vector<NamedTime>& comms, const std::map<std::string, double>& gemm_s,
                                 int tp, int sm_count, const std::map<std::string, double>& chunk_s = {});

}  // namespace sightline
