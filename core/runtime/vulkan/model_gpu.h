// Everything one loaded model keeps on the device, built once at load: weights (q|k|v stacked,
// gate/up interleaved), norm weights, the RoPE table, KV cache, activations for the largest batch,
// the device's plan (kernel_plan.h) with the pipelines it picks, and every descriptor set the
// forward pass binds.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/weights.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan/kernel_plan.h"
#include "runtime/vulkan/kv_sequences.h"
#include "runtime/vulkan/memory.h"
#include "runtime/vulkan/pipeline.h"
#include "runtime/vulkan/sequence.h"
#include "runtime/vulkan/weight_layout.h"

namespace kiln::vk {

// The batched kernel of a tile for these weights, e.g. matmul_glu_q4_0, matmul_coop_q4_0; khr: the
// tensor-core kernel on VK_KHR_cooperative_matrix (matmul_coop_khr_*, KernelPlan::prefill
// khr_coopmat); half_x: the tensor-core kernel reading fp16 activations (..._xh_*,
// KernelPlan::coop_half_input).
std::string matmul_kernel_name(DType type, bool glu, MatmulTile tile, bool khr = false, bool half_x = false);

// The int8 batched kernel (KernelPlan::int_dot_for), e.g. matmul_i8_glu_q4_0.
std::string matmul_i8_kernel_name(DType type, bool glu);

// (cos, sin) of the RoPE angle for [kind: local, global][position < context][head_dim / 2].
std::vector<float> rope_table(const Gemma3Config& config, int context);

// Shared memory matvec_staged.comp needs for rows of `cols` weights in this layout.
uint32_t staged_shared_bytes(const MatvecShape& shape, int64_t cols);

// The kernels one run of a matrix's chunks of one type may take (a mixed stack, DeviceMatrix::mixed,
// has a run for each part; every other matrix one run of all its chunks), resolved at load from the
// plan so that recording only reads them. Null: the plan never takes that path for this matrix.
struct MatrixKernels {
  DType type = DType::F32;
  size_t first_chunk = 0, end_chunk = 0;  // the run: chunks [first_chunk, end_chunk) of BoundMatrix::m
  const Kernel* matvec = nullptr;   // one row: matvec_* (matvec_i8_*) of BoundMatrix::shape
  MatmulTile tile = kMatmulTile;    // rows x tokens a workgroup of `batched` takes
  // Batches of more than matvec_max_tokens: matmul_*, matmul_coop_* (..._xh_* on fp16 input,
  // ModelGpu::half_input) or, where the plan has int8 tiles and the matrix is not mixed, matmul_i8_*.
  const Kernel* batched = nullptr;
  const Kernel* staged = nullptr;   // one token: matvec_staged_* of BoundMatrix::staged_shape
  // One token reading int8 (BoundMatrix::qact_in): matvec_qin_* of qin_shape; early: down's variant
  // that starts on gate_up's early part (EarlyPart).
  const Kernel *qin = nullptr, *qin_early = nullptr;
  // One token with ModelGpu::wide_norm (o, down): matvec_qin_sums_*, and its early variant.
  const Kernel *sums = nullptr, *sums_early = nullptr;
  // Steps of several sequences and batches of 2 to matvec_max_tokens: matvec_items_* for passes of
  // 2, 4, 8 and 16 tokens (items_slot).
  std::array<const Kernel*, kItemsPasses> items{};
};

// A matrix and one descriptor set per chunk, for its input and output activations.
struct BoundMatrix {
  DeviceMatrix m;
  MatvecShape shape;
  std::vector<MatrixKernels> kernels;  // a run of chunks of one type each, in order
  bool staged = false;      // one token: matvec_staged_* of staged_shape (KernelPlan::staged_for)
  MatvecShape staged_shape;
  bool qact_out = false;    // one token, GLU: writes its output as int8 (..._glu_qout_*)
  bool qact_in = false;     // one token: matvec_qin_* of qin_shape, its input rounded by its producer
  MatvecShape qin_shape;
  std::vector<VkDescriptorSet> sets;
  std::vector<VkDescriptorSet> token_sets;  // one token: the layer's own buffers (LayerGpu::token)
  std::vector<VkDescriptorSet> sums_sets;   // o, down with ModelGpu::wide_norm: token_sets + the sums'
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

// One token with stage flags: gate_up's first `groups` workgroups wrote down's input blocks below
// `blocks`, and down reads those as soon as they are done (KernelPlan::early_part). 0: no early part.
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
  VkDescriptorSet token_wide_norm_sets[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};  // the same, ModelGpu::wide_norm
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
  uint64_t kv_bytes = 0, weight_bytes = 0;  // kv_bytes: one sequence's cache
  uint32_t final_norm = 0;
  uint32_t rope_local = 0, rope_global = 0;  // vec2 offsets into the RoPE table
  uint32_t coop_slices = 1;  // tensor cores: split-K slices the proj buffer holds (1 to 4)

