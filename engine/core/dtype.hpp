#pragma once
// Numeric formats for weights, activations and the KV cache.
#include <string>
#include <vector>

namespace sightline {

enum class Dtype { FP32, BF16, FP16, FP8, INT8, INT4 };

const std::vector<std::string>& dtype_names();
Dtype parse_dtype(const std::string& name);  // name must be one of dtype_names()
std::string dtype_name(Dtype d);

// Storage bytes per element. For int4/int8 weight-only formats `group_size`
// adds one fp16 scale and one fp16 zero-point per group (GPTQ/AWQ layout);
// group_size 0 means per-channel scales, which are negligible.
double dtype_bytes(Dtype d, int group_size = 0);
bool is_integer_weight_only(Dtype d);

}  // namespace sightline
