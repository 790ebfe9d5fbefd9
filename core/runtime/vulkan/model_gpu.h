// One loaded model on the device, built once at load, in three parts:
//   weights (weights_gpu.h): the matrices (q|k|v stacked, gate/up interleaved) and norm vectors;
//   kernels (model_kernels.h): the device's plan (kernel_plan.h) resolved into pipelines for them;
//   the per-context state, held here: the RoPE table, KV caches (sequences), activations for the
//   largest batch, and every descriptor set the forward pass binds.
// BoundMatrix joins them for one matrix: its weights, how the plan runs it, its kernels, its sets.
#pragma once

#include <vulkan/vulkan.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/weights.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/kernel_plan.h"
#include "runtime/vulkan/kv_sequences.h"
#include "runtime/vulkan/memory.h"
#include "runtime/vulkan/model_kernels.h"
#include "runtime/vulkan/pipeline.h"
#include "runtime/vulkan/sequence.h"
#include "runtime/vulkan/weight_layout.h"
#include "runtime/vulkan/weights_gpu.h"

namespace kiln::vk {

// (cos, sin) of the RoPE angle for [kind: local, global][position < context][head_dim / 2].
std::vector<float> rope_table(const Gemma3Config& config, int context);

// A matrix and one descriptor set per chunk, for its input and output activations.
struct BoundMatrix {
  const DeviceMatrix* m = nullptr;  // ModelGpu::weights
  MatvecShape shape;
  std::vector<MatrixKernels> kernels;  // a run of chunks of one type each, in order
  bool staged = false;      // one token: matvec_staged_* of staged_shape (KernelPlan::staged_for)
  MatvecShape staged_shape;
  bool qact_out = false;    // one token, GLU: writes its output as int8 (..._glu_qout_*)
  bool qact_in = false;     // one token: matvec_qin_* of qin_shape, its input rounded by its producer
  MatvecShape qin_shape;
  std::vector<VkDescriptorSet> sets;
  std::vector<VkDescriptorSet> token_sets;  // one token: the layer's own buffers (LayerGpu::token)
  std::vector<VkDescriptorSet> sums_sets;   // o, down with ModelKernels::wide_norm: token_sets + the sums'
  bool split_output = false;  // its output holds ModelGpu::coop_slices slices: split-K allowed
  // Batches with int8 tiles (KernelPlan::int_dot_for): quantize_i8 rounds `sets`' input into
  // ModelGpu::xq (quantize_set), and matmul_i8_* reads it (int_dot_sets, one a chunk); so does
  // matvec_items_qin_* in a step of several sequences (ModelGpu::items_quantized).
  VkDescriptorSet quantize_set = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> int_dot_sets;
  // Batches on tensor cores with fp16 input (ModelGpu::half_input): convert_f16 writes `sets`'
  // input into ModelGpu::xh (convert_set), and matmul_coop_*xh_* reads it (half_sets, one a chunk).
  VkDescriptorSet convert_set = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> half_sets;
};

struct LayerGpu {
  BoundMatrix qkv;      // [(heads + 2 kv_heads) * head_dim, hidden]: x -> qkv
  BoundMatrix o;        // [hidden, heads * head_dim]:              att -> proj
  BoundMatrix gate_up;  // [2 ffn, hidden], rows gate0 up0 gate1 ...: xn -> act (GLU)
  BoundMatrix down;     // [hidden, ffn]:                            act -> proj
  bool global = false;
  int cache_slots = 0;        // positions the KV cache holds (a ring on local layers)
  uint64_t cache_bytes = 0;   // one sequence's keys (or values) of this layer
  // The cache and its sets are each sequence's (ModelGpu::sequences). Batches: qk_norm_rope then
  // attention. One token: attention_decode alone.
  // One token: activations of this layer alone, so that a decode step writes each address once
  // and a stage never finds an earlier stage's data stale in a cache (stage flags invalidate no
  // cache; CommandSequence). ModelGpu::token_xn[i] -> qkv -> att -> proj_o -> x_mid, xn_mid ->
  // act -> proj_d -> token_x[i + 1], token_xn[i + 1]. Sized as fp32 (int8 forms are smaller).
  struct TokenBuffers {
    BufferSlice qkv, att, proj_o, x_mid, xn_mid, act, proj_d;
    BufferSlice sums_o, sums_d;  // wide norm: [norm_slots] vec4 sums from o's and down's workgroups
  } token;
  VkDescriptorSet token_add_norm_sets[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};  // after attention, after the MLP
  VkDescriptorSet token_wide_norm_sets[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};  // the same, ModelKernels::wide_norm
};

struct ModelGpu {
  // release: the same weights, each host matrix freed once it is on the device (nullptr: kept).
  ModelGpu(Device& device, const Gemma3Weights& weights, int context, bool f16_kv, const KernelPlan& plan,
           Gemma3Weights* release = nullptr);
  ~ModelGpu();

  Device& device;
  Gemma3Config config;
  const KernelPlan plan;  // decided before anything was built; never changes
  int context = 0;
  int max_batch = 0;      // tokens one recording can carry
  int logit_rows = 0;     // rows of logits one recording can return
  bool kv_f16 = true;
  uint64_t kv_bytes = 0;  // one sequence's cache
  uint32_t rope_local = 0, rope_global = 0;  // vec2 offsets into the RoPE table
  uint32_t coop_slices = 1;  // tensor cores: split-K slices the proj buffer holds (1 to 4)

