#include "scenario/parameter_catalogue.hpp"

#include "core/parameter_schema.hpp"
#include "presets/preset_store.hpp"
#include "scenario/parameter_words.hpp"
#include "scenario/scenario.hpp"

namespace sightline {

namespace {

// A scenario preset with a merge patch (RFC 7386: null removes a key).
struct SchemaProbe {
  const char* base;
  const char* patch;
};

// The schema is recorded from the readers, which read a key only where the
// document's choices lead them: the gamma arrivals' cv, a closed loop's
// clients, a duration instead of a request count, a normal length's stddev, a
// zipf length's theta, a uniform think time's bounds, a stack's own running
// limit and scheduler where the scenario gives none (the defaults of
// max_num_seqs, policy, priority and chunk_size vary). No shipped preset takes
// those branches, so these documents do, and the readers record those keys as
// they check them (tests/unit/test_parameter_words.cpp reads each: a probe the
// readers refuse is a bug).
constexpr SchemaProbe kSchemaProbes[] = {
    {"I2.1", R"({"cost_model": {"software_stack": "sglang-overlap-like"}, "serving": {"scheduler": {"policy": null}}})"},
    {"S.eagle3-qwen3-8b-h200", R"({"serving": {"workload": {
       "arrival": {"process": "gamma", "rate_qps": 4, "cv": 2}, "num_requests": null, "duration_s": 60,
       "prompt_tokens": {"dist": "normal", "mean": 256, "stddev": 64, "cv": null},
       "output_tokens": {"dist": "zipf", "min": 8, "max": 1024, "mean": null, "cv": null}}}})"},
    {"S.eagle3-qwen3-8b-h200", R"({"serving": {"workload": {
       "arrival": {"process": "closed_loop", "rate_qps": null, "concurrency": 4, "think_time_s": 1},
       "prompt_tokens": {"dist": "zipf", "min": 8, "max": 2048, "mean": null, "cv": null},
       "output_tokens": {"dist": "normal", "mean": 256, "stddev": 64, "cv": null}}}})"},
    {"S.agentic-coding", R"({"serving": {"workload": {"sessions": {
       "input_tokens": {"dist": "normal", "mean": 1200, "stddev": 300, "cv": null},
       "output_tokens": {"dist": "zipf", "min": 20, "max": 2000, "mean": null, "cv": null},
       "think_time_s": {"dist": "uniform", "min_s": 1, "max_s": 5, "mean_s": null, "cv": null}}}}})"},
    {"S.agentic-coding", R"({"serving": {"workload": {"sessions": {
       "input_tokens": {"dist": "zipf", "min": 50, "max": 8000, "mean": null, "cv": null},
       "output_tokens": {"dist": "normal", "mean": 250, "stddev": 60, "cv": null}}}}})"},
};

}  // namespace

std::vector<json> schema_probe_documents() {
  std::vector<json> docs;
  for (const SchemaProbe& p : kSchemaProbes) {
    json doc = require_preset("scenarios", p.base, "");
    doc.merge_patch(parse_json_text(p.patch));
    docs.push_back(std::move(doc));
  }
  return docs;
}

json parameter_catalogue_json() {
  ParameterSchemaRecorder recorder;
  for (const json* p : list_presets("scenarios")) read_scenario(*p);
  for (const json& doc : schema_probe_documents()) read_scenario(doc);
  json entries = recorder.to_json();
  if (!kParameterWordsBuiltIn) return entries;
  for (json& e : entries) {
    const ParameterWords* w = parameter_words_at(e.at("pointer").get<std::string>());
    if (!w) continue;
    e["label"] = w->label;
    if (!w->unit.empty()) e["unit"] = w->unit;
    e["help"] = w->help;
  }
  return entries;
}

}  // namespace sightline
