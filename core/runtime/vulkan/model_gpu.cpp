#include "runtime/vulkan/model_gpu.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kiln/types.h"
#include "quant/convert.h"
#include "runtime/vulkan/kquant_layout.h"
#include "runtime/vulkan/push_constants.h"

namespace kiln::vk {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

const char* type_suffix(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::Q8_0: return "q8_0";
    case DType::Q4_0: return "q4_0";
    case DType::Q5_0: return "q5_0";  // GGUF's other 32-weight formats, read as the K-quants are
    case DType::Q4_1: return "q4_1";
    case DType::Q5_1: return "q5_1";
    case DType::IQ4_NL: return "iq4_nl";
    case DType::Q4_K: return "q4_k";  // GGUF's K-quants, held as stored (kquant_layout.h)
    case DType::Q5_K: return "q5_k";
    case DType::Q6_K: return "q6_k";
    case DType::Q3_K: return "q3_k";
    case DType::Q2_K: return "q2_k";
    case DType::IQ4_XS: return "iq4_xs";  // a super-block format read as the K-quants are
    default: throw Error(std::string("Vulkan: weights in ") + to_string(t) + " are not supported on the GPU");
  }
}

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

std::vector<float> rope_table(const Gemma3Config& c, int context) {
  // As the CPU reference computes it: inv_freq in float32, the angle in double.
  const int64_t hd = c.head_dim, half = hd / 2;
  std::vector<float> table(size_t(2) * context * half * 2);
  for (int kind = 0; kind < 2; ++kind) {
    const float base = kind == 0 ? c.rope_local_base_freq : c.rope_theta;
    const double scaling = kind == 0 ? 1.0 : double(c.rope_scaling_factor);
    for (int64_t i = 0; i < half; ++i) {
      const float inv_freq = 1.0f / std::pow(base, float(2 * i) / float(hd));
      for (int64_t p = 0; p < context; ++p) {
        const double angle = (double(p) / scaling) * double(inv_freq);
        float* e = &table[((size_t(kind) * context + p) * half + i) * 2];
        e[0] = float(std::cos(angle));
        e[1] = float(std::sin(angle));
      }
    }
  }
  return table;
}

uint32_t staged_shared_bytes(const MatvecShape& s, int64_t cols) {  // matvec_staged.comp's arrays
  return uint32_t(cols / kBlockSize) * 48 + s.rows * s.wg * 4 + 64 * 4;
}

std::string matmul_kernel_name(DType type, bool glu, MatmulTile tile, bool khr, bool half_x) {
  if (!(tile == kMatmulTile) && !(tile == kCoopTile)) throw Error("Vulkan: no matmul kernel for that tile");
  const bool coop = tile == kCoopTile;
  const char* kind = !coop ? "matmul_" : khr ? "matmul_coop_khr_" : "matmul_coop_";
  return std::string(kind) + (coop && half_x ? "xh_" : "") + (glu ? "glu_" : "") + type_suffix(type);
}

std::string matmul_i8_kernel_name(DType type, bool glu) {
  if (!int_dot_prefill_type(type)) throw Error("Vulkan: int8 tiles are for Q8_0, Q4_0, Q5_0, IQ4_NL and IQ4_XS weights");
  return std::string("matmul_i8_") + (glu ? "glu_" : "") + type_suffix(type);
}

ModelGpu::ModelGpu(Device& dev, const Gemma3Weights& weights, int ctx, bool f16_kv, const KernelPlan& kernel_plan,
                   Gemma3Weights* release)
    : device(dev), config(weights.config), plan(kernel_plan), context(ctx) {
  build(weights, f16_kv, release);
  build_pipelines();
  build_sets();
  pipelines->save_cache();
}

ModelGpu::~ModelGpu() { device.wait_idle(); }

const Kernel& ModelGpu::matrix_kernel(DType type, bool glu, bool batched, const MatvecShape& shape, MatmulTile tile,
                                      bool int_dot, bool half_x) {
  if (batched && int_dot && plan.int_dot_for(type)) return pipelines->get(matmul_i8_kernel_name(type, glu), 4);
  if (batched)
    return pipelines->get(matmul_kernel_name(type, glu, tile, plan.prefill == Prefill::KhrCoopmat, half_x), 4);
  const bool i8 = plan.int8_dot && int8_decode_type(type);
  const std::string name = std::string(i8 ? "matvec_i8_" : "matvec_") + (glu ? "glu_" : "") + type_suffix(type);
  return pipelines->get(name, 4, {shape.wg, shape.rows, shape.tpr});
}

