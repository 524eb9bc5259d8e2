#pragma once
// The training configuration's cross-field checks (read_train_config's, in
// read_training.cpp): the parallelism against the model and the hardware,
// then the batch against both. Internal to the scenario module.
#include <string>

#include "hw/hardware.hpp"
#include "model/architecture.hpp"
#include "scenario/training_spec.hpp"

namespace sightline {

// tp inside a node, the world size equal to the GPUs, pp x virtual stages
// (or stage_layers) against the layers, the schedule, sequence parallelism and
// ep against the experts and dp; returns the model chunks (pp x virtual stages).
int check_train_parallelism(const TrainConfig& c, const ModelArch& m, const HardwareSpec& hw, const std::string& par_path,
                            const std::string& schedule_path);

// The batch's checks against the model and the parallelism, and its derived
// size: global_batch_size or gradient_accumulation, from the other
// (`has_gbs` / `has_ga`: which of the two the scenario gave).
void check_train_batch(TrainConfig& c, const ModelArch& m, const std::string& par_path, const std::string& batch_path,
                       bool has_gbs, bool has_ga, int chunks);

}  // namespace sightline
