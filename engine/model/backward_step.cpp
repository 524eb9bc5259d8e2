// The backward pass of a training step, derived operator by operator from
// the forward step (model/operators.cpp builds the forward).
#include "model/operators.hpp"

namespace sightline {

StepOperators build_backward_step(const StepOperators& forward, const Precision& p) {
  StepOperators out;
  const double act_b = dtype_bytes(p.activations == Dtype::FP8 ? Dtype::BF16 : p.activations);
  // Backward runs in reverse layer order; the order of the list does not
  // change the step time, so the forward order is kept for readability.
  for (const Operator& f : forward.ops) {
    switch (f.family) {
      case OpFamily::Gemm:
      case OpFamily::MoeRouter: {
        // dX[m,k] = dY[m,n] W^T; dW[k,n] = X^T dY. Gradients stay in the
        // activation dtype (FP8 recipes keep dgrad/wgrad inputs in fp8 too).
        Operator dgrad = f;
        dgrad.name = f.name + "_dgrad";
        dgrad.family = OpFamily::Gemm;
        dgrad.backward = true;
        dgrad.m = f.m;
        dgrad.n = f.k;
        dgrad.k = f.n;
        dgrad.flops = 2.0 * f.m * f.n * f.k;
        dgrad.bytes = (static_cast<double>(f.m) * f.n + static_cast<double>(f.m) * f.k) * act_b +
                      (f.bytes - (static_cast<double>(f.m) * f.k + static_cast<double>(f.m) * f.n) * act_b);
        Operator wgrad = dgrad;
        wgrad.name = f.name + "_wgrad";
        wgrad.m = f.k;
        wgrad.n = f.n;
        wgrad.k = f.m;
        wgrad.bytes = (static_cast<double>(f.m) * f.k + static_cast<double>(f.m) * f.n) * act_b +
                      static_cast<double>(f.k) * f.n * act_b;  // weight gradient written in the activation dtype
        out.ops.push_back(dgrad);
        out.ops.push_back(wgrad);
        break;
      }
      case OpFamily::AttentionPrefill: {
        Operator b = f;
        b.name = f.name + "_bwd";
        b.backward = true;
        // FlashAttention counts backward as 2.5x forward FLOPs (five matmuls
        // vs two); traffic reads Q, K, V, O, dO and writes dQ, dK, dV.
        b.flops = 2.5 * f.flops;
        b.bytes = 2.0 * f.bytes;
        out.ops.push_back(b);
        break;
      }
      case OpFamily::Collective: {
        if (f.collective == CollectiveKind::SendRecv || f.collective == CollectiveKind::AllReduce ||
            f.collective == CollectiveKind::AllToAll) {
          Operator b = f;
          b.name = f.name + "_bwd";
          b.backward = true;
          out.ops.push_back(b);
        }
        break;
      }
      case OpFamily::AttentionDecode:
      case OpFamily::KvCacheWrite:
      case OpFamily::Sampling:
        break;  // not part of a training step
      default: {
        // Elementwise-like kernels read the saved input and the incoming
        // gradient and write the outgoing gradient: about twice the traffic.
        Operator b = f;
        b.name = f.name + "_bwd";
        b.backward = true;
        b.flops = 2.0 * f.flops;
        b.bytes = 2.0 * f.bytes;
        out.ops.push_back(b);
        break;
      }
    }
  }
  return out;
}

}  // namespace sightline
