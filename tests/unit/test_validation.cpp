// Bad input gets a located error: each case asserts the error code and the
// JSON pointer of the offending value.
#include <doctest/doctest.h>

#include <functional>
#include <vector>

#include "test_helpers.hpp"

using namespace sightline::test;

namespace {

json base() { return preset("scenarios", "I1.1"); }

json tp4_base() { return preset("scenarios", "I1.4"); }

struct BadCase {
  const char* what;
  std::function<json()> make;
  const char* code;
  const char* path;
};

std::vector<BadCase> bad_cases() {
  return {
      {"unknown top-level key", [] { json s = base(); s["modle"] = "x"; return s; }, "unknown_key", "/modle"},
      {"unknown key in serving", [] { json s = base(); s["serving"]["batch"] = 2; return s; }, "unknown_key",
       "/serving/batch"},
      {"unknown key in workload", [] { json s = base(); s["serving"]["workload"]["qps"] = 2; return s; },
       "unknown_key", "/serving/workload/qps"},
      {"missing model", [] { json s = base(); s.erase("model"); return s; }, "missing_key", "/model"},
      {"missing hardware", [] { json s = base(); s.erase("hardware"); return s; }, "missing_key", "/hardware"},
      {"missing gpu", [] { json s = base(); s["hardware"].erase("gpu"); return s; }, "missing_key", "/hardware/gpu"},
      {"missing workload", [] { json s = base(); s["serving"].erase("workload"); return s; }, "missing_key",
       "/serving/workload"},
      {"missing prompt tokens", [] { json s = base(); s["serving"]["workload"].erase("prompt_tokens"); return s; },
       "missing_key", "/serving/workload/prompt_tokens"},
      {"neither serving nor training", [] { json s = base(); s.erase("serving"); return s; }, "missing_key",
       "/serving"},
      {"unknown model preset", [] { json s = base(); s["model"] = "llama-9-7b"; return s; }, "unknown_preset",
       "/model"},
      {"unknown gpu preset", [] { json s = base(); s["hardware"]["gpu"] = "h900"; return s; }, "unknown_preset",
       "/hardware/gpu"},
      {"unknown interconnect preset",
       [] { json s = tp4_base(); s["hardware"]["intra_node"] = "nvlink9"; return s; }, "unknown_preset",
       "/hardware/intra_node"},
      {"model overrides an unknown key", [] { json s = base(); s["model"] = {{"preset", "llama-2-7b"}, {"num_layerz", 3}}; return s; },
       "unknown_key", "/model/num_layerz"},
      {"model preset id of wrong type", [] { json s = base(); s["model"] = {{"preset", 7}}; return s; }, "type_error",
       "/model/preset"},
      {"prompt tokens is a string", [] { json s = base(); s["serving"]["workload"]["prompt_tokens"] = "128"; return s; },
       "type_error", "/serving/workload/prompt_tokens"},
      {"prompt tokens fractional", [] { json s = base(); s["serving"]["workload"]["prompt_tokens"] = 12.5; return s; },
       "type_error", "/serving/workload/prompt_tokens"},
      {"prompt tokens zero", [] { json s = base(); s["serving"]["workload"]["prompt_tokens"] = 0; return s; },
       "out_of_range", "/serving/workload/prompt_tokens"},
      {"negative batch", [] { json s = base(); s["serving"]["workload"]["batch_size"] = -1; return s; },
       "out_of_range", "/serving/workload/batch_size"},
      {"tp zero", [] { json s = base(); s["serving"]["parallelism"]["tp"] = 0; return s; }, "out_of_range",
       "/serving/parallelism/tp"},
      {"gpus_per_node is boolean", [] { json s = base(); s["hardware"]["gpus_per_node"] = true; return s; },
       "type_error", "/hardware/gpus_per_node"},
      {"unknown dtype", [] { json s = base(); s["precision"]["weights"] = "int3"; return s; }, "invalid_value",
       "/precision/weights"},
      {"int4 activations", [] { json s = base(); s["precision"]["activations"] = "int4"; return s; },
       "invalid_value", "/precision/activations"},
      {"unknown attention implementation", [] { json s = base(); s["serving"]["attention"] = "paged"; return s; },
       "invalid_value", "/serving/attention"},
      {"unknown serving mode", [] { json s = base(); s["serving"]["mode"] = "batch"; return s; }, "invalid_value",
       "/serving/mode"},
      {"schema version from the future", [] { json s = base(); s["schema_version"] = 2; return s; },
       "invalid_value", "/schema_version"},
      {"tp does not divide heads", [] {
         json s = base(); s["serving"]["parallelism"]["tp"] = 3; s["hardware"]["gpus_per_node"] = 3;
         s["hardware"]["intra_node"] = "nvlink3-nvswitch"; return s; },
       "constraint_violation", "/serving/parallelism/tp"},
      {"tp neither divides nor multiplies kv heads", [] {
         json s = base(); s["model"] = {{"preset", "llama-2-70b"}, {"num_heads", 48}, {"num_kv_heads", 12}};
         s["serving"]["parallelism"]["tp"] = 8; s["hardware"]["gpus_per_node"] = 8;
         s["hardware"]["intra_node"] = "nvlink3-nvswitch"; return s; },
       "constraint_violation", "/serving/parallelism/tp"},
      {"pp does not divide layers", [] {
         json s = base(); s["serving"]["parallelism"]["pp"] = 3; s["hardware"]["gpus_per_node"] = 3;
         s["hardware"]["intra_node"] = "nvlink3-nvswitch"; return s; },
       "constraint_violation", "/serving/parallelism/pp"},
      {"gpu count does not match tp x pp", [] { json s = tp4_base(); s["hardware"]["gpus_per_node"] = 8; return s; },
       "constraint_violation", "/serving/parallelism/tp"},
      {"tp spans nodes", [] {
         json s = tp4_base(); s["hardware"]["gpus_per_node"] = 2; s["hardware"]["nodes"] = 2;
         s["hardware"]["inter_node"] = "ib-hdr"; return s; },
       "constraint_violation", "/serving/parallelism/tp"},
      {"multi-GPU node without interconnect", [] { json s = tp4_base(); s["hardware"].erase("intra_node"); return s; },
       "missing_key", "/hardware/intra_node"},
      {"inter-node network used inside a node", [] { json s = tp4_base(); s["hardware"]["intra_node"] = "ib-ndr"; return s; },
       "constraint_violation", "/hardware/intra_node"},
      {"context window exceeded", [] { json s = base(); s["serving"]["workload"]["prompt_tokens"] = 4000; return s; },
       "constraint_violation", "/serving/workload/output_tokens"},
      {"70B bf16 does not fit one A100", [] { json s = base(); s["model"] = "llama-2-70b"; return s; },
       "does_not_fit", "/serving/parallelism/tp"},
      {"batch KV cache does not fit", [] {
         json s = base(); s["serving"]["workload"]["batch_size"] = 64; s["serving"]["workload"]["prompt_tokens"] = 3900;
         s["serving"]["workload"]["output_tokens"] = 100; return s; },
       "does_not_fit", "/serving/workload/batch_size"},
      {"fp8 on a GPU without fp8", [] { json s = base(); s["precision"]["activations"] = "fp8"; return s; },
       "constraint_violation", "/precision/activations"},
      {"bf16 on a T4", [] { json s = base(); s["hardware"]["gpu"] = "t4"; s["model"] = "gpt2"; return s; },
       "constraint_violation", "/precision/activations"},
      {"weight group size not a power of two", [] { json s = base(); s["precision"]["weight_group_size"] = 100; return s; },
       "invalid_value", "/precision/weight_group_size"},
      {"custom gpu missing bandwidth", [] {
         json s = base(); s["hardware"]["gpu"] = {{"peak_tflops", {{"bf16", 100}}}, {"memory_GiB", 80}, {"sm_count", 100},
                                                  {"tdp_W", 300}}; return s; },
       "missing_key", "/hardware/gpu/hbm_bandwidth_GBps"},
      {"custom gpu negative memory", [] {
         json s = base(); s["hardware"]["gpu"] = {{"peak_tflops", {{"bf16", 100}}}, {"memory_GiB", -5},
                                                  {"hbm_bandwidth_GBps", 1000}, {"sm_count", 100}, {"tdp_W", 300}}; return s; },
       "out_of_range", "/hardware/gpu/memory_GiB"},
      {"inline model with heads not dividing kv heads", [] {
         json s = base(); s["model"] = {{"num_layers", 4}, {"hidden_size", 1024}, {"num_heads", 16}, {"num_kv_heads", 5},
                                        {"intermediate_size", 4096}, {"vocab_size", 1000}, {"max_context", 4096}}; return s; },
       "constraint_violation", "/model/num_kv_heads"},
      {"inline moe with top_k above experts", [] {
         json s = base(); s["model"] = {{"preset", "mixtral-8x7b"}, {"moe", {{"num_experts", 2}, {"top_k", 4},
                                        {"expert_intermediate_size", 14336}}}}; return s; },
       "constraint_violation", "/model/moe/top_k"},
      {"hf config of an unsupported family", [] {
         json s = base(); s["model"] = {{"hf_config", {{"model_type", "bert"}, {"hidden_size", 768}}}}; return s; },
       "invalid_value", "/model/hf_config/model_type"},
      {"hf config missing hidden size", [] {
         json s = base(); s["model"] = {{"hf_config", {{"model_type", "llama"}, {"num_hidden_layers", 2}}}}; return s; },
       "missing_key", "/model/hf_config/hidden_size"},
      {"training section without its batch", [] { json s = base(); s.erase("serving"); s["training"] = json::object(); return s; },
       "missing_key", "/training/batch"},
      {"scenario is not an object", [] { return json::array(); }, "type_error", ""},
  };
}

}  // namespace

