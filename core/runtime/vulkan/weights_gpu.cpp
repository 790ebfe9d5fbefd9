#include "runtime/vulkan/weights_gpu.h"

#include <algorithm>
#include <string>

#include "kiln/types.h"
#include "quant/convert.h"

namespace kiln::vk {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

// Norm vectors packed into one buffer, each starting at a multiple of 4 floats (vec4 loads).
struct NormPacker {
  std::vector<float> data;
  uint32_t add(const std::vector<float>& v) {
    const uint32_t at = uint32_t(data.size());
    data.insert(data.end(), v.begin(), v.end());
    data.resize((data.size() + 3) / 4 * 4, 0.0f);
    return at;
  }
};

// gate and up interleave row by row into one GLU matrix, so they must share a type. Where a file
// mixes them (no llama.cpp preset does for Gemma 3; a hand-made mix might), both are converted to
// Q8_0 here, whose rounding is about a tenth of any K-quant's.
struct GluPair {
  const Matrix &gate, &up;
  DType type;
  std::vector<uint8_t> gate_q8, up_q8;  // [rows][row_bytes(Q8_0, cols)] when converted
  GluPair(const Matrix& g, const Matrix& u) : gate(g), up(u), type(g.type) {
    if (g.type == u.type) return;
    type = DType::Q8_0;
    gate_q8 = to_q8_0(g);
    up_q8 = to_q8_0(u);
  }
  const uint8_t* row(int64_t r) const {  // row r of [gate0, up0, gate1, ...]
    const Matrix& m = r % 2 == 0 ? gate : up;
    if (type == m.type) return m.row(r / 2);
    return (r % 2 == 0 ? gate_q8 : up_q8).data() + (r / 2) * row_bytes(DType::Q8_0, m.cols);
  }
  static std::vector<uint8_t> to_q8_0(const Matrix& m) {
    const size_t out_row = row_bytes(DType::Q8_0, m.cols);
    std::vector<uint8_t> out(size_t(m.rows) * out_row);
    std::vector<float> tmp(size_t(m.cols));
    for (int64_t r = 0; r < m.rows; ++r) {
      dequantize_row(m.type, m.row(r), m.cols, tmp.data());
      quantize_row(DType::Q8_0, tmp.data(), m.cols, out.data() + r * out_row);
    }
    return out;
  }
};

}  // namespace

WeightsGpu upload_weights(Device& device, const Gemma3Weights& w, const KernelPlan& plan, Gemma3Weights* release) {
  const Gemma3Config& c = w.config;
  WeightsGpu g;
  const bool uma = device.info().unified_memory && !plan.force_staging;
  g.arena = std::make_unique<MemoryArena>(device, uma ? MemoryKind::DeviceMappable : MemoryKind::DeviceLocal,
                                          1024 * kMiB, "model weights");
  // One staging buffer for everything on discrete GPUs.
  Uploader up(device, 64 * kMiB);
  // max_chunk_bytes lowers the split size so tests can exercise multi-chunk matrices.
  const uint64_t chunk_limit =
      std::min<uint64_t>({device.limits().maxStorageBufferRange, g.arena->max_block_bytes(), plan.max_chunk_bytes});
  auto rows_of = [](const Matrix& m) { return [&m](int64_t r) { return m.row(r); }; };
  g.embed = upload_matrix(*g.arena, up, w.embed.type, w.embed.rows, w.embed.cols, rows_of(w.embed), chunk_limit, 64);
  // Uploads copy the rows out (into staging or mapped device memory) before they return, so a host
  // matrix may go at once: the model is never held twice (on an integrated GPU, in the same RAM).
  if (release) release->embed.storage.reset();
  NormPacker norm_pack;
  g.layers.resize(size_t(c.num_layers));
  for (int i = 0; i < c.num_layers; ++i) {
    const LayerWeights& lw = w.layers[size_t(i)];
    LayerWeightsGpu& l = g.layers[size_t(i)];
    // q|k|v may mix types (GGUF's Q4_K_M keeps some attn_v in Q6_K): each part then has chunks of
    // its own, run by its type's kernel (DeviceMatrix::mixed).
    auto part = [&](const Matrix& m) { return StackedPart{m.type, m.rows, rows_of(m)}; };
    l.qkv = upload_stacked(*g.arena, up, {part(lw.wq), part(lw.wk), part(lw.wv)}, c.hidden_size, chunk_limit, 64);
    l.o = upload_matrix(*g.arena, up, lw.wo.type, lw.wo.rows, lw.wo.cols, rows_of(lw.wo), chunk_limit, 64);
    const GluPair glu(lw.w_gate, lw.w_up);
    l.gate_up = upload_matrix(*g.arena, up, glu.type, 2 * int64_t(c.intermediate_size), c.hidden_size,
                              [&](int64_t r) { return glu.row(r); }, chunk_limit, 64);
    l.down = upload_matrix(*g.arena, up, lw.w_down.type, lw.w_down.rows, lw.w_down.cols, rows_of(lw.w_down),
                           chunk_limit, 64);
    if (release) {
      LayerWeights& rl = release->layers[size_t(i)];
      for (Matrix* m : {&rl.wq, &rl.wk, &rl.wv, &rl.wo, &rl.w_gate, &rl.w_up, &rl.w_down}) m->storage.reset();
    }
    l.input_norm = norm_pack.add(lw.input_norm);
    l.post_attn_norm = norm_pack.add(lw.post_attn_norm);
    l.pre_ffn_norm = norm_pack.add(lw.pre_ffn_norm);
    l.post_ffn_norm = norm_pack.add(lw.post_ffn_norm);
    l.q_norm = norm_pack.add(lw.q_norm);
    l.k_norm = norm_pack.add(lw.k_norm);
    g.bytes += l.qkv.bytes() + l.o.bytes() + l.gate_up.bytes() + l.down.bytes();
  }
  g.bytes += g.embed.bytes();
  g.final_norm = norm_pack.add(w.final_norm);
  const uint64_t norm_bytes = norm_pack.data.size() * 4;
  const uint64_t max_range = std::min<uint64_t>(device.limits().maxStorageBufferRange, g.arena->max_block_bytes());
  if (norm_bytes > max_range)
    throw Error("Vulkan: the norm weights need " + std::to_string(norm_bytes / kMiB) +
                " MiB in one binding, over the device's limit of " + std::to_string(max_range / kMiB) + " MiB");
  g.norms = g.arena->allocate(norm_bytes);
  up.write(g.norms, 0, norm_pack.data.data(), norm_bytes);
  up.finish();
  return g;
}

}  // namespace kiln::vk
