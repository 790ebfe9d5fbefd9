#include "runtime/vulkan/kernel_plan.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <vector>

#include "quant/block32_formats.h"
#include "runtime/vulkan/kquant_layout.h"
#include "runtime/vulkan/pipeline.h"

namespace kiln::vk {

bool int8_decode_type(DType type) {
  return type == DType::Q8_0 || type == DType::Q4_0 || is_block32_format(type) || gpu_kquant(type);
}

bool int_dot_prefill_type(DType type) {
  return type == DType::Q8_0 || type == DType::Q4_0 || type == DType::Q5_0 || type == DType::IQ4_NL ||
         type == DType::IQ4_XS;
}

namespace {

constexpr uint32_t kVendorNvidia = 0x10DE, kVendorAmd = 0x1002, kVendorIntel = 0x8086;

// What a family gets beyond what its device reports: the cross-workgroup tricks. They are on only
// where they were measured correct and faster, NVIDIA's own driver on an H100 (PERFORMANCE.md,
// "Device plans"). Vulkan's memory model does not promise that a workgroup waiting on a counter
// ever runs beside the ones it waits for, nor that it sees their writes without a barrier; RDNA's
// per-CU caches are not coherent, and on a 780M decode is at the memory wall anyway (~1 % to win).
// Every other device orders decode with pipeline barriers.
struct FamilyRow {
  DeviceFamily family;
  const char* name;
  bool stage_flags;        // KernelPlan::stage_flags
  bool run_ahead;          // KernelPlan::run_ahead
  bool early_part;         // KernelPlan::early_part (needs stage flags)
  bool down_groups_of_96;  // KernelPlan::down_groups_of_96
};
constexpr FamilyRow kFamilies[] = {
    {DeviceFamily::Nvidia, "nvidia", true, true, true, true},
    {DeviceFamily::Amd, "amd", false, false, false, false},  // RDNA (the 780M) and GCN alike
    {DeviceFamily::Intel, "intel", false, false, false, false},
    {DeviceFamily::Cpu, "cpu", false, false, false, false},  // lavapipe, SwiftShader
    {DeviceFamily::Other, "other", false, false, false, false},
};

const FamilyRow& row_of(DeviceFamily f) {
  for (const FamilyRow& r : kFamilies)
    if (r.family == f) return r;
  return kFamilies[std::size(kFamilies) - 1];
}

// --- Parsing the tuning keys ---

[[noreturn]] void bad_value(const std::string& key, const std::string& value, const char* expected) {
  throw Error("Vulkan tuning: " + key + "=" + value + ": expected " + expected);
}

bool parse_bool(const std::string& key, const std::string& v) {
  if (v == "1") return true;
  if (v == "0") return false;
  bad_value(key, v, "0 or 1");
}

uint64_t parse_uint(const std::string& key, const std::string& v, uint64_t lo, uint64_t hi, const char* expected) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
  if (v.empty() || v[0] == '-' || *end || errno || n < lo || n > hi) bad_value(key, v, expected);
  return n;
}

double parse_fraction(const std::string& key, const std::string& v) {
  char* end = nullptr;
  const double f = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || !(f >= 0.0 && f <= 1.0)) bad_value(key, v, "a fraction from 0 to 1");
  return f;
}

// "wg,rows,tpr": workgroups of 32..256 invocations in groups of tpr, each group `rows` rows.
MatvecShape parse_shape(const std::string& key, const std::string& v, bool even_rows) {
  const char* expected = even_rows ? "wg,rows,tpr with 32 <= wg <= 256, tpr dividing wg and rows even"
                                   : "wg,rows,tpr with 32 <= wg <= 256 and tpr dividing wg";
  uint32_t n[3] = {0, 0, 0};
  size_t at = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t end = i < 2 ? v.find(',', at) : v.size();
    if (end == std::string::npos) bad_value(key, v, expected);
    n[i] = uint32_t(parse_uint(key, v.substr(at, end - at), 1, 1024, expected));
    at = end + 1;
  }
  const MatvecShape s{n[0], n[1], n[2]};
  if (s.wg < 32 || s.wg > 256 || s.wg % s.tpr != 0 || (even_rows && s.rows % 2 != 0)) bad_value(key, v, expected);
  return s;
}

