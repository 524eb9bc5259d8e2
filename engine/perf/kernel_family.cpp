#include "perf/kernel_family.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "perf/calibrated_cost.hpp"
#include "presets/preset_store.hpp"

namespace sightline {

namespace {

HarnessPair read_pair(const ObjectReader& r, const std::string& key) {
  HarnessPair p;
  if (const json* v = r.find(key)) {
    ObjectReader pr(*v, r.child_path(key), {"tflops", "shape_from_tflops"});
    p.tflops = pr.number("tflops", 1e-3, 1e6);
    p.shape_from_tflops = pr.number("shape_from_tflops", 1e-3, 1e6);
  }
  return p;
}

KernelFamily read_family(const json& j, const std::string& path) {
  ObjectReader r(j, path,
                 {"id", "name", "source", "architectures", "shape_from", "reference_gpu", "citations", "not_cited", "gpus"});
  KernelFamily f;
  f.id = r.string("id");
  f.name = r.string("name");
  f.source = r.string("source");
  {
    ObjectReader c(r.required("citations"), r.child_path("citations"), {"gemm", "copy", "attention", "decode_attention"});
    f.citations = {c.string("gemm"), c.string("copy"), c.string("attention"),
                   c.find("decode_attention") ? c.string("decode_attention") : std::string()};
  }
  if (const json* n = r.find("not_cited")) {
    ObjectReader u(*n, r.child_path("not_cited"), family_uncited_mechanisms());
    for (const std::string& k : family_uncited_mechanisms())
      if (u.find(k)) f.not_cited[k] = u.string(k);
  }
  const json& archs = r.required("architectures");
  if (!archs.is_array()) fail(error_code::kType, r.child_path("architectures"), "architectures must be an array");
  for (const json& a : archs) f.architectures.push_back(a.get<std::string>());
  f.shape_from = r.string("shape_from");
  f.reference_gpu = r.string("reference_gpu");
  const json& gpus = r.required("gpus");
  require_object(gpus, r.child_path("gpus"));
  for (auto it = gpus.begin(); it != gpus.end(); ++it) {
    const std::string gp = pointer_append(r.child_path("gpus"), it.key());
    ObjectReader g(it.value(), gp,
                   {"gemm_max_achievable_tflops", "copy_bandwidth_GBps", "flash_attention_fwd", "standard_attention",
                    "decode_attention_bandwidth_GBps"});
    FamilyGpuFacts facts;
    if (const json* m = g.find("gemm_max_achievable_tflops")) {
      require_object(*m, g.child_path("gemm_max_achievable_tflops"));
      for (auto d = m->begin(); d != m->end(); ++d) {
        if (!is_dtype_name(d.key()))
          fail(error_code::kConstraint, pointer_append(g.child_path("gemm_max_achievable_tflops"), d.key()),
               "unknown dtype '" + d.key() + "'");
        facts.gemm_max_achievable_tflops[d.key()] =
            read_number(d.value(), pointer_append(g.child_path("gemm_max_achievable_tflops"), d.key()), 1e-3, 1e6);
      }
    }
    facts.copy_bandwidth_GBps = g.number("copy_bandwidth_GBps", 0, 1e6, 0);
    facts.flash_attention_fwd = read_pair(g, "flash_attention_fwd");
    facts.standard_attention = read_pair(g, "standard_attention");
    facts.decode_attention_bandwidth_GBps = g.number("decode_attention_bandwidth_GBps", 0, 1e6, 0);
    if (facts.decode_attention_bandwidth_GBps > 0 && f.citations.decode_attention.empty())
      fail(error_code::kConstraint, g.child_path("decode_attention_bandwidth_GBps"),
           "a decode-attention figure needs its citation under citations/decode_attention");
    f.gpus[it.key()] = facts;
  }
  if (!f.gpus.count(f.reference_gpu))
    fail(error_code::kConstraint, r.child_path("reference_gpu"), "the reference GPU must have facts under gpus");
  return f;
}

const std::vector<KernelFamily>& family_index() {
  static const std::vector<KernelFamily> index = [] {
    std::vector<KernelFamily> out;
    for (const json* p : list_presets("kernel_families"))
      out.push_back(read_family(*p, "/kernel_families/" + p->at("id").get<std::string>()));
    return out;
  }();
  return index;
}

double bf16_peak(const GpuSpec& g) { return g.peak_tflops.bf16 > 0 ? g.peak_tflops.bf16 : g.peak_tflops.fp16; }

// This GPU's own facts are those of the family GPU with its very values (the
// facts were measured on that spec sheet), whatever the GPU is called; nullptr
// when none matches. `id` receives the family GPU's id.
const FamilyGpuFacts* own_facts(const KernelFamily& family, const GpuSpec& gpu, std::string* id) {
  for (const auto& [gpu_id, facts] : family.gpus)
    if (find_preset("gpus", gpu_id) &&
        spec_distance(read_gpu(json(gpu_id), "/kernel_families/" + family.id + "/gpus"), gpu) == 0) {
      if (id) *id = gpu_id;
      return &facts;
    }
  return nullptr;
}

// The decode-attention figures that price `gpu`: its own when the family
// has one, else those of the family GPUs of its architecture (the same die
// runs the same kernels: their level carries as a fraction of HBM peak),
// by family GPU id; empty when none.
using DecodeFigures = std::vector<std::pair<std::string, const FamilyGpuFacts*>>;
DecodeFigures decode_figures_for(const KernelFamily& family, const GpuSpec& gpu) {
  std::string mine_id;
  const FamilyGpuFacts* mine = own_facts(family, gpu, &mine_id);
  if (mine && mine->decode_attention_bandwidth_GBps > 0) return {{mine_id, mine}};
  DecodeFigures same_die;
  for (const auto& [gpu_id, facts] : family.gpus)
    if (facts.decode_attention_bandwidth_GBps > 0 && find_preset("gpus", gpu_id) &&
        read_gpu(json(gpu_id), "/kernel_families/" + family.id + "/gpus/" + gpu_id).architecture == gpu.architecture)
      same_die.emplace_back(gpu_id, &facts);
  return same_die;
}

// Decode attention from a cited figure: the paged decode kernel's achieved
// HBM bandwidth as a fraction of the measured GPU's HBM peak (the median of
// the figures of its architecture when it has none of its own) replaces the
// shape GPU's decode efficiency scaled by copy bandwidth. Streaming the KV
// cache is what the kernel does at long contexts, so the figure is its level;
// the launch cost stays the shape GPU's.
void apply_decode_attention_figure(const KernelFamily& family, const DecodeFigures& figures, KernelCalibration& c) {
  std::vector<double> fractions;
  std::string ids;
  for (const auto& [gpu_id, facts] : figures) {
    const std::string path = "/kernel_families/" + family.id + "/gpus/" + gpu_id;
    const GpuSpec measured = read_gpu(json(gpu_id), path);
    if (facts->decode_attention_bandwidth_GBps > measured.hbm_bandwidth_GBps)
      fail(error_code::kConstraint, path + "/decode_attention_bandwidth_GBps",
           "the decode-attention bandwidth exceeds the GPU's HBM bandwidth");
    fractions.push_back(facts->decode_attention_bandwidth_GBps / measured.hbm_bandwidth_GBps);
    ids += (ids.empty() ? "" : ", ") + gpu_id;
  }
  std::sort(fractions.begin(), fractions.end());
  const size_t n = fractions.size();
  MemoryKernelParams& d = c.memory.at(KernelClass::AttentionDecode);
  d.eta_memory = n % 2 ? fractions[n / 2] : (fractions[n / 2 - 1] + fractions[n / 2]) / 2;
  d.provenance = "anchored: " + family.shape_from + " decode-attention launch cost, level from " + ids +
                 "'s achieved paged decode-attention bandwidth as a fraction of HBM peak (" + family.id +
                 " family: " + family.citations.decode_attention + ")";
}

}  // namespace

const std::vector<std::string>& family_uncited_mechanisms() {
  static const std::vector<std::string> names = {"grouped_gemm", "decode_attention", "prefill_attention", "all_to_all",
                                                 "host"};
  return names;
}

bool family_cites_for(const KernelFamily& family, const GpuSpec& gpu, const std::string& mechanism) {
  return mechanism == "decode_attention" && !decode_figures_for(family, gpu).empty();
}

const KernelFamily* find_kernel_family(const std::string& architecture) {
  for (const KernelFamily& f : family_index())
    if (std::find(f.architectures.begin(), f.architectures.end(), architecture) != f.architectures.end()) return &f;
  return nullptr;
}

KernelCalibration family_calibration(const KernelFamily& family, const GpuSpec& gpu) {
  const KernelCalibration* shape = find_calibration(family.shape_from);
  if (!shape) fail(error_code::kConstraint, "/kernel_families/" + family.id + "/shape_from",
                   "no calibration ships for '" + family.shape_from + "'");
  const GpuSpec shape_gpu = read_gpu(json(family.shape_from), "/kernel_families/" + family.id + "/shape_from");
  // Each fact from this GPU when the family has it, else from the reference
  // GPU; either way taken as a fraction of that GPU's own spec sheet.
  const FamilyGpuFacts& ref = family.gpus.at(family.reference_gpu);
  const GpuSpec ref_gpu = read_gpu(json(family.reference_gpu), "/kernel_families/" + family.id + "/reference_gpu");
  std::string mine_id;
  const FamilyGpuFacts* mine = own_facts(family, gpu, &mine_id);
  const bool own_gemm = mine && !mine->gemm_max_achievable_tflops.empty();
  const FamilyGpuFacts& gemm_facts = own_gemm ? *mine : ref;
  const GpuSpec& gemm_gpu = own_gemm ? gpu : ref_gpu;
  const bool own_copy = mine && mine->copy_bandwidth_GBps > 0;
  const double copy_eta = own_copy ? mine->copy_bandwidth_GBps / gpu.hbm_bandwidth_GBps
                                   : ref.copy_bandwidth_GBps / ref_gpu.hbm_bandwidth_GBps;

  // Memory classes: the shape GPU's efficiencies times the ratio of the two
  // copy-bandwidth fractions (the transfer rule's own memory scaling).
  KernelCalibration c = transfer_calibration(*shape, shape_gpu, gpu, copy_eta);
  const std::string from = own_gemm ? mine_id : family.reference_gpu;
  c.source = family.name + " (presets/kernel_families/" + family.id + "): " + family.shape_from +
             "'s measured curve shapes, levels from kernel-level facts of " + from + " as fractions of peak";

  // GEMM: the efficiency level moves by the ratio of max-achievable
  // fractions, per dtype; the tiles and the blend stay the shape GPU's.
  // The shape GPU's best-over-shapes ceilings stand for its MAF.
  const double shape_bf16_frac = shape->gemm.ceiling_tflops.count("bf16")
                                     ? shape->gemm.ceiling_tflops.at("bf16") / bf16_peak(shape_gpu)
                                     : shape->gemm.eta_compute;
  auto frac_ratio = [&](const std::string& dtype, double maf) {
    const Dtype d = parse_dtype(dtype);
    const double peak = gemm_gpu.peak_tflops_for(d);
    auto ceiling = shape->gemm.ceiling_tflops.find(dtype);
    const double shape_frac = ceiling != shape->gemm.ceiling_tflops.end() && shape_gpu.peak_tflops_for(d) > 0
                                  ? ceiling->second / shape_gpu.peak_tflops_for(d)
                                  : shape_bf16_frac;
    return peak > 0 ? (maf / peak) / shape_frac : 1.0;
  };
  const auto& maf = gemm_facts.gemm_max_achievable_tflops;
  const double level = maf.count("bf16") ? frac_ratio("bf16", maf.at("bf16")) : 1.0;
  c.gemm.eta_compute = shape->gemm.eta_compute * level;
  c.gemm.ceiling_tflops.clear();
  for (const auto& [dtype, tflops] : maf) {
    const Dtype d = parse_dtype(dtype);
    auto s = shape->gemm.dtype_scale.find(dtype);
    const double shape_scale = s == shape->gemm.dtype_scale.end() ? 1.0 : s->second;
    if (dtype != "bf16") c.gemm.dtype_scale[dtype] = shape_scale * frac_ratio(dtype, tflops) / level;
    // No shape runs faster than the max-achievable figure, moved to this GPU's peak.
    const double peak = gemm_gpu.peak_tflops_for(d);
    if (peak > 0 && gpu.peak_tflops_for(d) > 0) c.gemm.ceiling_tflops[dtype] = tflops / peak * gpu.peak_tflops_for(d);
  }
  c.gemm.ceiling_source = "max-achievable GEMM TFLOP/s of " + from + " (" + family.id +
                          " family), as the same fraction of this GPU's peak";
  c.gemm.provenance = "anchored: " + family.shape_from + " GEMM shape, level from " + from +
                      "'s max-achievable GEMM TFLOP/s (" + family.id + " family: " + family.citations.gemm + ")";

  // Attention: the curves move by the harness ratio of attention fractions.
  auto ratio = [&](const HarnessPair& p) {
    return (p.tflops / bf16_peak(ref_gpu)) / (p.shape_from_tflops / bf16_peak(shape_gpu));
  };
  const double flash = ref.flash_attention_fwd.tflops > 0 ? ratio(ref.flash_attention_fwd) : level;
  const double standard = ref.standard_attention.tflops > 0 ? ratio(ref.standard_attention) : level;
  for (double& e : c.attention.flash_fwd.eta) e *= flash;
  for (double& e : c.attention.flash_bwd.eta) e *= flash;  // no backward figure: the forward's ratio
  for (double& e : c.attention.standard.eta) e *= standard;
  c.attention.provenance = "anchored: " + family.shape_from + " attention curves, level from " +
                           family.reference_gpu + "'s attention throughput in the same harness (" + family.id +
                           " family: " + family.citations.attention + ")";
  const std::string memory = "anchored: " + family.shape_from + " memory efficiencies scaled by " +
                             (own_copy ? mine_id : family.reference_gpu) + "'s copy bandwidth (" + family.id +
                             " family: " + family.citations.copy + ")";
  for (auto& [k, p] : c.memory) p.provenance = memory;
  const auto decode_figures = decode_figures_for(family, gpu);
  if (!decode_figures.empty()) apply_decode_attention_figure(family, decode_figures, c);
  return c;
}

}  // namespace sightline
