// The GPU catalogue and the links it names: every GPU says where its numbers
// come from and which link it ships with (the one source of "the GPU's own
// link"), FP4 where the silicon has it, and the topology facts collectives
// depend on (an xGMI full mesh, NVLink domains larger or smaller than 8).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "comm/collectives.hpp"
#include "core/error.hpp"
#include "hw/hardware.hpp"
#include "presets/preset_store.hpp"
#include "scenario/scenario.hpp"

using namespace sightline;

namespace {

GpuSpec gpu(const std::string& id) { return read_gpu(json(id), "/hardware/gpu"); }
InterconnectSpec link(const std::string& id) { return read_interconnect(json(id), "/hardware/intra_node"); }

std::string error_path(const json& hw) {
  try {
    HardwareSpec h;
    h.gpu = gpu(hw["gpu"]);
    h.gpus_per_node = hw["gpus_per_node"];
    h.intra_node = link(hw["intra_node"]);
    check_link_domain(h, "/hardware/gpus_per_node");
  } catch (const SightlineError& e) {
    return e.path();
  }
  return "";
}

}  // namespace

TEST_CASE("gpu catalogue: every GPU cites its source and names its own intra-node link and inter-node network") {
  const auto gpus = list_presets("gpus");
  REQUIRE(gpus.size() >= 24);
  for (const json* p : gpus) {
    const GpuSpec g = read_gpu(*p, "/gpu");
    CAPTURE(g.id);
    CHECK(g.source.size() > 40);
    CHECK((g.vendor == "nvidia" || g.vendor == "amd"));
    REQUIRE_FALSE(g.default_intra_node.empty());
    const InterconnectSpec l = link(g.default_intra_node);
    CHECK(l.scope == "intra_node");
    // A GPU without NVLink/xGMI ships on PCIe; one with it ships on it.
    if (g.nvlink_bandwidth_GBps == 0) CHECK(l.kind == "pcie");
    // ... and the network between its nodes, also from the preset (nothing else picks one).
    REQUIRE_FALSE(g.default_inter_node.empty());
    const InterconnectSpec net = read_interconnect(json(g.default_inter_node), "/hardware/inter_node");
    CHECK(net.scope == "inter_node");
    CHECK(g.source.find("default_inter_node " + g.default_inter_node) != std::string::npos);
    CHECK(g.idle_power_W < g.tdp_W);
    CHECK(g.memory_GiB > 0);
  }
}

TEST_CASE("gpu catalogue: the issue's new parts are all there") {
  for (const char* id : {"b300", "gb200", "gb300", "h20", "h800", "h200-nvl", "h100-pcie", "h100-nvl", "l40s", "l4", "a10",
                         "a10g", "rtx-4090", "rtx-5090", "rtx-pro-6000-blackwell", "mi300x", "mi325x", "mi355x"}) {
    CAPTURE(id);
    CHECK(find_preset("gpus", id) != nullptr);
  }
}

TEST_CASE("gpu catalogue: FP4 tensor cores on Blackwell and CDNA 4 only") {
  for (const char* id : {"b200", "b300", "gb200", "gb300", "rtx-5090", "rtx-pro-6000-blackwell", "mi355x"}) {
    CAPTURE(id);
    const GpuSpec g = gpu(id);
    CHECK(g.peak_tflops.fp4 >= 2 * g.peak_tflops.fp8 - 1);  // 2x fp8 (Blackwell Ultra: 3x, GeForce FP32-acc fp8: 4x)
    CHECK(g.peak_tflops.fp4 > g.peak_tflops.fp8);
  }
  for (const char* id : {"h100-sxm", "h200", "h20", "mi300x", "mi325x", "rtx-4090", "l40s", "a100-80g-sxm"}) {
    CAPTURE(id);
    CHECK(gpu(id).peak_tflops.fp4 == 0);
  }
  // fp4 is echoed only where it exists, so older GPUs' JSON is unchanged.
  CHECK(gpu("b200").to_json()["peak_tflops"]["fp4"] == 9000);
  CHECK_FALSE(gpu("h100-sxm").to_json()["peak_tflops"].contains("fp4"));
}

