#pragma once
// Multi-token prediction (MTP, "next-n") modules shipped beside a model
// (DeepSeek-V3/R1, GLM-4.5, Qwen3-Next): each is one decoder layer of the
// model's last kind fed with [norm(embedding of token t+1); norm(hidden of
// token t)] through a 2h -> h projection (eh_proj), sharing the model's
// embedding and LM head. Serving engines run it as a speculative draft
// (vLLM and TensorRT-LLM "MTP"): one module pass per drafted token.
#include <cstdint>

#include "model/architecture.hpp"

namespace sightline {

// The MTP module as a one-layer model: the layer kind of the target's last
// layer, the target's embedding and LM head (computed again, stored once).
// Its step operators come from build_forward_step with StepOptions::mtp_module
// set, which adds eh_proj and the two input norms.
ModelArch mtp_draft_arch(const ModelArch& target);

// Parameters of one MTP module that are not shared with the main model: the
// decoder layer, eh_proj and its norms (param_count's `mtp` / mtp_layers).
int64_t mtp_module_params(const ModelArch& target);

}  // namespace sightline
