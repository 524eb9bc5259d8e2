#include "model/eagle_head.hpp"

#include "model/mtp.hpp"

namespace sightline {

ModelArch eagle3_head_arch(const ModelArch& target) {
  // Same shape as one MTP module without its eh_proj (priced as a plain draft).
  ModelArch d = mtp_draft_arch(target);
  d.id = target.id + "-eagle3";
  d.name = target.name + " EAGLE-3 head";
  return d;
}

}  // namespace sightline