struct Key {
  const char* name;
  const char* values;
  std::function<void(TuningOverrides&, const std::string& key, const std::string& value)> set;
};

auto flag(std::optional<bool> TuningOverrides::*field) {
  return [field](TuningOverrides& o, const std::string& k, const std::string& v) { o.*field = parse_bool(k, v); };
}
auto count(std::optional<uint32_t> TuningOverrides::*field, uint32_t lo, uint32_t hi, const char* expected) {
  return [=](TuningOverrides& o, const std::string& k, const std::string& v) {
    o.*field = uint32_t(parse_uint(k, v, lo, hi, expected));
  };
}
auto shape(std::optional<MatvecShape> TuningOverrides::*field, bool even_rows) {
  return [=](TuningOverrides& o, const std::string& k, const std::string& v) { o.*field = parse_shape(k, v, even_rows); };
}

// Named after the KILN_VK_* environment variables they replace, without the prefix.
const std::vector<Key>& keys() {
  static const std::vector<Key> k = {
      {"family", "nvidia|amd|intel|cpu|other",
       [](TuningOverrides& o, const std::string& key, const std::string& v) {
         for (const FamilyRow& r : kFamilies)
           if (v == r.name) {
             o.family = r.family;
             return;
           }
         bad_value(key, v, "nvidia, amd, intel, cpu or other");
       }},
      {"stage_flags", "0|1", flag(&TuningOverrides::stage_flags)},
      {"run_ahead", "0|1", flag(&TuningOverrides::run_ahead)},
      {"early_part", "0..1",
       [](TuningOverrides& o, const std::string& key, const std::string& v) { o.early_part = parse_fraction(key, v); }},
      {"wide_norm", "0|1", flag(&TuningOverrides::wide_norm)},
      {"wide_norm_wg", "N",
       [](TuningOverrides& o, const std::string& key, const std::string& v) {
         const char* expected = "an even number from 2 to 1024";
         o.wide_norm_wg = uint32_t(parse_uint(key, v, 2, 1024, expected));
         if (*o.wide_norm_wg % 2) bad_value(key, v, expected);
       }},
      {"down_groups_96", "0|1", flag(&TuningOverrides::down_groups_of_96)},
      {"int8_dot", "0|1", flag(&TuningOverrides::int8_dot)},
      {"staged", "0|1", flag(&TuningOverrides::staged)},
      {"staged_max_blocks", "N", count(&TuningOverrides::staged_max_blocks, 1, 1u << 20, "a positive number")},
      {"qact", "0|1", flag(&TuningOverrides::qact)},
      {"matvec", "wg,rows,tpr", shape(&TuningOverrides::matvec, false)},
      {"matvec_down", "wg,rows,tpr", shape(&TuningOverrides::matvec_down, false)},
      {"matvec_glu", "wg,rows,tpr", shape(&TuningOverrides::matvec_glu, true)},
      {"matvec_qin", "wg,rows,tpr", shape(&TuningOverrides::matvec_qin, false)},
      {"coopmat", "0|1", flag(&TuningOverrides::coopmat)},
      {"prefill", "khr_coopmat|nv_coopmat|int_dot|fp32",
       [](TuningOverrides& o, const std::string& key, const std::string& v) {
         for (Prefill p : {Prefill::KhrCoopmat, Prefill::NvCoopmat, Prefill::IntDot, Prefill::Fp32})
           if (v == prefill_name(p)) {
             o.prefill = p;
             return;
           }
         bad_value(key, v, "khr_coopmat, nv_coopmat, int_dot or fp32");
       }},
      {"coop_split", "1..4", count(&TuningOverrides::coop_split, 1, 4, "1, 2, 3 or 4")},
      {"coop_input", "f16|f32",
       [](TuningOverrides& o, const std::string& key, const std::string& v) {
         if (v != "f16" && v != "f32") bad_value(key, v, "f16 or f32");
         o.coop_half_input = v == "f16";
       }},
      {"coop_sums", "f16|f32",
       [](TuningOverrides& o, const std::string& key, const std::string& v) {
         if (v != "f16" && v != "f32") bad_value(key, v, "f16 or f32");
         o.coop_half_sums = v == "f16";
       }},
      {"coop_attention", "0|1", flag(&TuningOverrides::coop_attention)},
      {"prefill_queries", "0|4|8|16",
       [](TuningOverrides& o, const std::string& key, const std::string& v) {
         const uint32_t n = uint32_t(parse_uint(key, v, 0, 16, "0, 4, 8 or 16"));
         if (n != 0 && n != 4 && n != 8 && n != 16) bad_value(key, v, "0, 4, 8 or 16");
         o.prefill_queries = n;
       }},
      {"attention_split", "N", count(&TuningOverrides::attention_split, 16, 1u << 20, "a number of keys, at least 16")},
      {"max_chunk_bytes", "N",
       [](TuningOverrides& o, const std::string& key, const std::string& v) {
         o.max_chunk_bytes = parse_uint(key, v, 256, UINT64_MAX, "a number of bytes, at least 256");
       }},
      {"force_staging", "0|1", flag(&TuningOverrides::force_staging)},
      {"max_logit_rows", "N", count(&TuningOverrides::max_logit_rows, 1, 1u << 20, "a positive number")},
      {"step_items", "2..16", count(&TuningOverrides::step_items, 2, 16, "2 to 16")},
      {"items_rows", "1..16", count(&TuningOverrides::items_rows, 1, 16, "1 to 16")},
      {"matvec_max_tokens", "1..16", count(&TuningOverrides::matvec_max_tokens, 1, 16, "1 to 16")},
      {"items_pass", "2|4|8|16",
       [](TuningOverrides& o, const std::string& key, const std::string& v) {
         const uint32_t n = uint32_t(parse_uint(key, v, 2, 16, "2, 4, 8 or 16"));
         if (n & (n - 1)) bad_value(key, v, "2, 4, 8 or 16");
         o.items_pass = n;
       }},
      {"fence_poll", "0|1", flag(&TuningOverrides::fence_poll)},
      {"stage_backoff", "N", count(&TuningOverrides::stage_backoff, 0, 1u << 16, "a number from 0 to 65536")},
      {"stage_barrier_before", "op,op,...",
       [](TuningOverrides& o, const std::string&, const std::string& v) { o.stage_barrier_before = v; }},
      {"warmup", "N", count(&TuningOverrides::warmup, 0, 512, "a number of tokens from 0 to 512")},
      {"stage_flags_test_give_up", "0|1",
       [](TuningOverrides& o, const std::string& key, const std::string& v) {
         o.stage_flags_test_give_up = parse_bool(key, v);
       }},
  };
  return k;
}

}  // namespace