  std::unique_ptr<MemoryArena> weight_arena, state_arena, upload_arena, readback_arena;
  std::unique_ptr<PipelineLibrary> pipelines;
  std::unique_ptr<DescriptorAllocator> descriptors;

  BoundMatrix embed_logits;                  // embedding as the output projection: xn -> logits
  std::vector<VkDescriptorSet> embed_gather; // per embedding chunk: tokens -> x, xn
  std::vector<LayerGpu> layers;

  // Activations, [max_batch][...] floats unless noted.
  BufferSlice norms, rope, tokens /*host int32*/, x, xn, qkv, att, proj, act;
  // Batches with int8 tiles: a matrix input rounded to int8 (quantize_i8.comp's layout, for
  // max_batch tokens of the widest input). Null otherwise, with quantize_kernel.
  BufferSlice xq;
  const Kernel* quantize_kernel = nullptr;
  // Batches on tensor cores (KernelPlan::coop_half_input): a matrix input in fp16, dense, for
  // max_batch tokens of the widest input. Null otherwise, with convert_kernel.
  BufferSlice xh;
  const Kernel* convert_kernel = nullptr;
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

  // Batches of bm on tensor cores read their input converted to fp16 (every part on tensor cores).
  bool half_input(const BoundMatrix& bm) const;
  const Kernel* embed_kernel = nullptr;  // embed_* of the embedding's type
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
  // down read int8 and add_norm writes it (KernelPlan::wide_norm).
  bool wide_norm = false;
  uint32_t early_part_layers = 0;  // the last one-token recording: layers whose down started early
  uint32_t norm_slots = 0;
  // One token: where down may start on the first part of gate_up's output (KernelPlan::early_part).
  EarlyPart early_part(const LayerGpu& l) const;
  const Kernel* add_norm_slots_kernel = nullptr;
  // The plan as this model runs it: KernelPlan::summary with the kernels its weights took.
  GpuPlan summary() const;

  // Soft-token spans (an image's embeddings; Backend::forward_embedded), built by soft_tokens() on
  // the first batch that has spans, so that text-only use holds none of it.
  struct SoftTokens {
    BufferSlice rows;  // host-visible [max_batch][hidden] floats: a span token's row at its batch row
    const Kernel* embed = nullptr;      // soft_embed: rows -> x, xn (embed.comp skips id -1)
    const Kernel* attention = nullptr;  // attention_kernel's variant that widens key ranges to spans
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
  // Whether a step of several sequences rounds bm's input once (quantize_i8 into xq, int_dot_sets)
  // for matvec_items_qin_*: where the plan has int8 dots and every part is of an int8 decode type.
  bool items_quantized(const BoundMatrix& bm) const;
  MatvecShape items_shape(const BoundMatrix& bm, bool glu, uint32_t tokens) const;

 private:
  std::unique_ptr<KvSequence> allocate_sequence(MemoryArena& arena);
  void bind_sequence(KvSequence& s, DescriptorAllocator& d);
  void build_items();
  void make_items_kernels(uint32_t max_tokens);  // every matvec_items_* for passes of 2 .. max_tokens
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
  void build(const Gemma3Weights& w, bool f16_kv, Gemma3Weights* release);
  void build_pipelines();
  bool plan_int8_activations();
  bool plan_wide_norm() const;
  void build_sets();
  std::optional<SoftTokens> soft_tokens_;
};

}  // namespace kiln::vk