const Kernel& ModelGpu::items_kernel(const BoundMatrix& bm, DType type, bool glu, uint32_t tokens) {
  const char* kind = items_quantized(bm) ? "matvec_items_qin_" : "matvec_items_";
  const MatvecShape s = items_shape(bm, glu, tokens);
  return pipelines->get(std::string(kind) + (glu ? "glu_" : "") + type_suffix(type), 4, {s.wg, s.rows, s.tpr, tokens});
}

bool ModelGpu::items_quantized(const BoundMatrix& bm) const {
  return plan.int8_dot && std::all_of(bm.m.chunks.begin(), bm.m.chunks.end(),
                                             [](const DeviceMatrix::Chunk& c) { return int8_decode_type(c.type); });
}

MatvecShape ModelGpu::items_shape(const BoundMatrix& bm, bool glu, uint32_t tokens) const {
  return plan.items_shape(bm.shape, glu, tokens, items_quantized(bm));
}

bool ModelGpu::half_input(const BoundMatrix& bm) const {
  return plan.coop_half_input && std::all_of(bm.m.chunks.begin(), bm.m.chunks.end(),
                                             [&](const DeviceMatrix::Chunk& c) { return plan.coop_for(c.type); });
}

const Kernel& ModelGpu::staged_kernel(const BoundMatrix& bm, bool glu) {
  const MatvecShape& s = bm.staged_shape;
  const char* kind = bm.qact_out ? "glu_qout_" : glu ? "glu_" : "";
  return pipelines->get(std::string("matvec_staged_") + kind + type_suffix(bm.m.type), 4,
                        {s.wg, s.rows, s.tpr, uint32_t(bm.m.cols / kBlockSize)});
}

const Kernel& ModelGpu::qin_kernel(const BoundMatrix& bm, DType type, bool glu, bool early) {
  const MatvecShape& s = bm.qin_shape;
  const char* kind = glu ? "glu_qout_" : early ? "early_" : "";
  return pipelines->get(std::string("matvec_qin_") + kind + type_suffix(type), 4, {s.wg, s.rows, s.tpr});
}

const Kernel& ModelGpu::sums_kernel(const BoundMatrix& bm, bool early) {
  const MatvecShape& s = bm.qin_shape;
  return pipelines->get(std::string(early ? "matvec_qin_sums_early_" : "matvec_qin_sums_") + type_suffix(bm.m.type), 7,
                        {s.wg, s.rows, s.tpr});
}

// Both matrices must read and write int8 activations, in one chunk each; the part ends on a whole
// 128-byte line of down's input (8 blocks of 48 bytes, from a binding offset the arena aligns to
// 256), so that nothing down reads early shares a cache line with what it may read only after all
// of gate_up.
EarlyPart ModelGpu::early_part(const LayerGpu& l) const {
  const BoundMatrix &g = l.gate_up, &d = l.down;
  const double fraction = plan.early_part(d.m.type);
  if (fraction <= 0 || !g.qact_in || !d.qact_in || g.m.chunks.size() != 1 || d.m.chunks.size() != 1) return {};
  const uint32_t nb = uint32_t(d.m.cols / kBlockSize), per_group = g.qin_shape.rows_per_workgroup();
  const uint32_t blocks = uint32_t(fraction * nb) / 8 * 8;
  const uint32_t groups = blocks * kBlockSize * 2 / per_group;  // two rows (gate, up) an output
  const uint32_t all_groups = uint32_t((g.m.rows + per_group - 1) / per_group);
  if (blocks == 0 || blocks * kBlockSize * 2 % per_group != 0 || groups >= all_groups) return {};
  return {groups, blocks};
}

GpuPlan ModelGpu::summary() const {
  GpuPlan s = plan.summary();
  // What the weights took: F32 batches stay on fp32 tiles, and only the quantized formats
  // (int8_decode_type) take the int8 decode kernels.
  const BoundMatrix& m = layers.empty() ? embed_logits : layers.back().gate_up;
  if (!plan.coop_for(m.m.type)) s.prefill = plan.int_dot_for(m.m.type) ? "int_dot" : "fp32";
  s.decode = m.qact_in ? "int8_act" : m.staged ? "int8_staged"
             : plan.int8_dot && int8_decode_type(m.m.type) ? "int8_dot" : "fp32";
  return s;
}

