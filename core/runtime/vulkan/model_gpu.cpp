#include "runtime/vulkan/model_gpu.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kiln/types.h"
#include "runtime/vulkan/push_constants.h"

namespace kiln::vk {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

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

ModelGpu::ModelGpu(Device& dev, const Gemma3Weights& weights, int ctx, bool f16_kv, const KernelPlan& kernel_plan,
                   Gemma3Weights* release)
    : device(dev), config(weights.config), plan(kernel_plan), context(ctx) {
  build(weights, f16_kv, release);
  build_pipelines();
  build_sets();
  kernels.pipelines->save_cache();
}

ModelGpu::~ModelGpu() { device.wait_idle(); }

ModelGpu::SoftTokens& ModelGpu::soft_tokens() {
  if (soft_tokens_) return *soft_tokens_;
  SoftTokens s;
  s.rows = upload_arena->allocate(uint64_t(max_batch) * uint64_t(config.hidden_size) * 4);
  s.embed = &kernels.pipelines->get("soft_embed", 4, {plan.norm_wg});
  // The same bindings as kernels.attention (one set layout for every 4-binding kernel): the layers'
  // attention_set serves both.
  const std::string kv = kv_f16 ? "f16" : "f32";
  const uint32_t qb = plan.prefill_attention_queries;
  s.attention = &kernels.pipelines->get(
      (qb ? "attention_prefill_spans_q" + std::to_string(qb) + "_kv_" : "attention_spans_kv_") + kv, 4,
      {plan.attention_wg});
  const BufferSlice batch[] = {s.rows, x, xn, weights.norms};
  s.embed_set = descriptors->allocate(*s.embed, batch);
  const BufferSlice token[] = {s.rows, token_x[0], token_xn[0], weights.norms};
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

  weights = upload_weights(device, w, plan, release);
  layers.resize(size_t(c.num_layers));
  embed_logits.m = &weights.embed;
  for (int i = 0; i < c.num_layers; ++i) {
    LayerGpu& l = layers[size_t(i)];
    const LayerWeightsGpu& lw = weights.layers[size_t(i)];
    l.qkv.m = &lw.qkv;
    l.o.m = &lw.o;
    l.gate_up.m = &lw.gate_up;
    l.down.m = &lw.down;
    l.global = c.is_global(i);
  }

  // The context's state: the RoPE table, the KV cache, activations (one staging buffer for what
  // they start with).
  Uploader up(device, 64 * kMiB);

  auto state = [&](uint64_t bytes, const char* what) {
    if (bytes > max_range)
      throw Error("Vulkan: " + std::string(what) + " needs " + std::to_string(bytes / kMiB) +
                  " MiB in one binding, over the device's limit of " + std::to_string(max_range / kMiB) +
                  " MiB; use a shorter context");
    return state_arena->allocate(bytes);
  };

  const int64_t half = hd / 2;
  const std::vector<float> table = rope_table(c, context);
  rope_local = 0;
  rope_global = uint32_t(context * half);
  rope = state(table.size() * 4, "the RoPE table");
  up.write(rope, 0, table.data(), table.size() * 4);

  // KV cache: local layers keep a ring of window + max_batch - 1 positions, so a batch never
  // overwrites keys its own earlier queries still see. Attention on tensor cores reads 16
  // positions at a time from a row: there, rings of a multiple of 16 and rows for a multiple of 16.
  kernels.coop_attention = plan.coop_attention && kv_f16 && (hd == 128 || hd == 256);
  auto round16 = [&](int n) { return kernels.coop_attention ? (n + 15) / 16 * 16 : n; };
  for (LayerGpu& l : layers) {
    l.cache_slots = l.global ? context : std::min(context, round16(c.sliding_window + max_batch - 1));
    l.cache_bytes = uint64_t(round16(l.cache_slots)) * kvh * hd * elem;
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
  auto rounds_input = [&](const BoundMatrix& bm) { return plan.int_dot_for(bm.m->type) || items_quantized(bm); };
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

void ModelGpu::build_sets() {
  descriptors = std::make_unique<DescriptorAllocator>(device);
  DescriptorAllocator& d = *descriptors;
  // Every 4-binding kernel shares one set layout; this one exists whatever the plan.
  const Kernel& any4 = *embed_logits.kernels[0].matvec;
  auto bind = [&](std::vector<VkDescriptorSet>& sets, const BoundMatrix& bm, const BufferSlice& in,
                  const BufferSlice& out) {
    for (const auto& c : bm.m->chunks) {
      const BufferSlice b[] = {c.weights, c.scales, in, out};
      sets.push_back(d.allocate(any4, b));
    }
  };
  const Kernel& embed = *kernels.embed;
  bind(embed_logits.sets, embed_logits, xn, logits);
  bind(embed_logits.token_sets, embed_logits, token_xn.back(), logits);
  for (const auto& c : embed_logits.m->chunks) {
    const BufferSlice b[] = {c.weights, c.scales, tokens, x, xn, weights.norms};
    embed_gather.push_back(d.allocate(embed, b));
    const BufferSlice t[] = {c.weights, c.scales, tokens, token_x[0], token_xn[0], weights.norms};
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
    const BufferSlice n1[] = {t.proj_o, token_x[i], t.xn_mid, weights.norms, t.x_mid};
    l.token_add_norm_sets[0] = d.allocate(*kernels.add_norm, n1);
    const BufferSlice n2[] = {t.proj_d, t.x_mid, token_xn[i + 1], weights.norms, token_x[i + 1]};
    l.token_add_norm_sets[1] = d.allocate(*kernels.add_norm, n2);
  }
  if (kernels.wide_norm) {
    // o and down: weights, scales, int8 input, y, then the residual x, norms and their slots.
    auto bind_sums = [&](BoundMatrix& bm, const BufferSlice& in, const BufferSlice& out, const BufferSlice& x,
                         const BufferSlice& slots) {
      const Kernel& k = *bm.kernels[0].sums;
      for (const auto& c : bm.m->chunks) {
        const BufferSlice b[] = {c.weights, c.scales, in, out, x, weights.norms, slots};
        bm.sums_sets.push_back(d.allocate(k, b));
      }
    };
    for (size_t i = 0; i < layers.size(); ++i) {
      LayerGpu& l = layers[i];
      const LayerGpu::TokenBuffers& t = l.token;
      bind_sums(l.o, t.att, t.proj_o, token_x[i], t.sums_o);
      bind_sums(l.down, t.act, t.proj_d, t.x_mid, t.sums_d);
      // add_norm's five, then the slots.
      const BufferSlice n1[] = {t.proj_o, token_x[i], t.xn_mid, weights.norms, t.x_mid, t.sums_o};
      l.token_wide_norm_sets[0] = d.allocate(*kernels.add_norm_slots, n1);
      const BufferSlice n2[] = {t.proj_d, t.x_mid, token_xn[i + 1], weights.norms, token_x[i + 1], t.sums_d};
      l.token_wide_norm_sets[1] = d.allocate(*kernels.add_norm_slots, n2);
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
      for (const auto& chunk : bm.m->chunks) {
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
  if (kernels.quantize)
    bind_converted(*kernels.quantize, xq,
                   [&](const BoundMatrix& bm) { return (!bm.m->mixed() && plan.int_dot_for(bm.m->type)) || items_quantized(bm); },
                   &BoundMatrix::quantize_set, &BoundMatrix::int_dot_sets);
  if (kernels.convert)
    bind_converted(*kernels.convert, xh, [&](const BoundMatrix& bm) { return half_input(bm); }, &BoundMatrix::convert_set,
                   &BoundMatrix::half_sets);
  const BufferSlice am[] = {logits, argmax_partials, pick_host, tokens};
  argmax_set = d.allocate(*kernels.argmax, am);
  const BufferSlice n[] = {proj, x, xn, weights.norms, x};  // batches: the residual in place
  add_norm_set = d.allocate(*kernels.add_norm, n);
}

}  // namespace kiln::vk
