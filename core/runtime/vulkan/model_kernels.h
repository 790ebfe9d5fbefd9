// The device's plan (kernel_plan.h) as this model runs it: every pipeline the forward pass
// dispatches, resolved once at load from the plan and the weights' types (ModelGpu::build_pipelines
// in model_kernels.cpp). The recorder (forward.cpp) only reads these pointers; kernels are looked
// up by name at load alone (and, built when first needed, soft tokens' and several sequences').
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "quant/dtype.h"
#include "runtime/vulkan/kernel_plan.h"
#include "runtime/vulkan/kv_sequences.h"
#include "runtime/vulkan/pipeline.h"

namespace kiln::vk {

// The batched kernel of a tile for these weights, e.g. matmul_glu_q4_0, matmul_coop_q4_0; khr: the
// tensor-core kernel on VK_KHR_cooperative_matrix (matmul_coop_khr_*, KernelPlan::prefill
// khr_coopmat); half_x: the tensor-core kernel reading fp16 activations (..._xh_*,
// KernelPlan::coop_half_input); half_sums: that KHR kernel summing in fp16 (..._xh_s16_*,
// KernelPlan::coop_half_sums).
std::string matmul_kernel_name(DType type, bool glu, MatmulTile tile, bool khr = false, bool half_x = false,
                               bool half_sums = false);

// The int8 batched kernel (KernelPlan::int_dot_for), e.g. matmul_i8_glu_q4_0.
std::string matmul_i8_kernel_name(DType type, bool glu);

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
  // One token with ModelKernels::wide_norm (o, down): matvec_qin_sums_*, and its early variant.
  const Kernel *sums = nullptr, *sums_early = nullptr;
  // Steps of several sequences and batches of 2 to matvec_max_tokens: matvec_items_* for passes of
  // 2, 4, 8 and 16 tokens (items_slot), up to KernelPlan::items_pass.
  std::array<const Kernel*, kItemsPasses> items{};
};

// One token with stage flags: gate_up's first `groups` workgroups wrote down's input blocks below
// `blocks`, and down reads those as soon as they are done (KernelPlan::early_part). 0: no early part.
struct EarlyPart {
  uint32_t groups = 0, blocks = 0;
};

// The kernels of the model's other ops (the matrices' are each BoundMatrix's MatrixKernels), and
// what the plan decided for this model's weights. Null: not taken by this model.
struct ModelKernels {
  std::unique_ptr<PipelineLibrary> pipelines;  // owns every kernel below and in MatrixKernels
  const Kernel* embed = nullptr;             // embed_* of the embedding's type: tokens -> x, xn
  const Kernel* rope = nullptr;              // batches: qk_norm_rope_kv_*, then
  // attention_kv_*, attention_prefill_q*_kv_* or, on tensor cores (coop_attention),
  // attention_prefill_khr_d<head_dim>_kv_f16; attention_queries: queries a workgroup of it (0: one).
  const Kernel* attention = nullptr;
  uint32_t attention_queries = 0;
  // Batches' attention on tensor cores: KernelPlan::coop_attention, an fp16 cache and heads of 128
  // or 256 (ModelGpu::build, which sizes the cache rings for it).
  bool coop_attention = false;
  const Kernel* decode_attention = nullptr;  // one token: attention_decode(_qout)_kv_*, norm and RoPE inside
  const Kernel* add_norm = nullptr;
  const Kernel* split_sum = nullptr;         // tensor cores: split-K's partial sums added up
  const Kernel* argmax = nullptr;            // greedy decoding's pick, in two passes
  const Kernel* quantize = nullptr;          // int8 tiles, int8 steps: quantize_i8 into ModelGpu::xq
  const Kernel* convert = nullptr;           // tensor cores on fp16 input: convert_f16 into ModelGpu::xh
  // One token, every add_norm consumer reading int8 (layers 1.. q/k/v, gate_up, the output
  // projection): add_norm_qout writes xn rounded to int8.
  bool add_norm_int8 = false;
  const Kernel* add_norm_qout = nullptr;
  // One token: o and down (matvec_qin_sums_*) gather the sums of the add_norm after them, a vec4
  // for each of their ModelGpu::norm_slots workgroups (kernels/vulkan/norm_sums.glsl), and the
  // add_norm (add_norm_slots_qout) adds those up instead of reducing over the vector, so it runs as
  // many workgroups of one round of loads each instead of one workgroup of three passes. Where o
  // and down read int8 and add_norm writes it (KernelPlan::wide_norm).
  bool wide_norm = false;
  const Kernel* add_norm_slots = nullptr;
};

}  // namespace kiln::vk
