// Everything one loaded model keeps on the device, built once at load: weights (q|k|v stacked,
// gate/up interleaved), norm weights, the RoPE table, KV cache, activations for the largest batch,
// the pipelines with their per-device tuning, and every descriptor set the forward pass binds.
#pragma once

#include <vulkan/vulkan.h>

#include <memory>
#include <string>
#include <vector>

#include "model/weights.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/memory.h"
#include "runtime/vulkan/pipeline.h"
#include "runtime/vulkan/sequence.h"
#include "runtime/vulkan/weight_layout.h"

namespace kiln::vk {

// How matvec.comp splits a matrix (specialization constants): workgroups of `wg` invocations in
// groups of `tpr`, each group accumulating `rows` rows.
struct MatvecShape {
  uint32_t wg = 128, rows = 2, tpr = 32;
  uint32_t rows_per_workgroup() const { return wg / tpr * rows; }
};

// Rows x tokens a workgroup of a batched kernel takes: matmul.comp 64 x 64, matmul_coop.comp
// (tensor cores) 128 x 128.
struct MatmulTile {
  uint32_t rows = 64, tokens = 64;
  bool operator==(const MatmulTile&) const = default;
};
constexpr MatmulTile kMatmulTile{64, 64}, kCoopTile{128, 128};
// The batched kernel of a tile for these weights, e.g. matmul_glu_q4_0, matmul_coop_q4_0.
std::string matmul_kernel_name(DType type, bool glu, MatmulTile tile);

// Workgroup shapes per device. KILN_VK_MATVEC="wg,rows,tpr" forces one matvec shape and
// KILN_VK_ATTENTION_SPLIT the keys a decode-attention workgroup takes (tuning runs).
struct Tuning {
  bool cpu_device = false;
  bool int8_dot = false;         // int8-dot matvec for Q8_0/Q4_0 (KILN_VK_INT8_DOT=0/1 overrides)
  bool coop_matmul = false;      // batches on tensor cores (matmul_coop_*); KILN_VK_COOPMAT=0 turns it off
  // Batches: 0 runs attention.comp (a workgroup a query); 4, 8 or 16 attention_prefill_q<N>
  // (a workgroup a block of N queries). KILN_VK_PREFILL_QUERIES overrides. On an H100 (27B,
  // 512 tokens) 4 took 23.8 ms against 27.5 (one a query), 32.3 (8) and 61 (16).
  uint32_t prefill_attention_queries = 4;
  MatvecShape forced{0, 0, 0};
  uint32_t norm_wg = 256;
  uint32_t rope_wg = 64;
  uint32_t attention_wg = 64;    // >= head_dim / 4
  int matvec_max_tokens = 4;     // batches up to this size use matrix-vector kernels
  // One token with int8 dots: matvec_staged_* rounds the activations to int8 once per workgroup
  // into shared memory, for rows of at most max_staged_blocks blocks (its prologue grows with the
  // row: on the H100 it lost on down's 672 blocks). KILN_VK_STAGED=0 turns it off,
  // KILN_VK_STAGED_MAX_BLOCKS=N moves the limit.
  bool staged_matvec = false;
  uint32_t max_staged_blocks = 256;
  bool staged_for(DType type, int64_t cols) const {
    return staged_matvec && (type == DType::Q8_0 || type == DType::Q4_0) && cols / 32 <= max_staged_blocks;
  }
  MatvecShape staged_shape(DType type, bool glu) const;
  MatvecShape qin_shape(bool glu) const;  // matvec_qin_*: whole groups of 8 outputs with GLU
  // down's one-token int8 kernel: Q4_0 on GPUs whose subgroups divide 96 takes groups of 96
  // invocations (7 steps a lane over 27B's 672 blocks instead of 11): on an H100 129.2-129.3 tok/s
  // against 127.4-127.5 for qin_shape; Q8_0 lost (81.6 against 84.5) and keeps qin_shape
  // (PERFORMANCE.md, "Ninth session"). 8 rows a workgroup, as o's, for the wide add_norm's slots.
  // KILN_VK_MATVEC_DOWN="wg,rows,tpr" tries another (tuning runs).
  MatvecShape down_shape(DType type) const;
  MatvecShape forced_down{0, 0, 0};
  uint32_t subgroup_size = 0;
  // One token: gate_up, the decode attention and add_norm write their outputs rounded to int8 (a
  // scale for each 8), and the matrices reading them use matvec_qin_*, which has no rounding and
  // no prologue (ModelGpu::plan_int8_activations). KILN_VK_QACT=0: off.
  bool quantized_act = false;
  uint32_t max_attention_splits = 128;  // decode: the partials buffer holds this many a head
  uint32_t attention_keys_per_split = 64;  // decode: at least this many keys a workgroup
  // One token: dispatches ordered by stage flags instead of barriers (CommandSequence; on an H100
  // PERFORMANCE.md, "Stage flags instead of barriers"). KILN_VK_STAGE_FLAGS=0 turns it off.
  bool stage_flags = false;
  // One token with stage flags and int8 activations: down starts on the first fraction of its
  // row blocks as soon as the gate_up workgroups that wrote them are done, so that it streams
  // while gate_up's last, partial wave of workgroups runs (PERFORMANCE.md, "Ninth session"). On
  // an H100 (27B): Q4_0 0.55-0.7 gained 3 %, Q8_0 lost 0.5 % at 0.6 and 0.85, so it is off there.
  // KILN_VK_EARLY_PART=f sets it for both (0: off).
  double forced_early_part = -1;
  double early_part(DType type) const {
    return forced_early_part >= 0 ? forced_early_part : type == DType::Q4_0 ? 0.6 : 0.0;
  }
  // One token: the add_norm spread over many workgroups, its sums gathered by the matrix before
  // (ModelGpu::wide_norm); KILN_VK_WIDE_NORM=0 turns it off. wide_norm_wg: invocations a workgroup
  // (KILN_VK_WIDE_NORM_WG; H100, 27B Q4_0: 110.0-110.8 tok/s against 110.2, 109.1 and 108.3 for
  // 256, 64 and 32).
  bool wide_norm = false;
  uint32_t wide_norm_wg = 128;