ModelGpu::SoftTokens& ModelGpu::soft_tokens() {
  if (soft_tokens_) return *soft_tokens_;
  SoftTokens s;
  s.rows = upload_arena->allocate(uint64_t(max_batch) * uint64_t(config.hidden_size) * 4);
  s.embed = &pipelines->get("soft_embed", 4, {plan.norm_wg});
  // The same bindings as attention_kernel (one set layout for every 4-binding kernel): the layers'
  // attention_set serves both.
  const std::string kv = kv_f16 ? "f16" : "f32";
  const uint32_t qb = plan.prefill_attention_queries;
  s.attention = &pipelines->get(
      (qb ? "attention_prefill_spans_q" + std::to_string(qb) + "_kv_" : "attention_spans_kv_") + kv, 4,
      {plan.attention_wg});
  const BufferSlice batch[] = {s.rows, x, xn, norms};
  s.embed_set = descriptors->allocate(*s.embed, batch);
  const BufferSlice token[] = {s.rows, token_x[0], token_xn[0], norms};
  s.token_embed_set = descriptors->allocate(*s.embed, token);
  return soft_tokens_.emplace(s);
}

void ModelGpu::build(const Gemma3Weights& w, bool f16_kv, Gemma3Weights* release) {
  const Gemma3Config& c = config;
  const int64_t hidden = c.hidden_size, hd = c.head_dim, heads = c.num_heads, kvh = c.num_kv_heads;
  const int64_t ffn = c.intermediate_size, vocab = c.vocab_size;
  if (context <= 0) throw Error("Vulkan: context length must be positive");
  if (hd % 8 != 0 || hd > 256)
    throw Error("Vulkan: head_dim " + std::to_string(hd) + " is not supported on the GPU (a multiple of 8, at most 256)");
  if (heads % kvh != 0) throw Error("Vulkan: heads must be a multiple of kv_heads");
  if (hidden % kBlockSize != 0 || ffn % kBlockSize != 0)
    throw Error("Vulkan: hidden and intermediate sizes must be multiples of 32 on the GPU");
  if (int64_t(w.layers.size()) != c.num_layers) throw Error("Vulkan: the weights hold the wrong number of layers");

  kv_f16 = f16_kv;
  const bool uma = device.info().unified_memory && !plan.force_staging;
  const MemoryKind resident = uma ? MemoryKind::DeviceMappable : MemoryKind::DeviceLocal;
  weight_arena = std::make_unique<MemoryArena>(device, resident, 1024 * kMiB, "model weights");
  state_arena = std::make_unique<MemoryArena>(device, MemoryKind::DeviceLocal, 256 * kMiB, "KV cache and activations");
  upload_arena = std::make_unique<MemoryArena>(device, MemoryKind::HostUpload, 1 * kMiB, "token input");
  readback_arena = std::make_unique<MemoryArena>(device, MemoryKind::HostReadback, 64 * kMiB, "logits");
  const uint64_t max_range =
      std::min<uint64_t>(device.limits().maxStorageBufferRange, state_arena->max_block_bytes());

  // The largest batch whose activations each fit one binding.
  const int64_t qkv_width = (heads + 2 * kvh) * hd;
  const int64_t widest = std::max({hidden, qkv_width, heads * hd, ffn});
  max_batch = int(std::min<int64_t>({512, context, int64_t(max_range / (uint64_t(widest) * 4))}));
  if (max_batch < 1) throw Error("Vulkan: one token's activations exceed the device's storage-buffer range");
  logit_rows = int(std::clamp<int64_t>(int64_t(std::min<uint64_t>(max_range, 64 * kMiB) / (uint64_t(vocab) * 4)), 1,
                                       std::min<int64_t>(max_batch, plan.max_logit_rows)));

  // Per-context buffers that must each fit one binding: refuse before uploading anything.
  const uint64_t elem = kv_f16 ? 2 : 4;
  const uint64_t global_kv = uint64_t(context) * kvh * hd * elem, rope_bytes = uint64_t(context) * hd * 8;
  if (std::max(global_kv, rope_bytes) > max_range)
    throw Error("Vulkan: a context of " + std::to_string(context) + " needs " +
                std::to_string(std::max(global_kv, rope_bytes) / kMiB) + " MiB in one binding, over the device's limit of " +
                std::to_string(max_range / kMiB) + " MiB; use a shorter context");

  // Weights: one staging buffer for everything on discrete GPUs.
  Uploader up(device, 64 * kMiB);
  // max_chunk_bytes lowers the split size so tests can exercise multi-chunk matrices.
  const uint64_t chunk_limit = std::min<uint64_t>({device.limits().maxStorageBufferRange, weight_arena->max_block_bytes(),
                                                   plan.max_chunk_bytes});
  auto rows_of = [](const Matrix& m) { return [&m](int64_t r) { return m.row(r); }; };
  embed_logits.m = upload_matrix(*weight_arena, up, w.embed.type, w.embed.rows, w.embed.cols, rows_of(w.embed),
                                 chunk_limit, 64);
  // Uploads copy the rows out (into staging or mapped device memory) before they return, so a host
  // matrix may go at once: the model is never held twice (on an integrated GPU, in the same RAM).
  if (release) release->embed.storage.reset();
  NormPacker norm_pack;
  layers.resize(c.num_layers);
  for (int i = 0; i < c.num_layers; ++i) {
    const LayerWeights& lw = w.layers[i];
    LayerGpu& l = layers[i];
    // q|k|v may mix types (GGUF's Q4_K_M keeps some attn_v in Q6_K): each part then has chunks of
    // its own, run by its type's kernel (DeviceMatrix::mixed).
    auto part = [&](const Matrix& m) { return StackedPart{m.type, m.rows, rows_of(m)}; };
    l.qkv.m = upload_stacked(*weight_arena, up, {part(lw.wq), part(lw.wk), part(lw.wv)}, hidden, chunk_limit, 64);
    l.o.m = upload_matrix(*weight_arena, up, lw.wo.type, lw.wo.rows, lw.wo.cols, rows_of(lw.wo), chunk_limit, 64);
    const GluPair glu(lw.w_gate, lw.w_up);
    l.gate_up.m = upload_matrix(*weight_arena, up, glu.type, 2 * ffn, hidden, [&](int64_t r) { return glu.row(r); },
                                chunk_limit, 64);
    l.down.m = upload_matrix(*weight_arena, up, lw.w_down.type, lw.w_down.rows, lw.w_down.cols, rows_of(lw.w_down),
                             chunk_limit, 64);
    if (release) {
      LayerWeights& rl = release->layers[i];
      for (Matrix* m : {&rl.wq, &rl.wk, &rl.wv, &rl.wo, &rl.w_gate, &rl.w_up, &rl.w_down}) m->storage.reset();
    }
    l.input_norm = norm_pack.add(lw.input_norm);
    l.post_attn_norm = norm_pack.add(lw.post_attn_norm);
    l.pre_ffn_norm = norm_pack.add(lw.pre_ffn_norm);
    l.post_ffn_norm = norm_pack.add(lw.post_ffn_norm);
    l.q_norm = norm_pack.add(lw.q_norm);
    l.k_norm = norm_pack.add(lw.k_norm);
    l.global = c.is_global(i);
    weight_bytes += l.qkv.m.bytes() + l.o.m.bytes() + l.gate_up.m.bytes() + l.down.m.bytes();
  }
  weight_bytes += embed_logits.m.bytes();
  final_norm = norm_pack.add(w.final_norm);

  auto state = [&](uint64_t bytes, const char* what) {
    if (bytes > max_range)
      throw Error("Vulkan: " + std::string(what) + " needs " + std::to_string(bytes / kMiB) +
                  " MiB in one binding, over the device's limit of " + std::to_string(max_range / kMiB) +
                  " MiB; use a shorter context");
    return state_arena->allocate(bytes);
  };
  norms = state(norm_pack.data.size() * 4, "the norm weights");
  up.write(norms, 0, norm_pack.data.data(), norm_pack.data.size() * 4);

  const int64_t half = hd / 2;
  const std::vector<float> table = rope_table(c, context);
  rope_local = 0;
  rope_global = uint32_t(context * half);
  rope = state(table.size() * 4, "the RoPE table");
  up.write(rope, 0, table.data(), table.size() * 4);

  // KV cache: local layers keep a ring of window + max_batch - 1 positions, so a batch never
  // overwrites keys its own earlier queries still see.
  for (LayerGpu& l : layers) {
    l.cache_slots = l.global ? context : std::min(context, c.sliding_window + max_batch - 1);
    l.cache_bytes = uint64_t(l.cache_slots) * kvh * hd * elem;
    if (l.cache_bytes > max_range) state(l.cache_bytes, "a layer's KV cache");  // says why
    kv_bytes += 2 * l.cache_bytes;
  }
  sequences.push_back(allocate_sequence(*state_arena));

  const uint64_t B = uint64_t(max_batch);
  x = state(B * hidden * 4, "activations");
  xn = state(B * hidden * 4, "activations");
  // Split-K's partial sums for o and down go to further slices of proj (tensor cores only).
  if (plan.coop_matmul) coop_slices = uint32_t(std::clamp<uint64_t>(max_range / (B * hidden * 4), 1, 4));
  proj = state(coop_slices * B * hidden * 4, "activations");
  qkv = state(B * qkv_width * 4, "activations");
  att = state(B * heads * hd * 4, "activations");
  act = state(B * ffn * 4, "activations");
  // Int8 tiles and steps of several sequences on int8 dots: the int8 form of the widest matrix input.
  auto rounds_input = [&](const BoundMatrix& bm) { return plan.int_dot_for(bm.m.type) || items_quantized(bm); };
  if (rounds_input(embed_logits) || std::any_of(layers.begin(), layers.end(), [&](const LayerGpu& l) {
        return rounds_input(l.qkv) || rounds_input(l.o) || rounds_input(l.gate_up) || rounds_input(l.down);
      }))
    xq = state(B * std::max({hidden, heads * hd, ffn}) / kBlockSize * kQuantizedBlockBytes, "int8 activations");
  // Tensor-core tiles on fp16 input: the fp16 form of the widest matrix input.
  if (plan.coop_half_input) xh = state(B * std::max({hidden, heads * hd, ffn}) * 2, "fp16 activations");
  partials = state(uint64_t(plan.max_attention_splits) * heads * (hd + 2) * 4, "attention partials");
  // The decode attention's last split of a head resets its counter; they start at zero.
  split_arrivals = state(uint64_t(heads) * 4, "attention split counters");
  const std::vector<uint32_t> zeros(size_t(heads), 0);
  up.write(split_arrivals, 0, zeros.data(), zeros.size() * 4);
  logits = state(uint64_t(logit_rows) * vocab * 4, "logits");
  for (int i = 0; i <= c.num_layers; ++i) {
    token_x.push_back(state(hidden * 4, "one token's activations"));
    token_xn.push_back(state(hidden * 4, "one token's activations"));
  }
  for (LayerGpu& l : layers) {
    auto& t = l.token;
    t.qkv = state(qkv_width * 4, "one token's activations");
    t.att = state(heads * hd * 4, "one token's activations");
    t.proj_o = state(hidden * 4, "one token's activations");
    t.x_mid = state(hidden * 4, "one token's activations");
    t.xn_mid = state(hidden * 4, "one token's activations");
    t.act = state(ffn * 4, "one token's activations");
    t.proj_d = state(hidden * 4, "one token's activations");
  }
  if (plan.wide_norm) {  // o and down take qin_shape (plan_int8_activations)
    const uint32_t per_group = plan.qin_shape(false).rows_per_workgroup();
    norm_slots = uint32_t((hidden + per_group - 1) / per_group);
    for (LayerGpu& l : layers) {
      l.token.sums_o = state(uint64_t(norm_slots) * 16, "one token's norm sums");
      l.token.sums_d = state(uint64_t(norm_slots) * 16, "one token's norm sums");
    }
  }
  logits_host = readback_arena->allocate(uint64_t(logit_rows) * vocab * 4);
  // Four logits an invocation of 256 in the first pass; at most 256 partials for the second.
  argmax_groups = uint32_t(std::clamp<int64_t>((vocab + 1023) / 1024, 1, 256));
  argmax_partials = state(uint64_t(argmax_groups) * 8, "the argmax partials");
  pick_host = readback_arena->allocate(2 * 4);
  tokens = upload_arena->allocate(B * 4);
  up.finish();
}

