// The training section: located errors for bad input (code and JSON pointer)
// and the resolved defaults.
#include <doctest/doctest.h>

#include <functional>
#include <vector>

#include "test_helpers.hpp"

using namespace sightline::test;

namespace {

json t21() { return preset("scenarios", "T2.1"); }   // Llama-2-7B, dp 8 on 8 H100
json t25() { return preset("scenarios", "T2.5"); }   // Mixtral, ep 8
json t33() { return preset("scenarios", "T3.3"); }   // Llama-2-70B, tp 8 dp 8, scaling

struct BadCase {
  const char* what;
  std::function<json()> make;
  const char* code;
  const char* path;
};

std::vector<BadCase> bad_training_cases() {
  return {
      {"unknown key in parallelism", [] { json s = t21(); s["training"]["parallelism"]["dpp"] = 2; return s; },
       "unknown_key", "/training/parallelism/dpp"},
      {"unknown key in training", [] { json s = t21(); s["training"]["epochs"] = 2; return s; }, "unknown_key",
       "/training/epochs"},
      {"missing batch", [] { json s = t21(); s["training"].erase("batch"); return s; }, "missing_key",
       "/training/batch"},
      {"missing seq_len", [] { json s = t21(); s["training"]["batch"].erase("seq_len"); return s; }, "missing_key",
       "/training/batch/seq_len"},
      {"GPUs do not match dp×tp×pp×cp", [] { json s = t21(); s["training"]["parallelism"]["dp"] = 4; return s; },
       "constraint_violation", "/training/parallelism/dp"},
      {"tp does not divide heads", [] {
         json s = t21(); s["hardware"]["gpus_per_node"] = 6; s["training"]["parallelism"] = {{"dp", 2}, {"tp", 3}};
         return s; },
       "constraint_violation", "/training/parallelism/tp"},
      {"tp spans two nodes", [] {
         json s = t33(); s["training"]["parallelism"]["tp"] = 16; s["training"]["parallelism"]["dp"] = 4;
         s["training"].erase("scaling"); s["training"]["key_metrics"] = {"tokens_per_s"}; return s; },
       "constraint_violation", "/training/parallelism/tp"},
      {"pp does not divide layers", [] {
         json s = t21(); s["hardware"]["gpus_per_node"] = 3; s["training"]["parallelism"] = {{"pp", 3}}; return s; },
       "constraint_violation", "/training/parallelism/pp"},
      {"ep on a dense model", [] { json s = t21(); s["training"]["parallelism"]["ep"] = 2; return s; },
       "constraint_violation", "/training/parallelism/ep"},
      {"ep does not divide experts", [] { json s = t25(); s["training"]["parallelism"]["ep"] = 16; return s; },
       "constraint_violation", "/training/parallelism/ep"},
      {"global batch not a multiple of dp × micro-batch", [] {
         json s = t21(); s["training"]["batch"].erase("gradient_accumulation");
         s["training"]["batch"]["global_batch_size"] = 12; return s; },
       "constraint_violation", "/training/batch/global_batch_size"},
      {"gradient_accumulation contradicts global batch", [] {
         json s = t21(); s["training"]["batch"]["global_batch_size"] = 16; return s; },
       "constraint_violation", "/training/batch/gradient_accumulation"},
      {"fewer micro-batches than pipeline stages", [] {
         json s = preset("scenarios", "T2.3"); s["training"]["batch"]["global_batch_size"] = 32; return s; },
       "constraint_violation", "/training/batch/global_batch_size"},
      {"interleaved needs micro-batches that are a multiple of pp", [] {
         json s = preset("scenarios", "T2.3"); s["training"]["batch"]["global_batch_size"] = 8 * 12; return s; },
       "constraint_violation", "/training/batch/global_batch_size"},
      {"virtual stages with plain 1F1B", [] {
         json s = preset("scenarios", "T2.3"); s["training"]["schedule"] = "1f1b"; return s; },
       "constraint_violation", "/training/parallelism/virtual_stages"},
      {"interleaved schedule without virtual stages", [] {
         json s = preset("scenarios", "T2.3"); s["training"]["parallelism"]["virtual_stages"] = 1; return s; },
       "constraint_violation", "/training/schedule"},
      {"unknown schedule", [] { json s = t21(); s["training"]["schedule"] = "zero_bubble"; return s; },
       "invalid_value", "/training/schedule"},
      {"seq_len beyond max_context", [] { json s = t21(); s["training"]["batch"]["seq_len"] = 8192; return s; },
       "constraint_violation", "/training/batch/seq_len"},
      {"sequence parallelism without tp", [] {
         json s = t21(); s["training"]["parallelism"]["sequence_parallel"] = true; return s; },
       "constraint_violation", "/training/parallelism/sequence_parallel"},
      {"cp does not split the sequence evenly", [] {
         json s = t21(); s["training"]["parallelism"] = {{"dp", 1}, {"cp", 8}}; s["training"]["batch"]["seq_len"] = 4004;
         return s; },
       "constraint_violation", "/training/parallelism/cp"},
      {"unknown recompute mode", [] { json s = t21(); s["training"]["recompute"] = "half"; return s; }, "invalid_value",
       "/training/recompute"},
      {"recompute modules with full mode", [] {
         json s = t21(); s["training"]["recompute"] = {{"mode", "full"}, {"modules", {"core_attn"}}}; return s; },
       "constraint_violation", "/training/recompute/modules"},
      {"zero stage 4", [] { json s = t21(); s["training"]["parallelism"]["zero_stage"] = 4; return s; },
       "out_of_range", "/training/parallelism/zero_stage"},
      {"fsdp contradicts zero_stage", [] { json s = t21(); s["training"]["parallelism"]["fsdp"] = true; return s; },
       "constraint_violation", "/training/parallelism/fsdp"},
      {"fp8 on an A100", [] {
         json s = preset("scenarios", "T3.1"); s["training"]["fp8"] = "layers"; return s; },
       "constraint_violation", "/training/fp8"},
      {"fp8 activations in the precision section", [] {
         json s = preset("scenarios", "T4.1"); s["precision"]["activations"] = "fp8"; s["precision"]["weights"] = "fp8";
         return s; },
       "constraint_violation", "/precision/activations"},
      {"unknown LoRA target", [] {
         json s = preset("scenarios", "T4.4"); s["training"]["lora"]["targets"] = {"q", "qkv"}; return s; },
       "invalid_value", "/training/lora/targets/1"},
      {"LoRA rank zero", [] { json s = preset("scenarios", "T4.4"); s["training"]["lora"]["rank"] = 0; return s; },
       "out_of_range", "/training/lora/rank"},
      {"moe options on a dense model", [] {
         json s = t21(); s["training"]["moe"] = {{"load_imbalance", 1.2}}; return s; },
       "constraint_violation", "/training/moe"},
      {"load imbalance below 1", [] { json s = t25(); s["training"]["moe"]["load_imbalance"] = 0.5; return s; },
       "out_of_range", "/training/moe/load_imbalance"},
      {"unknown key metric", [] { json s = t21(); s["training"]["key_metrics"] = {"speed"}; return s; },
       "invalid_value", "/training/key_metrics/0"},
      {"compare metric without a variant", [] {
         json s = t21(); s["training"]["key_metrics"] = {"compare_throughput_ratio"}; return s; },
       "constraint_violation", "/training/key_metrics/0"},
      {"time to train without tokens", [] {
         json s = t21(); s["training"]["key_metrics"] = {"time_to_train_hours"}; return s; },
       "constraint_violation", "/training/key_metrics/0"},
      {"compare variant on an unknown GPU", [] {
         json s = preset("scenarios", "T3.5"); s["training"]["compare"][0]["hardware"]["gpu"] = "a200"; return s; },
       "unknown_preset", "/training/compare/0/hardware/gpu"},
      {"compare variant with a bad training patch", [] {
         json s = preset("scenarios", "T3.2"); s["training"]["compare"][0]["training"]["recompute"] = "most"; return s; },
       "invalid_value", "/training/compare/0/training/recompute"},
      {"compare variant without a label", [] {
         json s = preset("scenarios", "T3.2"); s["training"]["compare"][0].erase("label"); return s; },
       "missing_key", "/training/compare/0/label"},
      {"scaling points not increasing", [] {
         json s = t33(); s["training"]["scaling"]["dp"] = {1, 4, 2}; return s; },
       "invalid_value", "/training/scaling/dp/2"},
      {"scaling across nodes without a network", [] {
         json s = t21(); s["training"]["scaling"] = {{"dp", {4, 8, 16}}}; return s; },
       "constraint_violation", "/training/scaling/dp/2"},
      {"bucket size zero", [] { json s = t21(); s["training"]["overlap"] = {{"bucket_MiB", 0}}; return s; },
       "out_of_range", "/training/overlap/bucket_MiB"},
      {"async TP without TP", [] { json s = t21(); s["training"]["overlap"] = {{"tp", true}}; return s; },
       "constraint_violation", "/training/overlap/tp"},
  };
}

}  // namespace

