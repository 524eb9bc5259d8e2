#pragma once
// Cross-field checks shared by the serving and training sections.
#include <string>

#include "model/architecture.hpp"

namespace sightline {

// tp must divide the attention heads, and divide the KV heads or be a multiple
// of them (KV heads are then replicated). Fails at `tp_path`.
void check_tensor_parallel(const ModelArch& m, int tp, const std::string& tp_path);

}  // namespace sightline