void ModelGpu::build_pipelines() {
  pipelines = std::make_unique<PipelineLibrary>(device, PipelineLibrary::default_cache_path(device.info()),
                                                StageWait{plan.stage_spin_rounds, plan.stage_backoff});
  descriptors = std::make_unique<DescriptorAllocator>(device);
  // Every kernel the forward pass can take, resolved now (MatrixKernels): recording reads them.
  auto matrix_kernels = [&](BoundMatrix& bm, bool glu) {
    bm.shape = plan.matvec_shape(bm.m.type, bm.m.rows, bm.m.cols, glu);
    for (size_t begin = 0; begin < bm.m.chunks.size();) {  // a mixed stack's parts each take their type's
      MatrixKernels k;
      k.type = bm.m.chunks[begin].type;
      k.first_chunk = begin;
      k.end_chunk = begin;
      while (k.end_chunk < bm.m.chunks.size() && bm.m.chunks[k.end_chunk].type == k.type) ++k.end_chunk;
      k.matvec = &matrix_kernel(k.type, glu, false, bm.shape);
      k.tile = plan.matmul_tile(k.type);
      k.batched = &matrix_kernel(k.type, glu, true, bm.shape, k.tile, !bm.m.mixed(), half_input(bm));
      bm.kernels.push_back(k);
      begin = k.end_chunk;
    }
    bm.staged_shape = plan.staged_shape(bm.m.type, glu);
    bm.staged = !bm.m.mixed() && plan.staged_for(bm.m.type, bm.m.cols) &&
                staged_shared_bytes(bm.staged_shape, bm.m.cols) <= device.limits().maxComputeSharedMemorySize;
  };
  for_each_matrix(matrix_kernels);
  embed_kernel = &pipelines->get(std::string("embed_") + type_suffix(embed_logits.m.type), 6, {plan.norm_wg});
  // Batches of 2 to matvec_max_tokens tokens take matvec_items_* too (Recorder::matrix).
  make_items_kernels(items_tokens(plan.matvec_max_tokens));
  const std::string kv = kv_f16 ? "f16" : "f32";
  rope_kernel = &pipelines->get("qk_norm_rope_kv_" + kv, 5, {plan.rope_wg});
  const uint32_t qb = plan.prefill_attention_queries;
  attention_kernel = &pipelines->get((qb ? "attention_prefill_q" + std::to_string(qb) + "_kv_" : "attention_kv_") + kv,
                                     4, {plan.attention_wg});
  const bool attention_int8 = plan.quantized_act && plan_int8_activations();
  decode_attention_kernel =
      &pipelines->get((attention_int8 ? "attention_decode_qout_kv_" : "attention_decode_kv_") + kv, 10, {plan.attention_wg});
  if (add_norm_int8) add_norm_qout_kernel = &pipelines->get("add_norm_qout", 5, {plan.norm_wg});
  // The one-token kernel each matrix ended up with (after the plan, so none is built for nothing).
  auto one_token_kernel = [&](BoundMatrix& bm, bool glu) {
    for (MatrixKernels& k : bm.kernels) {  // a mixed stack reads int8 part by part; none is staged
      if (bm.qact_in) k.qin = &qin_kernel(bm, k.type, glu);
      else if (bm.staged) k.staged = &staged_kernel(bm, glu);
    }
  };
  for_each_matrix(one_token_kernel);
  add_norm_kernel = &pipelines->get("add_norm", 5, {plan.norm_wg});
  argmax_kernel = &pipelines->get("argmax", 4);
  wide_norm = plan_wide_norm();
  if (wide_norm) {
    for (LayerGpu& l : layers)  // plan_wide_norm: o and down are one run each
      for (BoundMatrix* bm : {&l.o, &l.down}) bm->kernels[0].sums = &sums_kernel(*bm);
    add_norm_slots_kernel = &pipelines->get("add_norm_slots_qout", 6, {plan.wide_norm_wg});
  }
  for (LayerGpu& l : layers) {  // early_part: down is one run
    if (!early_part(l).groups) continue;
    MatrixKernels& k = l.down.kernels[0];
    if (wide_norm) k.sums_early = &sums_kernel(l.down, true);
    else k.qin_early = &qin_kernel(l.down, k.type, false, true);
  }
  if (xq.buffer != VK_NULL_HANDLE) quantize_kernel = &pipelines->get("quantize_i8", 2);
  if (xh.buffer != VK_NULL_HANDLE) convert_kernel = &pipelines->get("convert_f16", 2);
  if (plan.coop_matmul) {
    split_sum_kernel = &pipelines->get("split_sum", 4);
    for (LayerGpu& l : layers) l.o.split_output = l.down.split_output = coop_slices > 1;
  }
}