  // Enough invocations a row that each streams several blocks, enough rows that the GPU is full.
  MatvecShape matvec_shape(DType type, int64_t rows, int64_t cols, bool glu) const;
  // Tensor cores for batches of these weights: not F32, whose point is fp32-exact results.
  bool coop_for(DType type) const { return coop_matmul && type != DType::F32; }
  MatmulTile matmul_tile(DType type) const { return coop_for(type) ? kCoopTile : kMatmulTile; }
  // Split-K parts for a matmul_coop call of `rows` x n tokens: more workgroups where few row x
  // token tiles would leave SMs idle (PERFORMANCE.md). KILN_VK_COOP_SPLIT=N forces N (1: off).
  uint32_t max_coop_splits = 4;  // the output buffer holds this many slices
  int forced_coop_splits = 0;
  uint32_t coop_splits(int64_t rows, int n) const;
};
Tuning tuning_for(const Device& device);

// (cos, sin) of the RoPE angle for [kind: local, global][position < context][head_dim / 2].
std::vector<float> rope_table(const Gemma3Config& config, int context);

// Shared memory matvec_staged.comp needs for rows of `cols` weights in this layout.
uint32_t staged_shared_bytes(const MatvecShape& shape, int64_t cols);

// A matrix and one descriptor set per chunk, for its input and output activations.
struct BoundMatrix {
  DeviceMatrix m;
  MatvecShape shape;
  bool staged = false;      // one token: matvec_staged_* of staged_shape (Tuning::staged_for)
  MatvecShape staged_shape;
  bool qact_out = false;    // one token, GLU: writes its output as int8 (..._glu_qout_*)
  bool qact_in = false;     // one token: matvec_qin_* of qin_shape, its input rounded by its producer
  MatvecShape qin_shape;
  std::vector<VkDescriptorSet> sets;
  std::vector<VkDescriptorSet> token_sets;  // one token: the layer's own buffers (LayerGpu::token)
  std::vector<VkDescriptorSet> sums_sets;   // o, down with ModelGpu::wide_norm: token_sets + the sums'
  bool split_output = false;  // its output holds Tuning::max_coop_splits slices: split-K allowed
};

// One token with stage flags: gate_up's first `groups` workgroups wrote down's input blocks below
// `blocks`, and down reads those as soon as they are done (Tuning::early_part). 0: no early part.
struct EarlyPart {
  uint32_t groups = 0, blocks = 0;
};

struct LayerGpu {
  BoundMatrix qkv;      // [(heads + 2 kv_heads) * head_dim, hidden]: x -> qkv
  BoundMatrix o;        // [hidden, heads * head_dim]:              att -> proj
  BoundMatrix gate_up;  // [2 ffn, hidden], rows gate0 up0 gate1 ...: xn -> act (GLU)
  BoundMatrix down;     // [hidden, ffn]:                            act -> proj
  uint32_t input_norm = 0, post_attn_norm = 0, pre_ffn_norm = 0, post_ffn_norm = 0, q_norm = 0, k_norm = 0;  // float offsets
  bool global = false;
  int cache_slots = 0;        // positions the KV cache holds (a ring on local layers)
  BufferSlice k_cache, v_cache;  // [slots][kv_heads][head_dim]
  // Batches: qk_norm_rope then attention. One token: attention_decode alone.
  VkDescriptorSet rope_set = VK_NULL_HANDLE, attention_set = VK_NULL_HANDLE, decode_attention_set = VK_NULL_HANDLE;
  // One token: activations of this layer alone, so that a decode step writes each address once
  // and a stage never finds an earlier stage's data stale in a cache (stage flags invalidate no
  // cache; CommandSequence). ModelGpu::token_xn[i] -> qkv -> att -> proj_o -> x_mid, xn_mid ->
  // act -> proj_d -> token_x[i + 1], token_xn[i + 1]. Sized as fp32 (int8 forms are smaller).
  struct TokenBuffers {
    BufferSlice qkv, att, proj_o, x_mid, xn_mid, act, proj_d;
    BufferSlice sums_o, sums_d;  // wide norm: [norm_slots] vec4 sums from o's and down's workgroups
  } token;
  VkDescriptorSet token_add_norm_sets[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};  // after attention, after the MLP
  VkDescriptorSet token_wide_norm_sets[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};  // the same, ModelGpu::wide_norm
};

struct ModelGpu {
  ModelGpu(Device& device, const Gemma3Weights& weights, int context, bool f16_kv);
  ~ModelGpu();