TEST_CASE("every bad input is rejected with its code and JSON path") {
  const auto cases = bad_cases();
  CHECK(cases.size() >= 30);
  for (const auto& c : cases) {
    const std::string what = c.what;
    CAPTURE(what);
    const json scenario = c.make();
    const json v = validate(scenario);
    REQUIRE(v.at("ok") == false);
    CHECK(v["error"]["code"] == c.code);
    CHECK(v["error"]["path"] == c.path);
    CHECK(!v["error"]["message"].get<std::string>().empty());
    // run() rejects the same way before doing any work.
    const json r = run(scenario);
    CHECK(r["error"] == v["error"]);
  }
}

TEST_CASE("malformed JSON text is a parse error located where reading stopped, with the byte offset") {
  const json v = envelope(sightline::api::validate_scenario("{\"model\": "));
  CHECK(v["ok"] == false);
  CHECK(v["error"]["code"] == "parse_error");
  CHECK(v["error"]["path"] == "/model");
  CHECK(v["error"]["message"].get<std::string>().find("byte ") != std::string::npos);
}

TEST_CASE("json pointer escaping of odd keys") {
  json s = base();
  s["a/b~c"] = 1;
  const json v = validate(s);
  CHECK(v["error"]["code"] == "unknown_key");
  CHECK(v["error"]["path"] == "/a~1b~0c");
}

TEST_CASE("every shipped scenario preset validates") {
  const json list = envelope(sightline::api::list_presets("scenarios")).at("result");
  REQUIRE(list.size() >= 5);
  for (const json& s : list) {
    CAPTURE(s.at("id").get<std::string>());
    const json v = validate(s);
    CHECK(v.at("ok") == true);
  }
}

TEST_CASE("unknown handles and unknown preset kinds are errors, not crashes") {
  sightline::api::Engine engine;
  CHECK(envelope(engine.step(42, 10))["error"]["code"] == "unknown_handle");
  CHECK(envelope(engine.result(42))["error"]["code"] == "unknown_handle");
  CHECK(envelope(engine.cancel(42))["result"]["cancelled"] == false);
  CHECK(envelope(sightline::api::list_presets("rockets"))["error"]["code"] == "invalid_value");
}
