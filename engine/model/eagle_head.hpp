#pragma once
// The EAGLE-3 draft head (Li et al., arXiv 2503.01840; vLLM's and SGLang's
// "eagle3"): one decoder layer of the target's shape that reads the target's
// fused low/mid/high hidden states and drafts one token per pass, with its own
// LM head. Engines run it on the target's GPUs, k passes per verification.
#include "model/architecture.hpp"

namespace sightline {

// The head as a one-layer model of the target's last layer kind, with the
// target's embedding and LM head. Left out (small beside the layer and the
// head): the 3h -> h fusion projection and the wider attention input of the
// first layer. The embedding, which engines share with the target, is counted
// in the head's weights (an upper bound of vocab x hidden).
ModelArch eagle3_head_arch(const ModelArch& target);

}  // namespace sightline
