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

// Exposed time of a pass's TP collectives: each paired collective hides behind
// its own GEMM (gemm_s by name, for one layer); unpaired ones are fully exposed.
double tp_exposed_with_overlap_s(const std::vector<NamedTime>& comms, const std::map<std::string, double>& gemm_s,
                                 double sm_share);

}  // namespace sightline