const char* family_name(DeviceFamily f) { return row_of(f).name; }

const char* prefill_name(Prefill p) {
  switch (p) {
    case Prefill::NvCoopmat: return "nv_coopmat";
    case Prefill::KhrCoopmat: return "khr_coopmat";
    case Prefill::IntDot: return "int_dot";
    default: return "fp32";
  }
}

bool khr_coopmat_built() { return kernel_built("matmul_coop_khr_q4_0"); }

DeviceFamily family_of(const PhysicalDeviceInfo& d) {
  if (d.cpu_implementation) return DeviceFamily::Cpu;
  switch (d.properties.vendorID) {
    // The tricks were measured on NVIDIA's own driver; NVK (Mesa) on the same GPU is another
    // implementation of the memory model, so it takes the portable plan.
    case kVendorNvidia: return d.driver_id == VK_DRIVER_ID_NVIDIA_PROPRIETARY ? DeviceFamily::Nvidia : DeviceFamily::Other;
    case kVendorAmd: return DeviceFamily::Amd;  // RADV and AMDVLK
    case kVendorIntel: return DeviceFamily::Intel;
    default: return DeviceFamily::Other;
  }
}

TuningOverrides parse_tuning(const VulkanTuning& tuning) {
  TuningOverrides o;
  for (const auto& [key, value] : tuning) {
    const auto& all = keys();
    const auto it = std::find_if(all.begin(), all.end(), [&](const Key& k) { return key == k.name; });
    if (it == all.end()) {
      std::string valid;
      for (const Key& k : all) valid += (valid.empty() ? "" : ", ") + std::string(k.name) + "=" + k.values;
      throw Error("Vulkan tuning: unknown key '" + key + "' (valid: " + valid + ")");
    }
    it->set(o, key, value);
  }
  return o;
}

