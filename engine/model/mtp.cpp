#include "model/mtp.hpp"

#include "model/param_count.hpp"

namespace sightline {

ModelArch mtp_draft_arch(const ModelArch& target) {
  ModelArch d = target;
  d.id = target.id + "-mtp";
  d.name = target.name + " MTP module";
  d.layers = {target.layer_kind(target.num_layers - 1)};
  d.num_layers = 1;
  // The kind is given explicitly: no dense-first or interleave rule applies.
  d.moe.first_dense_layers = 0;
  d.moe.layer_step = 1;
  d.mtp_layers = 0;
  d.import = ImportReport{};
  return d;
}

int64_t mtp_module_params(const ModelArch& target) {
  if (target.mtp_layers <= 0) return 0;
  return count_params(target).mtp / target.mtp_layers;
}

}  // namespace sightline
