// Multi-token-prediction layers priced as a speculative draft
// (serving.speculative.method "mtp"): the draft is the model's own MTP module,
// one decoder layer of its last kind behind eh_proj, run once per drafted
// token on the target's GPUs. Properties, not fitted numbers.
#include <doctest/doctest.h>

#include "model/architecture.hpp"
#include "model/mtp.hpp"
#include "model/operators.hpp"
#include "model/param_count.hpp"
#include "scenario/spec_acceptance.hpp"
#include "test_helpers.hpp"

using namespace sightline;

namespace {

json mtp_scenario(const std::string& model, int k, double acceptance) {
  json s = {{"schema_version", 1},
            {"seed", 3},
            {"model", model},
            {"hardware", {{"gpu", "h200"}, {"gpus_per_node", 8}, {"intra_node", "nvlink4-nvswitch"}}},
            {"precision", {{"weights", "fp8"}, {"activations", "fp8"}, {"kv_cache", "bf16"}}},
            {"serving",
             {{"mode", "simulate"},
              {"parallelism", {{"tp", 8}, {"pp", 1}}},
              {"workload",
               {{"arrival", {{"process", "fixed"}, {"rate_qps", 0.2}}},
                {"num_requests", 4},
                {"prompt_tokens", 256},
                {"output_tokens", 256}}},
              {"scheduler", {{"policy", "continuous"}, {"max_num_seqs", 1}}}}}};
  if (k > 0) {
    s["serving"]["speculative"] = {{"method", "mtp"}, {"k", k}};
    if (acceptance >= 0) s["serving"]["speculative"]["acceptance_rate"] = acceptance;
  }
  return s;
}

double metric(const json& r, const std::string& pointer) { return r["result"].at(json::json_pointer(pointer)).get<double>(); }

}  // namespace

TEST_CASE("mtp: the draft is one decoder layer of the model's last kind behind a 2h -> h projection") {
  const ModelArch m = read_model(json("deepseek-v3"), "/model");
  REQUIRE(m.mtp_layers == 1);
  const ModelArch d = mtp_draft_arch(m);
  CHECK(d.num_layers == 1);
  CHECK(d.num_moe_layers() == 1);  // DeepSeek-V3's last layer (and its MTP layer) is MoE
  CHECK(d.mla.enabled);
  BatchShape b;
  b.seqs.assign(4, SeqChunk{1, 512});
  StepOptions o;
  o.mtp_module = true;
  const StepOperators ops = build_forward_step(d, Precision{}, ParallelLayout{8, 1}, b, o);
  int eh = 0, heads = 0;
  for (const Operator& op : ops.ops) {
    if (op.name == "mtp_eh_proj") {
      ++eh;
      CHECK(op.k == 2 * m.hidden_size);
      CHECK(op.n == m.hidden_size);
      CHECK(op.m == 4);
    }
    heads += op.name == "lm_head" ? 1 : 0;
  }
  CHECK(eh == 1);
  CHECK(heads == 1);  // drafts compute logits through the shared LM head
  // Without the flag no eh_proj is priced.
  for (const Operator& op : build_forward_step(d, Precision{}, ParallelLayout{8, 1}, b, StepOptions{}).ops)
    CHECK(op.name != "mtp_eh_proj");
}

TEST_CASE("mtp: DeepSeek-V3's MTP module is the published 14B (with its copies of the embedding and head)") {
  // The DeepSeek-V3 model card: 685B on the Hub = 671B main model + 14B MTP
  // module weights; the checkpoint stores the module's embedding and shared
  // head again, which the engine shares with the main model.
  const ModelArch m = read_model(json("deepseek-v3"), "/model");
  const ParamCounts c = count_params(m);
  const double stored = static_cast<double>(mtp_module_params(m)) + 2.0 * m.vocab_size * m.hidden_size;
  MESSAGE("MTP module " << mtp_module_params(m) / 1e9 << " B, as stored " << stored / 1e9 << " B");
  CHECK(stored / 1e9 == doctest::Approx(14.0).epsilon(0.05));
  CHECK(c.mtp == mtp_module_params(m));
}