TEST_CASE("training: bad input gets a located error (code and JSON pointer)") {
  const auto cases = bad_training_cases();
  CHECK(cases.size() >= 10);
  for (const auto& c : cases) {
    CAPTURE(std::string(c.what));
    const json e = run(c.make());
    CHECK(e["ok"] == false);
    if (e["ok"] != false) continue;
    CHECK(e["error"]["code"] == c.code);
    CHECK(e["error"]["path"] == c.path);
    CHECK(!e["error"]["message"].get<std::string>().empty());
  }
}

TEST_CASE("training: the resolved scenario spells out every default") {
  json s = preset("scenarios", "T3.1");
  const json v = validate(s);
  REQUIRE(v["ok"] == true);
  const json& t = v["result"]["training"];
  CHECK(t["parallelism"]["dp"] == 1);
  CHECK(t["parallelism"]["zero_stage"] == 0);
  CHECK(t["parallelism"]["placement"] == json::array({"tp", "cp", "dp", "pp"}));
  CHECK(t["schedule"] == "1f1b");
  CHECK(t["recompute"]["mode"] == "none");
  CHECK(t["optimizer"]["type"] == "adamw");
  CHECK(t["optimizer"]["grad_dtype"] == "bf16");
  CHECK(t["batch"]["global_batch_size"] == 1);
  CHECK(t["batch"]["gradient_accumulation"] == 1);
  CHECK(t["attention"] == "flash");
  CHECK(t["compare"].size() == 2);
  CHECK(t["compare"][0]["training"]["optimizer"]["cpu_offload"] == true);
}

TEST_CASE("training: every T preset validates and runs, printing its key metric") {
  for (const char* id : {"T1.1", "T1.2", "T1.3", "T1.4", "T1.5", "T2.1", "T2.2", "T2.3", "T2.4", "T2.5", "T2.6", "T3.1",
                         "T3.2", "T3.3", "T3.4", "T3.5", "T4.1", "T4.2", "T4.3", "T4.4", "T4.5"}) {
    CAPTURE(id);
    const json s = preset("scenarios", id);
    CHECK(s["source"].get<std::string>().find("Benchmark suite 004") != std::string::npos);
    const json e = run(s);
    REQUIRE(e["ok"] == true);
    const json& r = e["result"];
    CHECK(r["kind"] == "training");
    REQUIRE(r["key_metrics"].size() >= 1);
    for (const json& k : r["key_metrics"]) {
      CAPTURE(k["id"].get<std::string>());
      CHECK(!k["value"].is_null());
    }
  }
}
