#pragma once
// One training step taken apart by mechanism (sightline explain-train-step,
// issue 38): the bottleneck pipeline rank's step as the estimator priced it,
// each mechanism's time with the figures behind it and where they come from.
// The mechanisms add up to the step; the network lines say what the
// collectives of the data-parallel and tensor-parallel groups achieve.
#include <string>
#include <vector>

namespace sightline {

struct StepMechanism {
  std::string name;
  double time_ms = 0;  // on the bottleneck rank's step
  std::string detail;  // the figures behind it
  std::string source;  // where they come from
};

struct NetworkLine {
  std::string group;      // "dp gradient bucket", "dp whole gradient", "tp" ...
  std::string collective;
  int gpus = 1, gpus_per_node = 1, nodes = 1;
  double message_MiB = 0, time_ms = 0, busbw_GBps = 0;
  std::string links;      // the links the group crosses
  std::string source;
};

struct TrainStepExplained {
  int rank = 0;
  double step_ms = 0;
  std::vector<StepMechanism> mechanisms;
  std::vector<NetworkLine> network;
};

}  // namespace sightline