// One token: the producers of the decode matrices' inputs round them to int8 (a scale for each 8)
// and the matrices read them with matvec_qin_* (PERFORMANCE.md, "Int8 activations from their
// producers"). Each link only where both ends can: int8 weights, whole groups of 8 outputs. Sets
// the matrices' flags and shapes and add_norm_int8; returns whether the decode attention rounds.
bool ModelGpu::plan_int8_activations() {
  // A mixed q|k|v stack (Q4_K_M: v in Q6_K on some layers) reads int8 part by part.
  auto int8 = [](const BoundMatrix& bm) {
    return std::all_of(bm.m.chunks.begin(), bm.m.chunks.end(),
                       [](const DeviceMatrix::Chunk& c) { return int8_decode_type(c.type); });
  };
  auto reads_int8 = [&](BoundMatrix& bm, bool glu) {
    bm.qact_in = true;
    bm.qin_shape = glu ? bm.staged_shape : plan.qin_shape(false);
  };
  // gate_up -> down: gate_up's workgroups must write whole groups of 8 outputs (128,8,64: 8 each).
  for (LayerGpu& l : layers) {
    if (!l.gate_up.staged || !int8(l.down)) continue;
    l.gate_up.staged_shape = plan.qin_shape(true);
    const MatvecShape& g = l.gate_up.staged_shape;
    if ((g.wg / g.tpr) * g.rows / 2 % 8 != 0 ||
        staged_shared_bytes(g, l.gate_up.m.cols) > device.limits().maxComputeSharedMemorySize)
      continue;
    l.gate_up.qact_out = true;
    reads_int8(l.down, false);
    l.down.qin_shape = plan.down_shape(l.down.m.type);
  }
  // add_norm -> q/k/v (layers 1..; layer 0's reads the embedding's fp32 output), gate_up, logits.
  add_norm_int8 = int8(embed_logits) && std::all_of(layers.begin(), layers.end(), [&](const LayerGpu& l) {
                    return int8(l.qkv) && l.gate_up.qact_out;
                  });
  if (add_norm_int8) {
    for (size_t i = 0; i < layers.size(); ++i) {
      if (i > 0) reads_int8(layers[i].qkv, false);
      reads_int8(layers[i].gate_up, true);
    }
    reads_int8(embed_logits, false);
  }
  // attention -> o: one kernel serves every layer, so every o must take int8.
  if (plan.attention_wg % 4 != 0 || !std::all_of(layers.begin(), layers.end(), [&](const LayerGpu& l) { return int8(l.o); }))
    return false;
  for (LayerGpu& l : layers) reads_int8(l.o, false);
  return true;
}