TEST_CASE("gpu catalogue: GeForce records the FP32-accumulate tensor peak (half the FP16-accumulate one)") {
  // Ada: 4 x the FP32 CUDA-core rate would be the FP16-accumulate peak; frameworks accumulate in FP32.
  const GpuSpec g4090 = gpu("rtx-4090");
  CHECK(g4090.peak_tflops.fp16 == doctest::Approx(2 * g4090.peak_tflops.fp32).epsilon(0.01));
  CHECK(g4090.peak_tflops.int8 == doctest::Approx(4 * g4090.peak_tflops.fp16).epsilon(0.01));
  const GpuSpec g5090 = gpu("rtx-5090");
  CHECK(g5090.peak_tflops.fp16 == doctest::Approx(2 * g5090.peak_tflops.fp32).epsilon(0.01));
  CHECK(link(g4090.default_intra_node).bandwidth_per_gpu_GBps == link("pcie4").bandwidth_per_gpu_GBps / 2);
}

TEST_CASE("gpu catalogue: the A10G's tensor peaks are derived from its SM count and clock at the GeForce GA102 rate") {
  // No spec sheet gives them: 80 SMs x 1.71 GHz x 512 FLOP/SM/clock (FP16 with FP32 accumulate,
  // half the professional GA102 rate), which is why the A10G's tensor throughput is below the A10's.
  const GpuSpec a10g = gpu("a10g"), a10 = gpu("a10");
  const double sm_ghz = a10g.sm_count * a10g.boost_clock_MHz / 1000.0;
  CHECK(a10g.peak_tflops.bf16 == doctest::Approx(sm_ghz * 512 / 1000).epsilon(0.001));
  CHECK(a10g.peak_tflops.fp16 == a10g.peak_tflops.bf16);
  CHECK(a10g.peak_tflops.fp32 == doctest::Approx(sm_ghz * 256 / 1000).epsilon(0.001));  // 128 FMA per SM per clock
  CHECK(a10g.peak_tflops.bf16 < a10.peak_tflops.bf16);
  CHECK(a10g.peak_tflops.fp32 > a10.peak_tflops.fp32);
  CHECK(a10g.peak_tflops.fp8 == 0);
  // Same memory system as the A10; PCIe only.
  CHECK(a10g.hbm_bandwidth_GBps == a10.hbm_bandwidth_GBps);
  CHECK(a10g.memory_GiB == a10.memory_GiB);
  CHECK(a10g.default_intra_node == "pcie4");
  CHECK(a10g.source.find("DERIVED") != std::string::npos);
}

TEST_CASE("links: the GPU's own link follows the part, not its architecture (T4, L4, MI300X are not NVLink 3)") {
  CHECK(gpu("t4").default_intra_node == "pcie3");
  CHECK(gpu("l4").default_intra_node == "pcie4");
  CHECK(gpu("mi300x").default_intra_node == "xgmi3-mesh8");
  CHECK(gpu("h100-sxm").default_intra_node == "nvlink4-nvswitch");
  CHECK(gpu("gb200").default_intra_node == "nvlink5-nvl72");
  CHECK(link("nvlink5-nvl72").domain_gpus == 72);
  // One direction of each link is half the GPU's bidirectional NVLink/xGMI figure.
  for (const char* id : {"h800", "h100-nvl", "h200-nvl", "gb200", "gb300", "b300", "mi300x", "mi325x", "mi355x"}) {
    CAPTURE(id);
    const GpuSpec g = gpu(id);
    CHECK(link(g.default_intra_node).bandwidth_per_gpu_GBps == doctest::Approx(g.nvlink_bandwidth_GBps / 2).epsilon(0.01));
  }
  // A custom GPU may name a link; an inter-node network is a located error.
  json custom = {{"peak_tflops", {{"bf16", 100}}}, {"memory_GiB", 24}, {"hbm_bandwidth_GBps", 900}, {"sm_count", 10},
                 {"tdp_W", 300}, {"default_intra_node", "ib-ndr"}};
  try {
    read_gpu(custom, "/hardware/gpu");
    FAIL("expected an error");
  } catch (const SightlineError& e) {
    CHECK(e.path() == "/hardware/gpu/default_intra_node");
  }
}

