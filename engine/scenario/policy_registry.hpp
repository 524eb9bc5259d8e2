#pragma once
// String-keyed registries of the simulator's pluggable policies, each name
// with a one-line description. Validation takes the valid names from here,
// so an unknown name fails with the list of valid ones.
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/json_reader.hpp"

namespace sightline::serve {

struct RegistryEntry {
  const char* name;
  const char* description;
};

const std::vector<RegistryEntry>& arrival_processes();
// What an arrival process takes (serving.workload.arrival): the keys beside
// `process` its reader accepts, and whether the steady-state verdict can judge
// it (arrivals spread over time that do not wait on the service: not an
// offline batch, not a closed loop of clients). The reader, the steady_state
// check and the page's form (through policy_tables_json) all read this table.
struct ArrivalProcessRules {
  const char* name;
  const char* description;  // arrival_processes()' entry
  std::vector<std::string> keys;
  bool steady_state_judged;
};
// nullptr for a name that is not an arrival process.
const ArrivalProcessRules* arrival_process_rules(const std::string& name);
// Every key some arrival process takes: what a reader allows beside an unknown
// process, so that the process's name is the error rather than a key beside it.
const std::vector<std::string>& arrival_keys_of_any_process();
const std::vector<RegistryEntry>& length_distributions();
const std::vector<RegistryEntry>& routers();
const std::vector<RegistryEntry>& pool_roles();
const std::vector<RegistryEntry>& scheduler_policies();
const std::vector<RegistryEntry>& scheduler_priorities();
const std::vector<RegistryEntry>& kv_allocations();
const std::vector<RegistryEntry>& kv_admissions();
const std::vector<RegistryEntry>& preemption_modes();
const std::vector<RegistryEntry>& speculative_methods();
const std::vector<RegistryEntry>& lora_targets();
const std::vector<RegistryEntry>& all_to_all_modes();

std::vector<std::string> registry_names(const std::vector<RegistryEntry>& r);

// The entry of a factory table (entries with a `name`) called `name`; an
// unknown name fails with a located invalid_value error at `path` that lists
// the valid names.
template <class Entry>
const Entry& find_by_name(const std::vector<Entry>& table, const std::string& name, const std::string& path,
                          const char* what) {
  std::string valid;
  for (const Entry& e : table) {
    if (name == e.name) return e;
    valid += (valid.empty() ? "" : ", ") + std::string(e.name);
  }
  fail(error_code::kInvalidValue, path, std::string("unknown ") + what + " '" + name + "'; valid: " + valid);
}

// Every policy family's table as {family: [{name, description}]}, exported by
// api::list_registries so the page and the CLI build their dropdowns from it;
// an arrival process's entry adds its `keys` and `steady_state_judged`.
json policy_tables_json();

}  // namespace sightline::serve
