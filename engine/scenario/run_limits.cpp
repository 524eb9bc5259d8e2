#include "scenario/run_limits.hpp"

namespace sightline {

int64_t read_max_work_units(const json& section, const std::string& path, int64_t default_units, int64_t ceiling) {
  ObjectReader r(section, path, {"max_work_units"});
  return r.integer("max_work_units", 1, ceiling, default_units);
}

}  // namespace sightline
