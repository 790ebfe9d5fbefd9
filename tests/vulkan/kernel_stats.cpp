// What the driver made of each kernel: registers, shared memory, spills and the rest of
// VK_KHR_pipeline_executable_properties' statistics (NVIDIA and RADV report them). Occupancy
// follows from them: an H100 SM has 65 536 registers, so a workgroup of 256 invocations at more
// than 128 registers runs one to an SM (PERFORMANCE.md, "Prefill tiles: occupancy and fp16 sums").
// For tuning, not a test.
//
//   kernel_stats [--device N] NAME[:SPEC,SPEC,...] ...
// NAME is an embedded kernel (kernels/vulkan/CMakeLists.txt) or a coopvar_* layout, SPEC its
// specialization constants from id 0 on, as the engine passes them (model_kernels.cpp:
// matvec_items_* take wg,rows,tpr,tokens).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "kiln/types.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/pipeline.h"
#ifdef KILN_COOP_VARIANTS
#include "coop_variants_spirv_table.h"
#endif

namespace {

using namespace kiln;

// The engine's kernel, or a bench's layout of the prefill tile (bench_coop_variants).
std::span<const uint32_t> spirv_of(const std::string& name) {
#ifdef KILN_COOP_VARIANTS
  for (const auto& e : coop_variants::kTable)
    if (name == e.name) return {e.words, e.count};
#endif
  return vk::kernel_spirv(name);
}

// Storage-buffer bindings the SPIR-V declares: one past the largest Binding decoration.
uint32_t bindings_of(std::span<const uint32_t> words) {
  constexpr uint32_t kOpDecorate = 71, kDecorationBinding = 33;
  uint32_t n = 0;
  for (size_t i = 5; i < words.size();) {
    const uint32_t count = words[i] >> 16, op = words[i] & 0xFFFFu;
    if (count == 0) break;
    if (op == kOpDecorate && count >= 4 && words[i + 2] == kDecorationBinding) n = std::max(n, words[i + 3] + 1);
    i += count;
  }
  return n;
}

// "name:1,2,3" -> name, {1, 2, 3}.
std::pair<std::string, std::vector<uint32_t>> parse(const std::string& arg) {
  const size_t colon = arg.find(':');
  std::vector<uint32_t> spec;
  if (colon != std::string::npos)
    for (const char* p = arg.c_str() + colon + 1; *p;) {
      char* end = nullptr;
      spec.push_back(uint32_t(std::strtoul(p, &end, 10)));
      if (end == p || (*end && *end != ',')) throw Error("bad specialization list in " + arg);
      p = *end ? end + 1 : end;
    }
  return {arg.substr(0, colon), spec};
}

}  // namespace

int main(int argc, char** argv) {
  try {
    int index = -1, first = 1;
    if (argc > 2 && std::strcmp(argv[1], "--device") == 0) {
      index = std::atoi(argv[2]);
      first = 3;
    }
    if (first >= argc) {
      std::fprintf(stderr, "usage: kernel_stats [--device N] NAME[:SPEC,...] ...\n");
      return 2;
    }
    auto instance = std::make_shared<vk::Instance>();
    vk::Device device(instance, vk::choose_device(instance->devices(), index, true));
    std::printf("device: %s\n", device.info().report.name.c_str());
    if (!device.info().pipeline_statistics) {
      std::fprintf(stderr, "this driver does not offer VK_KHR_pipeline_executable_properties\n");
      return 1;
    }
    vk::PipelineLibrary pipelines(device, "", std::nullopt, true);
    for (int i = first; i < argc; ++i) {
      const auto [name, spec] = parse(argv[i]);
      const auto words = spirv_of(name);
      const vk::Kernel& k = pipelines.get(name, words, bindings_of(words), spec);
      std::printf("%s", argv[i]);
      for (const auto& [stat, value] : pipelines.statistics(k)) std::printf("  %s=%s", stat.c_str(), value.c_str());
      std::printf("\n");
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kernel_stats: %s\n", e.what());
    return 1;
  }
}
