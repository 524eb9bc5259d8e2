#pragma once
// The kind of deployment a scenario prices, for its accuracy figures: the
// error measured on dense runs says little about a wide expert-parallel or a
// disaggregated one (report-e2e groups its rows by it; the page's accuracy
// badge shows the measured error of the result's own class, or says none was
// measured). One of:
//   dense                 a dense model
//   moe                   a mixture-of-experts model, experts split by tensor parallelism
//   moe_expert_parallel   experts spread whole over expert-parallel GPUs
//   moe_wide_ep           expert parallelism across attention data-parallel ranks
//   disaggregated         serving with separate prefill and decode pools
#include <string>

#include "scenario/scenario.hpp"

namespace sightline {

std::string layout_class(const Scenario& s);

}  // namespace sightline
