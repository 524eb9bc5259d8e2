#pragma once
// Turns kernel measurements into KernelSamples whose operators come from the
// same builder that prices scenarios, so fitted efficiencies and predictions
// count FLOPs and bytes the same way.
//
// Measurement CSV (what the microbenchmark script writes), one kernel per row:
//   gpu,kind,dtype,m,n,k,batch,seq,heads,kv_heads,head_dim,pass,impl,mode,bytes,time_us,tflops,gbps,model,source
// kind: gemm (m,n,k,dtype) | attention (batch,seq,heads,head_dim, pass fwd|bwd|fwd_bwd,
// impl flash|standard; causal for flash, non-causal for standard) | decode_attention
// (batch, seq = KV length, heads, kv_heads, head_dim) | copy, norm, activation,
// residual_add, rope (bytes) | launch (m = launches per timing of an empty kernel).
// mode (optional): graph (device time from CUDA-graph replay), eager (back-to-back
// launches: launch-bound for tiny kernels) or sync (launch + host sync). The time is
// time_us, or derived from tflops (FlashAttention FLOP convention) or gbps.
#include <string>
#include <vector>

#include "perf/calibrate.hpp"

namespace sightline {

// Rows for `gpu_id` only (all rows when empty). Errors are located at
// source:line:column (`source`: the file the user gave).
std::vector<KernelSample> read_kernel_csv(const std::string& csv_text, const std::string& gpu_id,
                                          const std::string& source = "csv");

// One row of a Vidur profiling mlp.csv (per-operator medians in ms for one
// transformer layer shape at one token count and TP degree).
struct VidurShape {
  int heads = 0, kv_heads = 0;
  int64_t hidden = 0, intermediate = 0, vocab = 0;
  bool gated = true;
  int64_t tokens = 0;
  int tp = 1;
};
// The samples of one row: `medians_ms` maps Vidur column names to times.
std::vector<KernelSample> vidur_row_samples(const VidurShape& shape, const std::vector<std::pair<std::string, double>>& medians_ms,
                                            const std::string& model, const std::string& source);

// The decode-attention operator of `batch` sequences, one new token each, over `kv_len` cached tokens.
Operator decode_attention_op(int64_t batch, int64_t kv_len, int heads, int kv_heads, int64_t head_dim, Dtype dtype);

// Attention operators (forward, or backward, or both) for a batch of equal sequences.
std::vector<Operator> attention_ops(int64_t batch, int64_t seq, int heads, int64_t head_dim, const std::string& pass,
                                    AttentionImpl impl, Dtype dtype);

}  // namespace sightline