// The wide add_norm (ModelGpu::wide_norm) where add_norm writes int8 and o and down read int8 in
// qin_shape workgroups, each of their chunks starting at a whole workgroup (a slot each).
bool ModelGpu::plan_wide_norm() const {
  if (!plan.wide_norm || !add_norm_int8 || norm_slots == 0 || plan.wide_norm_wg % 2 != 0) return false;
  const uint32_t per_group = plan.qin_shape(false).rows_per_workgroup();
  auto fits = [&](const BoundMatrix& bm) {
    return bm.qact_in && bm.qin_shape.rows_per_workgroup() == per_group &&
           std::all_of(bm.m.chunks.begin(), bm.m.chunks.end(),
                       [&](const DeviceMatrix::Chunk& c) { return c.row_begin % per_group == 0; });
  };
  return std::all_of(layers.begin(), layers.end(), [&](const LayerGpu& l) { return fits(l.o) && fits(l.down); });
}

void ModelGpu::build_sets() {
  DescriptorAllocator& d = *descriptors;
  // Every 4-binding kernel shares one set layout; this one exists whatever the plan.
  const Kernel& any4 = *embed_logits.kernels[0].matvec;
  auto bind = [&](std::vector<VkDescriptorSet>& sets, const BoundMatrix& bm, const BufferSlice& in,
                  const BufferSlice& out) {
    for (const auto& c : bm.m.chunks) {
      const BufferSlice b[] = {c.weights, c.scales, in, out};
      sets.push_back(d.allocate(any4, b));
    }
  };
  const Kernel& embed = *embed_kernel;
  bind(embed_logits.sets, embed_logits, xn, logits);
  bind(embed_logits.token_sets, embed_logits, token_xn.back(), logits);
  for (const auto& c : embed_logits.m.chunks) {
    const BufferSlice b[] = {c.weights, c.scales, tokens, x, xn, norms};
    embed_gather.push_back(d.allocate(embed, b));
    const BufferSlice t[] = {c.weights, c.scales, tokens, token_x[0], token_xn[0], norms};
    token_embed_gather.push_back(d.allocate(embed, t));
  }
  bind_sequence(*sequences[0], d);
  for (size_t i = 0; i < layers.size(); ++i) {
    LayerGpu& l = layers[i];
    const LayerGpu::TokenBuffers& t = l.token;
    bind(l.qkv.sets, l.qkv, xn, qkv);
    bind(l.o.sets, l.o, att, proj);
    bind(l.gate_up.sets, l.gate_up, xn, act);
    bind(l.down.sets, l.down, act, proj);
    bind(l.qkv.token_sets, l.qkv, token_xn[i], t.qkv);
    bind(l.o.token_sets, l.o, t.att, t.proj_o);
    bind(l.gate_up.token_sets, l.gate_up, t.xn_mid, t.act);
    bind(l.down.token_sets, l.down, t.act, t.proj_d);
    // add_norm: block output, residual in, normed out, norm weights, residual out.
    const BufferSlice n1[] = {t.proj_o, token_x[i], t.xn_mid, norms, t.x_mid};
    l.token_add_norm_sets[0] = d.allocate(*add_norm_kernel, n1);
    const BufferSlice n2[] = {t.proj_d, t.x_mid, token_xn[i + 1], norms, token_x[i + 1]};
    l.token_add_norm_sets[1] = d.allocate(*add_norm_kernel, n2);
  }
  if (wide_norm) {
    // o and down: weights, scales, int8 input, y, then the residual x, norms and their slots.
    auto bind_sums = [&](BoundMatrix& bm, const BufferSlice& in, const BufferSlice& out, const BufferSlice& x,
                         const BufferSlice& slots) {
      const Kernel& k = *bm.kernels[0].sums;
      for (const auto& c : bm.m.chunks) {
        const BufferSlice b[] = {c.weights, c.scales, in, out, x, norms, slots};
        bm.sums_sets.push_back(d.allocate(k, b));
      }
    };
    for (size_t i = 0; i < layers.size(); ++i) {
      LayerGpu& l = layers[i];
      const LayerGpu::TokenBuffers& t = l.token;
      bind_sums(l.o, t.att, t.proj_o, token_x[i], t.sums_o);
      bind_sums(l.down, t.act, t.proj_d, t.x_mid, t.sums_d);
      // add_norm's five, then the slots.
      const BufferSlice n1[] = {t.proj_o, token_x[i], t.xn_mid, norms, t.x_mid, t.sums_o};
      l.token_wide_norm_sets[0] = d.allocate(*add_norm_slots_kernel, n1);
      const BufferSlice n2[] = {t.proj_d, t.x_mid, token_xn[i + 1], norms, token_x[i + 1], t.sums_d};
      l.token_wide_norm_sets[1] = d.allocate(*add_norm_slots_kernel, n2);
    }
  }
  // Batches whose input is converted first (int8 tiles: quantize_i8 into xq; tensor cores on fp16
  // input: convert_f16 into xh): the conversion's set, then each chunk's set reading the converted form.
  auto bind_converted = [&](const Kernel& convert, const BufferSlice& converted, auto takes,
                            VkDescriptorSet BoundMatrix::*convert_set, std::vector<VkDescriptorSet> BoundMatrix::*sets) {
    auto bind = [&](BoundMatrix& bm, const BufferSlice& in, const BufferSlice& out) {
      if (!takes(bm)) return;
      const BufferSlice c[] = {in, converted};
      bm.*convert_set = d.allocate(convert, c);
      for (const auto& chunk : bm.m.chunks) {
        const BufferSlice b[] = {chunk.weights, chunk.scales, converted, out};
        (bm.*sets).push_back(d.allocate(any4, b));
      }
    };
    bind(embed_logits, xn, logits);
    for (LayerGpu& l : layers) {
      bind(l.qkv, xn, qkv);
      bind(l.o, att, proj);
      bind(l.gate_up, xn, act);
      bind(l.down, act, proj);
    }
  };
  if (quantize_kernel)
    bind_converted(*quantize_kernel, xq,
                   [&](const BoundMatrix& bm) { return (!bm.m.mixed() && plan.int_dot_for(bm.m.type)) || items_quantized(bm); },
                   &BoundMatrix::quantize_set, &BoundMatrix::int_dot_sets);
  if (convert_kernel)
    bind_converted(*convert_kernel, xh, [&](const BoundMatrix& bm) { return half_input(bm); }, &BoundMatrix::convert_set,
                   &BoundMatrix::half_sets);
  const BufferSlice am[] = {logits, argmax_partials, pick_host, tokens};
  argmax_set = d.allocate(*argmax_kernel, am);
  const BufferSlice n[] = {proj, x, xn, norms, x};  // batches: the residual in place
  add_norm_set = d.allocate(*add_norm_kernel, n);
}

}  // namespace kiln::vk