KernelPlan plan_for(const PhysicalDeviceInfo& d, const TuningOverrides& o) {
  KernelPlan p;
  p.family = o.family.value_or(family_of(d));
  const FamilyRow& row = row_of(p.family);
  p.cpu_device = d.cpu_implementation;
  p.subgroup_size = d.subgroup_size;

  // Int8 dot products where the GPU has them (PERFORMANCE.md); an emulated dot is slower than the
  // fp32 path, so lavapipe takes it only when asked. Each later int8 step needs the one before.
  p.int8_dot = d.int8_dot && o.int8_dot.value_or(d.int8_dot_fast);
  p.staged_matvec = p.int8_dot && o.staged.value_or(true);
  p.max_staged_blocks = o.staged_max_blocks.value_or(p.max_staged_blocks);
  p.quantized_act = p.staged_matvec && d.subgroup_shuffle && d.subgroup_size >= 8 && o.qact.value_or(true);
  p.forced = o.matvec.value_or(p.forced);
  p.forced_glu = o.matvec_glu.value_or(p.forced_glu);
  p.forced_qin = o.matvec_qin.value_or(p.forced_qin);
  p.forced_down = o.matvec_down.value_or(p.forced_down);
  p.down_groups_of_96 = o.down_groups_of_96.value_or(row.down_groups_of_96);

  // KHR first where the device and the build have it: on the H100 the same kernel ran pp512 10-17 %
  // faster through KHR than through NV (PERFORMANCE.md, "Prefill on VK_KHR_cooperative_matrix").
  // NV's stays for builds without Debian 13's glslc and drivers without the KHR extension.
  const bool nv = d.coop_matrix_f16, khr = d.coop_khr_f16 && khr_coopmat_built();
  // Without tensor cores, int8 tiles where the int8 decode kernels run (int8_dot, above: hardware
  // dots, or int8_dot=1). Lavapipe's emulated dots would be faster here too (a 27B layer's matrices,
  // bench_matmul_i8 --quick: 2.7 s against 8.0 s of fp32 tiles), but the int8 activations took the
  // K-quant GGUFs' logits past their bound from llama.cpp's (5.3e-2 against 5e-2; tests/gguf), so
  // lavapipe's default stays fp32 and CI tests the int8 tiles through prefill=int_dot.
  const bool int_dot = d.int8_dot;
  const Prefill no_coop = p.int8_dot ? Prefill::IntDot : Prefill::Fp32;
  const Prefill best = khr ? Prefill::KhrCoopmat : nv ? Prefill::NvCoopmat : no_coop;
  Prefill want = o.prefill.value_or(best);
  if (o.coopmat == false && want != Prefill::IntDot) want = Prefill::Fp32;  // coopmat=0: fp32 tiles, as before
  // Capabilities cannot be forced: a path the device (or build) lacks gives fp32 tiles.
  if ((want == Prefill::NvCoopmat && !nv) || (want == Prefill::KhrCoopmat && !khr) || (want == Prefill::IntDot && !int_dot))
    want = Prefill::Fp32;
  p.prefill = want;
  p.coop_matmul = want == Prefill::NvCoopmat || want == Prefill::KhrCoopmat;
  p.coop_half_input = p.coop_matmul && o.coop_half_input.value_or(true);
  p.coop_half_sums = want == Prefill::KhrCoopmat && p.coop_half_input && d.coop_khr_f16_sums &&
                     o.coop_half_sums.value_or(false);
  p.forced_coop_splits = int(o.coop_split.value_or(0));
  p.coop_attention = want == Prefill::KhrCoopmat && o.coop_attention.value_or(true);

  p.prefill_attention_queries = o.prefill_queries.value_or(p.prefill_attention_queries);
  if (!p.cpu_device) p.norm_wg = 512;  // one workgroup a token: more invocations, shorter chains

  p.stage_flags = o.stage_flags.value_or(row.stage_flags);
  p.run_ahead = o.run_ahead.value_or(row.run_ahead);
  // The early part is a wait on gate_up's counters inside down's kernel: nothing without flags.
  const bool early = p.stage_flags && (o.early_part ? *o.early_part > 0 : row.early_part);
  p.early_part_q4_0 = early ? o.early_part.value_or(0.6) : 0.0;
  p.early_part_q8_0 = early ? o.early_part.value_or(0.0) : 0.0;
  // The wide add_norm is no cross-workgroup trick: o and down leave their sums in slots, and the
  // add_norm reads them after a pipeline barrier, as any dispatch reads the one before. So every
  // family takes it where activations are int8 (H100, portable plan: 109.4-109.5 -> 113.7 tok/s).
  p.wide_norm = p.quantized_act && o.wide_norm.value_or(true);
  p.wide_norm_wg = o.wide_norm_wg.value_or(p.cpu_device ? 64 : 128);
  // Decode attention in splits of 32 keys on every GPU: more workgroups for a short step of the
  // chain. H100, 27B Q4_0, 641 positions: with stage flags 105.9-107.0 tok/s against 103.6-103.8
  // for 64; with barriers (portable plan, 2026-11-26) 118.7-118.8 against 113.7, 16 117.1.
  // Lavapipe's threads are few: 64 there.
  p.attention_keys_per_split = o.attention_split.value_or(p.cpu_device ? 64 : 32);
  const StageWait wait = default_stage_wait(d);  // lavapipe's stays within its loop limit
  p.stage_spin_rounds = wait.spin_rounds;
  p.stage_backoff = d.cpu_implementation ? wait.backoff : o.stage_backoff.value_or(wait.backoff);

  p.force_staging = o.force_staging.value_or(false);
  p.max_chunk_bytes = o.max_chunk_bytes.value_or(UINT64_MAX);
  p.max_logit_rows = o.max_logit_rows.value_or(UINT32_MAX);
  p.max_step_items = o.step_items.value_or(p.max_step_items);
  p.items_rows = o.items_rows.value_or(0);
  p.items_pass = o.items_pass.value_or(p.items_pass);
  // Lavapipe's few threads run the items kernels' wide passes slower than its tiles (the bundled
  // model, 12 tokens: 21 tok/s against 56), so it keeps batches of 5 and more on tiles.
  p.matvec_max_tokens = int(o.matvec_max_tokens.value_or(p.cpu_device ? 4u : 16u));
  p.fence_poll = o.fence_poll.value_or(true);
  p.stage_barrier_before = o.stage_barrier_before.value_or("");
  p.warmup_tokens = int(o.warmup.value_or(uint32_t(p.matvec_max_tokens + 1)));
  p.stage_flags_test_give_up = o.stage_flags_test_give_up;
  return p;
}

