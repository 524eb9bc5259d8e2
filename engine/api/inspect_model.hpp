#pragma once
// "Say what was understood": a model (pasted Hugging Face config.json, an
// {"hf_config", "hf_quant_config"} object, a preset id or an architecture)
// summarised as the engine reads it. Typed until the one JSON writer.
#include "core/json_reader.hpp"
#include "model/architecture.hpp"

namespace sightline {

// `doc` is a raw config.json (has "model_type" or "architectures"), or
// anything the scenario's "model" member accepts.
ModelArch read_model_for_inspection(const json& doc);

// Family; layers by kind; heads; experts; total / active / embedding
// parameters; KV bytes per token at 4K, 32K and 128K tokens (one GPU, the
// checkpoint's KV dtype or bf16); the checkpoint's weight format and its
// weight bytes; what was ignored.
json inspect_model_json(const ModelArch& m);

}  // namespace sightline
