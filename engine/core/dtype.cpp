#include "core/dtype.hpp"

#include <stdexcept>

namespace sightline {

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names = {"fp32", "bf16", "fp16", "fp8", "int8", "int4", "nvfp4", "mxfp4"};
  return names;
}

bool is_dtype_name(const std::string& name) {
  for (const std::string& n : dtype_names())
    if (n == name) return true;
  return false;
}

Dtype parse_dtype(const std::string& name) {
  if (name == "fp32") return Dtype::FP32;
  if (name == "bf16") return Dtype::BF16;
  if (name == "fp16") return Dtype::FP16;
  if (name == "fp8") return Dtype::FP8;
  if (name == "int8") return Dtype::INT8;
  if (name == "int4") return Dtype::INT4;
  if (name == "nvfp4") return Dtype::NVFP4;
  if (name == "mxfp4") return Dtype::MXFP4;
  throw std::logic_error("parse_dtype: unchecked name " + name);
}

std::string dtype_name(Dtype d) {
  switch (d) {
    case Dtype::FP32: return "fp32";
    case Dtype::BF16: return "bf16";
    case Dtype::FP16: return "fp16";
    case Dtype::FP8: return "fp8";
    case Dtype::INT8: return "int8";
    case Dtype::INT4: return "int4";
    case Dtype::NVFP4: return "nvfp4";
    case Dtype::MXFP4: return "mxfp4";
  }
  return "?";
}

double dtype_bytes(Dtype d, int group_size, bool zero_point) {
  double base = 0;
  switch (d) {
    case Dtype::FP32: return 4.0;
    case Dtype::BF16:
    case Dtype::FP16: return 2.0;
    case Dtype::FP8: return 1.0;
    case Dtype::INT8: base = 1.0; break;
    case Dtype::INT4: base = 0.5; break;
    case Dtype::NVFP4: return 0.5 + 1.0 / 16.0;  // fp8 scale per 16 values
    case Dtype::MXFP4: return 0.5 + 1.0 / 32.0;  // e8m0 scale per 32 values
  }
  // A 16-bit scale (+ a 16-bit zero point when asymmetric) per group of `group_size` weights.
  return group_size > 0 ? base + (zero_point ? 4.0 : 2.0) / group_size : base;
}

bool is_integer_weight_only(Dtype d) { return d == Dtype::INT8 || d == Dtype::INT4; }

bool is_fp4(Dtype d) { return d == Dtype::NVFP4 || d == Dtype::MXFP4; }

}  // namespace sightline