TEST_CASE("mtp serving: faster batch-1 decode than autoregressive, committed tokens as expected, acceptance stated") {
  const json plain = test::run(mtp_scenario("deepseek-r1", 0, -1));
  const json mtp = test::run(mtp_scenario("deepseek-r1", 3, -1));
  INFO(mtp.dump().substr(0, 600));
  REQUIRE(plain["ok"].get<bool>());
  REQUIRE(mtp["ok"].get<bool>());
  const double tpot_plain = metric(plain, "/metrics/tpot_ms/mean"), tpot_mtp = metric(mtp, "/metrics/tpot_ms/mean");
  MESSAGE("DeepSeek-R1 8xH200 TP8 fp8 batch 1: TPOT " << tpot_plain << " ms autoregressive, " << tpot_mtp
                                                      << " ms with MTP k=3");
  CHECK(tpot_mtp < tpot_plain);
  // Not given: the acceptance comes from the published DeepSeek MTP rows
  // (presets/spec_acceptance), which the result names, and is not flagged as assumed.
  const auto published = serve::published_acceptance("deepseek-r1", "mtp");
  REQUIRE(published);
  CHECK(published->basis == "family");
  CHECK(metric(mtp, "/metrics/speculative/acceptance_rate") == doctest::Approx(published->rate));
  CHECK_FALSE(mtp["result"]["metrics"]["speculative"]["acceptance_rate_assumed"].get<bool>());
  const json& used = mtp["result"]["metrics"]["speculative"]["acceptance_published"];
  CHECK(used["basis"] == "family");
  CHECK(used["rows"].size() == published->rows.size());
  bool warned = false;
  for (const json& w : mtp["result"]["warnings"]) warned = warned || w.get<std::string>().find("assumed") != std::string::npos;
  CHECK_FALSE(warned);
  CHECK(metric(mtp, "/metrics/speculative/tokens_per_verify_step") ==
        doctest::Approx(metric(mtp, "/metrics/speculative/expected_tokens_per_verify_step")).epsilon(0.05));
  // The module's weights and KV are held beside the model's.
  CHECK(metric(mtp, "/memory_per_gpu/0/draft_weights_GiB") > 1.0);
  CHECK(metric(mtp, "/capacity/kv_bytes_per_token_per_gpu") > metric(plain, "/capacity/kv_bytes_per_token_per_gpu"));

  // A given acceptance is not flagged; a lower one commits fewer tokens per step.
  const json low = test::run(mtp_scenario("deepseek-r1", 3, 0.4));
  REQUIRE(low["ok"].get<bool>());
  CHECK_FALSE(low["result"]["metrics"]["speculative"]["acceptance_rate_assumed"].get<bool>());
  CHECK(metric(low, "/metrics/speculative/tokens_per_verify_step") <
        metric(mtp, "/metrics/speculative/tokens_per_verify_step"));
  CHECK(metric(low, "/metrics/tpot_ms/mean") > tpot_mtp);
}

TEST_CASE("mtp: the draft's time grows with k") {
  double last = 0;
  for (int k : {1, 2, 4}) {
    const json r = test::run(mtp_scenario("deepseek-r1", k, 1.0));
    REQUIRE(r["ok"].get<bool>());
    const double draft = r["result"]["metrics"]["gpu"]["busy_time_s_by_family"].value("draft_model", 0.0) /
                         metric(r, "/metrics/speculative/verify_steps");
    CAPTURE(k);
    CHECK(draft > last);
    last = draft;
  }
}

TEST_CASE("mtp on a model without MTP layers is a located error") {
  const json r = test::run(mtp_scenario("mixtral-8x7b", 3, -1));
  REQUIRE_FALSE(r["ok"].get<bool>());
  CHECK(r["error"]["path"] == "/serving/speculative/method");
  CHECK(r["error"]["message"].get<std::string>().find("mtp_layers 0") != std::string::npos);
  // Draft-model keys do not belong to the mtp method.
  json s = mtp_scenario("deepseek-r1", 3, -1);
  s["serving"]["speculative"]["draft_model"] = "llama-2-7b";
  const json e = test::run(s);
  REQUIRE_FALSE(e["ok"].get<bool>());
  CHECK(e["error"]["path"] == "/serving/speculative/draft_model");
}

TEST_CASE("mtp: the shipped example runs as shipped and MTP shortens decode against its plain-decoding baseline") {
  const json r = test::envelope(api::run_scenario(test::read_source_file("examples/deepseek-r1-mtp-8x-h200.json")));
  INFO(r.dump().substr(0, 600));
  REQUIRE(r["ok"].get<bool>());
  const json& res = r["result"];
  CHECK(res["metrics"]["speculative"]["method"] == "mtp");
  CHECK_FALSE(res["metrics"]["speculative"]["acceptance_rate_assumed"].get<bool>());
  const double speedup = res["compare"]["speedup"]["tpot_mean"].get<double>();
  MESSAGE("DeepSeek-R1 8xH200 TP8 EP8, MTP k=2 at 0.85: decode speedup " << speedup << "x at 2 req/s");
  CHECK(speedup > 1.0);
  // Each verify step commits 1 + the accepted prefix: at most k + 1 tokens.
  CHECK(res["metrics"]["speculative"]["tokens_per_verify_step"].get<double>() <= 3.0);
}