MatvecShape KernelPlan::matvec_shape(DType type, int64_t rows, int64_t cols, bool glu) const {
  MatvecShape s;
  if (forced.wg) {
    s = forced;
  } else if (cpu_device) {
    s = {64, 2, 64};  // lavapipe: few, fat invocations
  } else {
    // Measured on an H100 over Gemma 3 27B's shapes (PERFORMANCE.md): 8 rows an invocation and
    // 64 invocations a row group led for the layer matrices in both formats; the 262k-row output
    // projection prefers groups of 32.
    s = {128, 8, 64};
    if (rows > 65536 || cols / kBlockSize < 64) s.tpr = 32;  // short rows (1B's 36 blocks) too
    // The int8 Q4_0 kernel streams its tall matrices (gate_up, the output projection) faster in
    // workgroups of 256 with groups of 32: 2026 vs 1907 and 2408 vs 2364 GB/s.
    if (int8_dot && type == DType::Q4_0 && rows > 32768 && cols / kBlockSize >= 64) s = {256, 8, 32};
  }
  if (glu && s.rows % 2) ++s.rows;  // gate and up rows in the same invocation
  return s;
}

MatvecShape KernelPlan::staged_shape(DType type, bool glu) const {
  if (forced.wg) return forced;
  if (cpu_device) return {64, 2, 64};
  // Best on an H100 over Gemma 3 27B's matrices (PERFORMANCE.md, "Activations staged in shared
  // memory"): GLU rows in groups of 64 invocations, the rest in groups of 32.
  if (type == DType::Q4_0) return glu ? MatvecShape{128, 8, 64} : MatvecShape{256, 8, 32};
  return glu ? MatvecShape{128, 4, 64} : MatvecShape{128, 4, 32};
}