  Device& device;
  Gemma3Config config;
  Tuning tuning;
  int context = 0;
  int max_batch = 0;      // tokens one recording can carry
  int logit_rows = 0;     // rows of logits one recording can return
  bool kv_f16 = true;
  uint64_t kv_bytes = 0, weight_bytes = 0;
  uint32_t final_norm = 0;
  uint32_t rope_local = 0, rope_global = 0;  // vec2 offsets into the RoPE table

  std::unique_ptr<MemoryArena> weight_arena, state_arena, upload_arena, readback_arena;
  std::unique_ptr<PipelineLibrary> pipelines;
  std::unique_ptr<DescriptorAllocator> descriptors;

  BoundMatrix embed_logits;                  // embedding as the output projection: xn -> logits
  std::vector<VkDescriptorSet> embed_gather; // per embedding chunk: tokens -> x, xn
  std::vector<LayerGpu> layers;

  // Activations, [max_batch][...] floats unless noted.
  BufferSlice norms, rope, tokens /*host int32*/, x, xn, qkv, att, proj, act;
  BufferSlice partials;         // decode attention: [heads][max splits][max, sum, out[head_dim]]
  BufferSlice split_arrivals;   // decode attention: uint [heads], zero between dispatches
  BufferSlice logits /*[logit_rows][vocab]*/, logits_host;
  // Greedy decoding (argmax.comp): a (value, index) pair from each of argmax_groups workgroups,
  // then the pick, an index into the vocabulary, in host-visible memory (a slot for even and one
  // for odd positions, so that a step queued behind never overwrites one not yet read) and in
  // tokens[0].
  uint32_t argmax_groups = 0;
  BufferSlice argmax_partials /*[argmax_groups] uvec2*/, pick_host /*uint [2]*/;
  VkDescriptorSet argmax_set = VK_NULL_HANDLE;
  VkDescriptorSet add_norm_set = VK_NULL_HANDLE;
  // One token: the residual and normed input of each layer ([layers]: the final norm's output,
  // which the logits read; [0] the embedding's), and the embedding's sets writing [0].
  std::vector<BufferSlice> token_x, token_xn;
  std::vector<VkDescriptorSet> token_embed_gather;

  // Kernels for a weight type.
  const Kernel& matrix_kernel(DType type, bool glu, bool batched, const MatvecShape& shape,
                              MatmulTile tile = kMatmulTile);
  const Kernel& staged_kernel(const BoundMatrix& bm, bool glu);
  // early: down's variant that starts on gate_up's early part (EarlyPart).
  const Kernel& qin_kernel(const BoundMatrix& bm, bool glu, bool early = false);
  const Kernel& embed_kernel(DType type);
  const Kernel *rope_kernel = nullptr, *attention_kernel = nullptr, *decode_attention_kernel = nullptr,
               *add_norm_kernel = nullptr, *split_sum_kernel = nullptr, *argmax_kernel = nullptr;
  // One token, every add_norm consumer reading int8 (layers 1.. q/k/v, gate_up, the output
  // projection): add_norm_qout writes xn rounded to int8. Null otherwise.
  bool add_norm_int8 = false;
  const Kernel* add_norm_qout_kernel = nullptr;
  // One token: o and down (matvec_qin_sums_*) gather the sums of the add_norm after them, a vec4
  // for each of their norm_slots workgroups (kernels/vulkan/norm_sums.glsl), and the add_norm
  // (add_norm_slots_qout) adds those up instead of reducing over the vector, so it runs as many
  // workgroups of one round of loads each instead of one workgroup of three passes. Where o and
  // down read int8 and add_norm writes it (Tuning::wide_norm).
  bool wide_norm = false;
  uint32_t early_part_layers = 0;  // the last one-token recording: layers whose down started early
  uint32_t norm_slots = 0;
  const Kernel& sums_kernel(const BoundMatrix& bm, bool early = false);
  // One token: where down may start on the first part of gate_up's output (Tuning::early_part).
  EarlyPart early_part(const LayerGpu& l) const;
  const Kernel* add_norm_slots_kernel = nullptr;

 private:
  void build(const Gemma3Weights& w, bool f16_kv);
  void build_pipelines();
  bool plan_int8_activations();
  bool plan_wide_norm() const;
  void build_sets();
};

}  // namespace kiln::vk
