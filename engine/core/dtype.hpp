#pragma once
// Numeric formats for weights, activations and the KV cache.
#include <string>
#include <vector>

namespace sightline {

// NVFP4: e2m1 values with one fp8 (e4m3) scale per 16; MXFP4: e2m1 with one
// e8m0 scale per 32 (OCP microscaling). Both are block-scaled 4-bit floats.
enum class Dtype { FP32, BF16, FP16, FP8, INT8, INT4, NVFP4, MXFP4 };

const std::vector<std::string>& dtype_names();
bool is_dtype_name(const std::string& name);  // one of dtype_names()
Dtype parse_dtype(const std::string& name);  // name must be one of dtype_names()
std::string dtype_name(Dtype d);

// Storage bytes per element. For int4/int8 weight-only formats `group_size`
// adds one 16-bit scale and, with `zero_point` (asymmetric quantization), one
// 16-bit zero point per group; symmetric formats store the scale only.
// group_size 0 means per-channel scales, which are negligible. The FP4 formats
// carry their block scales: 0.5 + 1/16 bytes (NVFP4), 0.5 + 1/32 (MXFP4).
double dtype_bytes(Dtype d, int group_size = 0, bool zero_point = true);
bool is_integer_weight_only(Dtype d);
bool is_fp4(Dtype d);

}  // namespace sightline