MatvecShape KernelPlan::qin_shape(bool glu) const {
  if (forced.wg) return forced;
  if (glu && forced_glu.wg) return forced_glu;
  if (!glu && forced_qin.wg) return forced_qin;
  if (cpu_device && !glu) return {64, 2, 64};
  // H100, 27B (PERFORMANCE.md, "Int8 activations from their producers"): 4 rows an invocation in
  // groups of 64 led or came within 4 % on every matrix in both formats. GLU rows take 8 (a
  // workgroup writes whole groups of 8 outputs of the int8 form), in workgroups of 256: 123.8-124.0
  // tok/s Q4_0 against 123.3-123.4 for 128, Q8_0 84.5 against 84.2 (PERFORMANCE.md, "Eighth
  // session").
  return glu ? MatvecShape{256, 8, 64} : MatvecShape{128, 4, 64};
}

MatvecShape KernelPlan::down_shape(DType type) const {
  if (forced_down.wg) return forced_down;
  if (!down_groups_of_96 || forced.wg || cpu_device || type != DType::Q4_0 || subgroup_size == 0 ||
      96 % subgroup_size != 0)
    return qin_shape(false);
  return {192, 4, 96};
}

MatvecShape KernelPlan::items_shape(const MatvecShape& one_token, bool glu, uint32_t tokens, bool quantized) const {
  MatvecShape s = one_token;
  if (items_rows) s.rows = items_rows;
  else if (quantized) s.rows = 1;
  else s.rows = std::max<uint32_t>(1, std::min<uint32_t>(s.rows, 32 / std::max<uint32_t>(tokens, 2)));
  if (glu && s.rows % 2) ++s.rows;
  return s;
}

uint32_t KernelPlan::coop_splits(int64_t rows, int n, uint32_t max_splits) const {
  if (forced_coop_splits) return std::min<uint32_t>(uint32_t(forced_coop_splits), max_splits);
  // Aim at about 500 workgroups (an H100 has 132 SMs, two workgroups each): o and down at 512
  // tokens are 168 tiles, qkv's 256 and gate_up's 1344 need no split.
  const int64_t tiles = (rows + kCoopTile.rows - 1) / kCoopTile.rows * ((n + kCoopTile.tokens - 1) / kCoopTile.tokens);
  if (tiles >= 256) return 1;
  return uint32_t(std::clamp<int64_t>(504 / tiles, 1, max_splits));
}

GpuPlan KernelPlan::summary() const {
  GpuPlan s;
  s.family = family_name(family);
  s.prefill = prefill_name(prefill);
  s.prefill_sums = coop_half_sums ? "fp16" : "fp32";
  s.decode = quantized_act ? "int8_act" : staged_matvec ? "int8_staged" : int8_dot ? "int8_dot" : "fp32";
  s.stage_flags = stage_flags;
  s.run_ahead = run_ahead;
  s.subgroup_size = int(subgroup_size);
  return s;
}

}  // namespace kiln::vk
