// kiln info: what a model is (without loading its weights) and what the machine offers.
#include <cstdio>

#include "cli/common.h"
#include "common/printable.h"
#include "kiln/hardware.h"
#include "runtime/cpu/matmul_kernels.h"
#include "runtime/cpu/thread_pool.h"

namespace kiln::cli {
namespace {

std::string gib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / (1024.0 * 1024 * 1024));
  if (bytes < (1ull << 30)) std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1024.0 * 1024));
  return buf;
}

void print_model(const ModelInfo& i) {
  std::printf("model          %s\n", i.path.c_str());
  std::printf("architecture   %s (%s)\n", i.architecture.c_str(), i.source_format.c_str());
  std::printf("parameters     %.3f B (%llu)\n", double(i.parameter_count) / 1e9, (unsigned long long)i.parameter_count);
  std::printf("layers         %d (%d global, %d sliding-window of %d)\n", i.layers, i.global_layers,
              i.layers - i.global_layers, i.sliding_window);
  std::printf("hidden / ffn   %d / %d\n", i.hidden, i.ffn);
  std::printf("heads          %d query, %d key/value, head dim %d\n", i.heads, i.kv_heads, i.head_dim);
  std::printf("vocabulary     %d\n", i.vocab);
  std::printf("context        %d tokens\n", i.max_context);
  if (i.vision)
    std::printf("vision         %d image tokens of %dx%d pixels, tower from %s (loaded on the first image)\n",
                i.image_tokens, i.image_size, i.image_size, printable(i.vision_source).c_str());
  else
    std::printf("vision         none (text only)\n");
  if (!i.stored_types.empty()) {
    std::string types;
    for (const auto& [type, count] : i.stored_types)
      types += (types.empty() ? "" : ", ") + type + " x" + std::to_string(count);
    std::printf("stored as      %s tensors\n", types.c_str());
  }
  std::printf("memory         f32 %s, f16 %s, q8_0 %s, q4_0 %s\n", gib(i.bytes_f32).c_str(), gib(i.bytes_f16).c_str(),
              gib(i.bytes_q8_0).c_str(), gib(i.bytes_q4_0).c_str());
  std::printf("\nsetting                  value              from\n");
  for (const SettingOrigin& s : i.settings)
    std::printf("%-24s %-18s %s\n", s.name.c_str(), printable(s.value).c_str(), printable(s.origin).c_str());
  for (const std::string& note : i.notes) std::printf("note: %s\n", printable(note).c_str());
}

void print_hardware(const HardwareInfo& h) {
  std::printf("cpu            %s, %d cores\n", h.cpu_model.c_str(), h.cpu_cores);
  // What the CPU backend would run with (matmul_kernels.h, thread_pool.h).
  const MatmulKernels kernels = best_matmul_kernels();
  std::printf("               kernels %s, %d threads by default (one per physical core)\n", kernels.name,
              default_thread_count());
  // BF16 weights' products differ by set: say which rounding a user gets.
  std::printf("               %s\n", kernels.dot_rows_bf16
                                          ? "BF16 weights: vdpbf16ps, activations rounded to bf16 (8 significant bits)"
                                          : "BF16 weights: widened to fp32, fp32 activations");
  std::printf("memory         %s total, %s available\n", gib(h.ram_total).c_str(), gib(h.ram_available).c_str());
  if (!h.vulkan_status.empty()) std::printf("vulkan         %s\n", h.vulkan_status.c_str());
  for (const GpuDevice& g : h.gpus) {
    std::printf("gpu %d          %s (%s, %s)%s%s\n", g.index, g.name.c_str(), g.type.c_str(), g.api_version.c_str(),
                g.usable ? "" : " - not used: ", g.usable ? "" : g.refusal.c_str());
    for (const MemoryHeap& heap : g.heaps)
      std::printf("               heap %s%s\n", gib(heap.size).c_str(), heap.device_local ? " device-local" : "");
    // The optional features that change which kernels run.
    std::string f;
    auto add = [&f](bool on, const char* what) { if (on) f += (f.empty() ? "" : ", ") + std::string(what); };
    add(g.fp16, "fp16 arithmetic");
    add(g.integer_dot, g.integer_dot_fast ? "int8 dot products (hardware)" : "int8 dot products (emulated)");
    add(g.cooperative_matrix, "fp16 cooperative matrices");
    std::printf("               features %s\n", f.empty() ? "none of the optional ones" : f.c_str());
    if (g.plan) {  // what a load would decide for Q8_0/Q4_0 weights (kernel_plan.h)
      const GpuPlan& p = *g.plan;
      std::printf("               plan     %s family: prefill %s, decode %s, %s%s, subgroup size %d\n",
                  p.family.c_str(), p.prefill.c_str(), p.decode.c_str(),
                  p.stage_flags ? "stage flags" : "pipeline barriers", p.run_ahead ? ", steps run ahead" : "",
                  p.subgroup_size);
    }
  }
  if (h.npu.present) {
    std::printf("npu            %s at %s (XRT %s)\n", h.npu.generation.c_str(), h.npu.device_path.c_str(),
                h.npu.xrt_version.empty() ? "not found" : h.npu.xrt_version.c_str());
    if (!h.npu.reason.empty()) std::printf("               not used: %s\n", h.npu.reason.c_str());
  }
  else
    std::printf("npu            none: %s\n", h.npu.reason.c_str());
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Describe a model (config only) and/or the hardware");
  auto model = std::make_shared<std::string>();
  auto hardware = std::make_shared<bool>(false);
  cmd->add_option("-m,--model", *model, "Model folder or .gguf file; default: the bundled model");
  cmd->add_flag("--hardware", *hardware, "Describe the CPU, memory, Vulkan devices and NPU");
  cmd->callback([=] {
    if (*hardware) {
      print_hardware(probe_hardware());
      if (model->empty()) return;
      std::printf("\n");
    }
    print_model(Engine::inspect(*model));
  });
}

}  // namespace kiln::cli
