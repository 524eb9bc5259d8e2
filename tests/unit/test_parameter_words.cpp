// The words of the scenario parameters (scenario/parameter_words.cpp) belong to
// parameters the readers check: every entry names a pointer of the recorded
// schema (no words for a parameter that does not exist, or no longer does),
// each pointer once, and the exported schema carries them on that pointer's
// entry. That every field of the page's form with a schema pointer has words
// is checked against the page's FIELDS by tests/web/form_layout.test.mjs.
// The schema records, besides the presets' typed reads, the sections, preset
// references and lists of names where the readers look them up, and the
// branches no preset takes through the probes of scenario/parameter_catalogue.cpp.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "core/parameter_schema.hpp"
#include "presets/preset_store.hpp"
#include "scenario/parameter_catalogue.hpp"
#include "scenario/parameter_words.hpp"
#include "scenario/scenario.hpp"
#include "test_helpers.hpp"

using namespace sightline::test;

namespace {
json exported_parameters() { return envelope(sightline::api::list_registries()).at("result").at("parameters"); }
}  // namespace

TEST_CASE("every parameter's words name a pointer the schema records, once") {
  const json params = exported_parameters();
  std::set<std::string> recorded;
  for (const json& e : params) recorded.insert(e.at("pointer").get<std::string>());
  std::set<std::string> worded;
  REQUIRE(sightline::parameter_words().size() > 50);
  for (const sightline::ParameterWords& w : sightline::parameter_words()) {
    CAPTURE(w.pointer);
    CHECK(recorded.count(w.pointer) == 1);  // an orphan: words for a pointer no reader checks
    CHECK(worded.insert(w.pointer).second);  // each pointer once
    CHECK_FALSE(w.label.empty());
    CHECK_FALSE(w.help.empty());
  }
}

TEST_CASE("the exported schema carries each parameter's words on its entry") {
  int worded = 0;
  for (const json& e : exported_parameters()) {
    const sightline::ParameterWords* w = sightline::parameter_words_at(e.at("pointer").get<std::string>());
    CAPTURE(e.dump());
    if (!w) {
      CHECK_FALSE(e.contains("label"));
      CHECK_FALSE(e.contains("help"));
      continue;
    }
    CHECK(e.at("label") == w->label);
    CHECK(e.at("help") == w->help);
    CHECK(e.value("unit", std::string()) == w->unit);
    ++worded;
  }
  CHECK(worded == static_cast<int>(sightline::parameter_words().size()));
}

TEST_CASE("each schema probe is a scenario the readers accept and records a parameter no preset does") {
  std::set<std::string> from_presets;
  {
    sightline::ParameterSchemaRecorder recorder;
    for (const json* p : sightline::list_presets("scenarios")) sightline::read_scenario(*p);
    for (const json& e : recorder.to_json()) from_presets.insert(e.at("pointer").get<std::string>());
  }
  const std::vector<json> probes = sightline::schema_probe_documents();
  REQUIRE(probes.size() >= 4);
  for (const json& doc : probes) {
    CAPTURE(doc.dump());
    sightline::ParameterSchemaRecorder recorder;
    CHECK_NOTHROW(sightline::read_scenario(doc));
    int added = 0;
    for (const json& e : recorder.to_json()) added += from_presets.count(e.at("pointer").get<std::string>()) == 0;
    CHECK(added > 0);  // a probe that records nothing new is dead weight
  }
}

TEST_CASE("sections, preset references and lists of names are in the schema though no preset sets some") {
  const json params = exported_parameters();
  auto entry = [&](const std::string& pointer) -> json {
    for (const json& e : params)
      if (e.at("pointer") == pointer) return e;
    return nullptr;
  };
  const std::pair<const char*, const char*> typed[] = {
      {"/model", "preset"}, {"/hardware/gpu", "preset"}, {"/hardware/intra_node", "preset"},
      {"/hardware/inter_node", "preset"}, {"/serving/speculative/draft_model", "preset"},
      {"/serving/kv_cache/offload/tiers/*", "preset"}, {"/serving/workload/shared_prefix", "object"},
      {"/serving/workload/sessions", "object"}, {"/serving/speculative", "object"}, {"/serving/lora", "object"},
      {"/serving/steady_state", "object"}, {"/serving/max_qps_search", "object"}, {"/training/lora", "object"},
      {"/serving/cluster/pools", "array"}, {"/training/lora/targets", "list"}, {"/training/recompute/modules", "list"},
      // Read only on branches no preset takes: recorded through the probes.
      {"/serving/workload/duration_s", "number"}, {"/serving/workload/arrival/cv", "number"},
      {"/serving/workload/arrival/concurrency", "integer"}, {"/serving/workload/sessions/think_time_s/min_s", "number"},
      {"/serving/workload/prompt_tokens/stddev", "number"}, {"/serving/workload/sessions/output_tokens/theta", "number"},
      {"/serving/workload/sessions/first_input_tokens", "integer"},
  };
  for (const auto& t : typed) {
    const std::string pointer = t.first;
    CAPTURE(pointer);
    const json e = entry(pointer);
    REQUIRE(e.is_object());
    CHECK(e.at("type") == t.second);
    CHECK(e.contains("label"));
  }
  CHECK(entry("/training/lora/targets").at("choices").size() == 7);
  CHECK(entry("/training/recompute/modules").at("choices") == json({"core_attn", "layernorm", "mlp_act"}));
}