TEST_CASE("links: an xGMI full mesh gives a group n-1 of its 7 links and runs direct collectives") {
  const InterconnectSpec xgmi = link("xgmi3-mesh8");
  CHECK(xgmi.full_mesh());
  CHECK_FALSE(link("nvlink4-nvswitch").full_mesh());
  const double big = 1024.0 * 1024 * 1024;
  const CollectiveCost two = collective_cost(CollectiveKind::AllReduce, big, 2, xgmi);
  const CollectiveCost eight = collective_cost(CollectiveKind::AllReduce, big, 8, xgmi);
  CHECK(two.algorithm == "direct (full mesh)");
  // Bus bandwidth grows with the group: 7 links in use at 8 GPUs, 1 at 2.
  CHECK(eight.busbw_GBps > 5 * two.busbw_GBps);
  // A switch of the same per-GPU bandwidth gives a pair the whole of it.
  InterconnectSpec switched = xgmi;
  switched.kind = "nvswitch";
  switched.domain_gpus = 0;
  CHECK(collective_cost(CollectiveKind::AllReduce, big, 2, switched).time_s < two.time_s);
  // Small messages: two direct steps instead of a ring's 2(n-1).
  const double small = 4096;
  CHECK(collective_cost(CollectiveKind::AllReduce, small, 8, xgmi).time_s <
        collective_cost(CollectiveKind::AllReduce, small, 8, switched).time_s);
}

TEST_CASE("links: a node holds one link domain at most (NVLink bridge pairs, 4-way bridges, 8-GPU meshes)") {
  CHECK(error_path({{"gpu", "h100-nvl"}, {"gpus_per_node", 4}, {"intra_node", "nvlink4-bridge-2"}}) ==
        "/hardware/gpus_per_node");
  CHECK(error_path({{"gpu", "h100-nvl"}, {"gpus_per_node", 2}, {"intra_node", "nvlink4-bridge-2"}}).empty());
  CHECK(error_path({{"gpu", "mi300x"}, {"gpus_per_node", 16}, {"intra_node", "xgmi3-mesh8"}}) ==
        "/hardware/gpus_per_node");
  CHECK(error_path({{"gpu", "gb200"}, {"gpus_per_node", 72}, {"intra_node", "nvlink5-nvl72"}}).empty());
  CHECK(error_path({{"gpu", "gb200"}, {"gpus_per_node", 144}, {"intra_node", "nvlink5-nvl72"}}) ==
        "/hardware/gpus_per_node");
}

TEST_CASE("fp4: runs on FP4 tensor cores where the GPU has them, weight-only with a warning where it does not") {
  auto scenario = [](const std::string& gpu_id) {
    json s = {{"schema_version", 1}, {"id", "fp4"}, {"model", "llama-3-8b"},
              {"hardware", {{"gpu", gpu_id}, {"gpus_per_node", 1}}},
              {"precision", {{"weights", "nvfp4"}, {"activations", "bf16"}}},
              {"serving", {{"mode", "latency"}, {"workload", {{"prompt_tokens", 128}, {"output_tokens", 8}}}}}};
    return read_scenario(s);
  };
  for (const char* id : {"b200", "gb200", "rtx-5090", "mi355x"}) {
    CAPTURE(id);
    const Scenario s = scenario(id);
    CHECK(s.precision.fp4_tensor_cores);
    CHECK(s.warnings.empty());
  }
  for (const char* id : {"h100-sxm", "mi300x", "rtx-4090"}) {
    CAPTURE(id);
    const Scenario s = scenario(id);
    CHECK_FALSE(s.precision.fp4_tensor_cores);
    REQUIRE(s.warnings.size() == 1);
    CHECK(s.warnings[0].find("no FP4 tensor cores") != std::string::npos);
  }
}

TEST_CASE("links: a GPU's default_inter_node must be a network between nodes, located where it is given") {
  json custom = *find_preset("gpus", "h100-sxm");
  custom["default_inter_node"] = "nvlink4-nvswitch";
  try {
    read_gpu(custom, "/hardware/gpu");
    FAIL("an intra-node link accepted as a network");
  } catch (const SightlineError& e) {
    CHECK(e.path() == "/hardware/gpu/default_inter_node");
  }
  custom["default_inter_node"] = "roce-400g";
  CHECK(read_gpu(custom, "/hardware/gpu").default_inter_node == "roce-400g");
  CHECK(read_gpu(custom, "/hardware/gpu").to_json()["default_inter_node"] == "roce-400g");
}

