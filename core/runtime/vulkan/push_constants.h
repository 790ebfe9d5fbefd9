// Push-constant blocks of the kernels, laid out exactly as the shaders' push_constant blocks
// (std430 scalars, 4 bytes each). Shared by the forward recorder and the kernel tests.
#pragma once

#include <cstdint>

namespace kiln::vk {

struct MatrixPush {  // matvec.comp, matmul.comp, matvec_staged.comp
  uint32_t rows, nb, n_tokens, x_offset, x_stride, y_offset, y_stride, groups_x;
  uint32_t norm_post = 0;  // matvec_staged.comp with NORM_SUMS: offset of the add_norm's w_post
  uint32_t part_groups = 0, part_blocks = 0;  // matvec_staged.comp: gate_up's early part (MatrixCall)
};
struct QuantizePush {  // quantize_i8.comp, convert_f16.comp
  uint32_t n_tokens, nb, x_offset, x_stride;
};
// quantize_i8's output (kernels/vulkan/quantize_i8.comp): a scale for each 32 / this many
// elements, a 32-block taking 32 int8, the scales and the groups' int32 sums.
constexpr uint32_t kQuantizeGroups = 2;
constexpr uint32_t kQuantizedBlockBytes = 32 + 8 * kQuantizeGroups;
struct SplitSumPush {  // split_sum.comp
  uint32_t count, splits;
};
struct EmbedPush {  // embed.comp
  uint32_t n_tokens, hidden, nb, row_begin, row_count, norm_offset;
  float scale, eps;
};
struct AddNormPush {  // add_norm.comp
  uint32_t hidden, post_offset, pre_offset;
  float eps;
  uint32_t slot_count = 0;  // SLOTS: sums left by the matrix before (norm_sums.glsl)
};
struct RopePush {  // qk_norm_rope.comp
  uint32_t pos0, n_heads, n_kv_heads, head_dim, qkv_stride, cache_slots, q_norm_offset, k_norm_offset, rope_offset;
  float eps;
};
struct AttentionPush {  // attention.comp and attention_prefill.comp (batches)
  uint32_t pos0, n_heads, n_kv_heads, head_dim, qkv_stride, out_stride, cache_slots, window;
  float scale, softcap;
  uint32_t n_tokens;  // attention_prefill.comp only
};
// Batches with soft-token spans (attention_spans_kv_*, attention_prefill_spans_q*_kv_*;
// kernels/vulkan/attention_spans.glsl): AttentionPush, then up to kMaxAttentionSpans spans, each
// [begin, end) absolute positions inside the batch, in order. Queries inside a span see it whole.
constexpr uint32_t kMaxAttentionSpans = 8;
struct AttentionSpansPush {
  AttentionPush base;
  uint32_t span_count = 0;
  uint32_t spans[kMaxAttentionSpans][2] = {};
};
static_assert(sizeof(AttentionPush) == 44 && sizeof(AttentionSpansPush) == 112, "the shaders' push layout");
struct SoftEmbedPush {  // soft_embed.comp: one span's rows, from batch row `first`
  uint32_t first, hidden, norm_offset;
  float eps;
};
struct DecodeAttentionPush {  // attention_decode.comp (one token: norm + RoPE, cache write, splits merged)
  uint32_t pos, n_heads, n_kv_heads, head_dim, cache_slots, window, splits, keys_per_split, q_norm_offset,
      k_norm_offset, rope_offset;
  float scale, softcap, eps;
};
// attention_decode_items_kv_* (one item of several sequences' decode step): the item's q|k|v row,
// output row, partials and counters start at these bases (floats, floats, floats, uints).
struct DecodeAttentionItemsPush {
  DecodeAttentionPush base;
  uint32_t qkv_base, out_base, partial_base, arrival_base;
};
static_assert(sizeof(DecodeAttentionItemsPush) == 72, "the shader's push layout");
struct ArgmaxPush {  // argmax.comp
  uint32_t count, per_group, pass;
  uint32_t slot = 0;
};
struct CopyPush {  // copy_words.comp
  uint32_t count;
};

// The vision tower's kernels (vision_tower_gpu.cpp, kernels/vulkan/vision_*.comp).
struct VisionMatmulPush {  // vision_matmul.comp
  uint32_t m, n, k, k_weight, x_stride, y_stride, r_stride, flags;
};
// vision_matmul.comp's epilogue: + bias, gelu_tanh, + r, + the old y (in that order).
constexpr uint32_t kVisionBias = 1, kVisionGelu = 2, kVisionAddR = 4, kVisionAccumulate = 8;
struct VisionNormPush {  // vision_layer_norm.comp
  uint32_t cols;
  float eps;
};
struct VisionAttentionPush {  // vision_attention.comp
  uint32_t tokens, head_dim, in_stride, k_offset, v_offset, out_stride;
  float scale;
};
struct VisionPoolPush {  // vision_pool_norm.comp
  uint32_t hidden, grid, side, kernel;
  float eps;
};

}  // namespace kiln::vk