  WeightsGpu weights;  // uploaded once; every BoundMatrix::m points into it
  std::unique_ptr<MemoryArena> state_arena, upload_arena, readback_arena;  // the context's memory
  ModelKernels kernels;  // the plan's kernels, resolved at load (model_kernels.cpp)
  // The plan for these weights (model_kernels.cpp). Batches of bm on tensor cores read their input
  // converted to fp16 (every part on tensor cores).
  bool half_input(const BoundMatrix& bm) const;
  // Whether a step of several sequences rounds bm's input once (quantize_i8 into xq, int_dot_sets)
  // for matvec_items_qin_*: where the plan has int8 dots and every part is of an int8 decode type.
  bool items_quantized(const BoundMatrix& bm) const;
  MatvecShape items_shape(const BoundMatrix& bm, bool glu, uint32_t tokens) const;
  // Tokens a pass of matvec_items_* takes for n rows: items_tokens(n), at most the plan's items_pass
  // (more rows take further passes in the same dispatch).
  uint32_t items_pass_tokens(int n) const { return std::min(items_tokens(n), plan.items_pass); }
  // One token: where down may start on the first part of gate_up's output (KernelPlan::early_part).
  EarlyPart early_part(const LayerGpu& l) const;
  // The plan as this model runs it: KernelPlan::summary with the kernels its weights took.
  GpuPlan summary() const;

  // The per-context state (model_gpu.cpp, kv_sequences.cpp).
  std::unique_ptr<DescriptorAllocator> descriptors;

  BoundMatrix embed_logits;                  // embedding as the output projection: xn -> logits
  std::vector<VkDescriptorSet> embed_gather; // per embedding chunk: tokens -> x, xn
  std::vector<LayerGpu> layers;

  // Activations, [max_batch][...] floats unless noted.
  BufferSlice rope, tokens /*host int32*/, x, xn, qkv, att, proj, act;
  // Batches with int8 tiles: a matrix input rounded to int8 (quantize_i8.comp's layout, for
  // max_batch tokens of the widest input). Null otherwise, with ModelKernels::quantize.
  BufferSlice xq;
  // Batches on tensor cores (KernelPlan::coop_half_input): a matrix input in fp16, dense, for
  // max_batch tokens of the widest input. Null otherwise, with ModelKernels::convert.
  BufferSlice xh;
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

  uint32_t norm_slots = 0;  // ModelKernels::wide_norm: o's and down's workgroups, a vec4 of sums each
  uint32_t early_part_layers = 0;  // the last one-token recording: layers whose down started early

  // Soft-token spans (an image's embeddings; Backend::forward_embedded), built by soft_tokens() on
  // the first batch that has spans, so that text-only use holds none of it.
  struct SoftTokens {
    BufferSlice rows;  // host-visible [max_batch][hidden] floats: a span token's row at its batch row
    const Kernel* embed = nullptr;      // soft_embed: rows -> x, xn (embed.comp skips id -1)
    const Kernel* attention = nullptr;  // ModelKernels::attention's variant that widens key ranges to spans
    VkDescriptorSet embed_set = VK_NULL_HANDLE;        // batches: rows -> x, xn
    VkDescriptorSet token_embed_set = VK_NULL_HANDLE;  // one token: rows -> token_x[0], token_xn[0]
  };
  SoftTokens& soft_tokens();

  // Sequences (kv_sequences.h): [0] built at load. set_sequences() makes `count` (0 keeps its
  // cache, new ones start empty; the caller has waited for the device), checking the device's
  // memory before allocating: throws Error saying how much is needed and free.
  std::vector<std::unique_ptr<KvSequence>> sequences;
  LayerKv& kv(int sequence, int layer) { return sequences[size_t(sequence)]->layers[size_t(layer)]; }
  void set_sequences(int count);
  // Steps of several sequences (built by set_sequences of 2 or more; max_items 0 before).
  StepItems items;

 private:
  std::unique_ptr<KvSequence> allocate_sequence(MemoryArena& arena);
  void bind_sequence(KvSequence& s, DescriptorAllocator& d);
  void build_items();
  // Load (model_kernels.cpp): every matvec_items_* for passes of 2 .. items_pass_tokens(rows).
  void make_items_kernels(int rows);
  // Kernels by name, at load only (MatrixKernels holds what they return). type: a matrix's type, or
  // a mixed stack's part's. int_dot: batches may take int8 tiles where the plan says so (a mixed
  // stack's parts never do: they have no rounded input bound). half_x: the tensor-core tiles on
  // fp16 input (half_input). early: down's variant that starts on gate_up's early part (EarlyPart).
  const Kernel& matrix_kernel(DType type, bool glu, bool batched, const MatvecShape& shape,
                              MatmulTile tile = kMatmulTile, bool int_dot = true, bool half_x = false);
  const Kernel& staged_kernel(const BoundMatrix& bm, bool glu);
  const Kernel& qin_kernel(const BoundMatrix& bm, DType type, bool glu, bool early = false);
  const Kernel& sums_kernel(const BoundMatrix& bm, bool early = false);
  const Kernel& items_kernel(const BoundMatrix& bm, DType type, bool glu, uint32_t tokens);
  // fn(bm, glu) for the output projection, then each layer's q|k|v, o, gate|up (GLU) and down.
  template <class Fn>
  void for_each_matrix(Fn&& fn) {
    fn(embed_logits, false);
    for (LayerGpu& l : layers) {
      fn(l.qkv, false);
      fn(l.o, false);
      fn(l.gate_up, true);
      fn(l.down, false);
    }
  }
  void build(const Gemma3Weights& w, bool f16_kv, Gemma3Weights* release);  // weights, then the state's buffers
  void build_pipelines();  // model_kernels.cpp, like the next two
  bool plan_int8_activations();
  bool plan_wide_norm() const;
  void build_sets();
  std::optional<SoftTokens> soft_tokens_;
};

}  // namespace kiln::vk