// A GPU or link is its values: no engine or page code names a GPU or
// interconnect preset (quoted, as code names one), so nothing branches on an
// id and a user's copy under another name takes the same path. The scan covers
// every source under engine/ and web/ (the page, its worker, and the page's
// build and maintainer scripts). The only exceptions, by file with the ids each
// may name, are not prediction code:
// - two maintainer commands' readers of development data that does not name
//   its hardware by preset id: Vidur's "a100" folder is the A100-80G SXM
//   (calibration_inputs), its "a100_dgx" network data ran on NVLink 3
//   NVSwitch, and the published multi-node collective rows, which name the
//   network between nodes, had NVLink 4 NVSwitch inside them (report-accuracy). They choose
//   which data set is which, never how a GPU is priced; every other data set
//   names its GPU or link in its own rows or file name;
// - web/src/client/search-form.js: the prices prefilled for the first search question
//   (a user's input, as in examples/search-llama3-70b.json), keyed by the GPU
//   they are the price of;
// - web/search-canonical.mjs: a hand-run measurement that asks the canonical
//   search question on the page as a user would, ticking those same GPUs.
// A new instance anywhere else fails.
TEST_CASE("gpu catalogue: no GPU or interconnect preset id is written in engine or page code") {
  namespace fs = std::filesystem;
  const fs::path root = SIGHTLINE_SOURCE_DIR;
  std::set<std::string> ids;
  for (const char* kind : {"gpus", "interconnects"})
    for (const json* p : list_presets(kind)) ids.insert(p->at("id").get<std::string>());
  REQUIRE(ids.size() >= 40);
  const std::map<std::string, std::set<std::string>> known = {
      {"engine/cli/calibration_inputs.cpp", {"a100-80g-sxm"}},
      {"engine/cli/calibration_inputs.hpp", {"a100-80g-sxm"}},
      {"engine/cli/cmd_report_accuracy.cpp", {"nvlink3-nvswitch", "nvlink4-nvswitch"}},
      {"web/src/client/search-form.js", {"h100-sxm", "h200", "a100-80g-sxm"}},
      {"web/search-canonical.mjs", {"h100-sxm", "h200", "a100-80g-sxm"}},
  };
  std::set<std::pair<std::string, std::string>> found;  // (file, id) of the listed exceptions
  int files = 0;
  int page_files = 0;
  for (const char* dir : {"engine", "web"}) {
    for (auto it = fs::recursive_directory_iterator(root / dir); it != fs::recursive_directory_iterator(); ++it) {
      const fs::directory_entry& entry = *it;
      // Installed packages are not the project's code.
      if (entry.is_directory() && entry.path().filename() == "node_modules") {
        it.disable_recursion_pending();
        continue;
      }
      if (!entry.is_regular_file()) continue;
      const std::string ext = entry.path().extension().string();
      if (ext != ".cpp" && ext != ".hpp" && ext != ".js" && ext != ".mjs" && ext != ".ts" && ext != ".html") continue;
      const std::string rel = fs::relative(entry.path(), root).generic_string();
      std::ifstream f(entry.path());
      std::stringstream text;
      text << f.rdbuf();
      const std::string code = text.str();
      ++files;
      if (rel.rfind("web/", 0) == 0) ++page_files;
      for (const std::string& id : ids)
        for (const char q : {'"', '\'', '`'}) {
          const std::string quoted = std::string(1, q) + id + q;
          if (code.find(quoted) == std::string::npos) continue;
          auto k = known.find(rel);
          INFO(rel << " names preset '" << id << "'");
          CHECK((k != known.end() && k->second.count(id) > 0));
          found.insert({rel, id});
        }
    }
  }
  CHECK(files > 100);
  CHECK(page_files > 40);  // the page's sources and its scripts beside them were read
  // The list holds no exception that is gone (it shrinks with the code).
  for (const auto& entry : known)  // not a structured binding: INFO captures `file`
    for (const std::string& id : entry.second) {
      const std::string& file = entry.first;
      INFO(file << " is listed for '" << id << "' but no longer names it: remove it from the list");
      CHECK(found.count({file, id}) == 1);
    }
}
