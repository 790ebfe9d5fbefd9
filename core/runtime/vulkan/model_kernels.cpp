// How ModelGpu resolves the plan's kernels at load (model_kernels.h): each kernel's name from the
// op, the weights' type and the plan, looked up once in the PipelineLibrary; and the decisions
// that depend on the weights (int8 activations between producers and matrices, the wide norm).
#include <algorithm>
#include <string>

#include "kiln/types.h"
#include "runtime/vulkan/model_gpu.h"

namespace kiln::vk {
namespace {

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

}  // namespace

uint32_t staged_shared_bytes(const MatvecShape& s, int64_t cols) {  // matvec_staged.comp's arrays
  return uint32_t(cols / kBlockSize) * 48 + s.rows * s.wg * 4 + 64 * 4;
}

std::string matmul_kernel_name(DType type, bool glu, MatmulTile tile, bool khr, bool half_x, bool half_sums) {
  if (!(tile == kMatmulTile) && !(tile == kCoopTile)) throw Error("Vulkan: no matmul kernel for that tile");
  const bool coop = tile == kCoopTile;
  if (half_sums && !(coop && khr && half_x)) throw Error("Vulkan: fp16 sums are for KHR tiles on fp16 input");
  const char* kind = !coop ? "matmul_" : khr ? "matmul_coop_khr_" : "matmul_coop_";
  return std::string(kind) + (coop && half_x ? "xh_" : "") + (half_sums ? "s16_" : "") + (glu ? "glu_" : "") +
         type_suffix(type);
}

std::string matmul_i8_kernel_name(DType type, bool glu) {
  if (!int_dot_prefill_type(type)) throw Error("Vulkan: int8 tiles are for Q8_0, Q4_0, Q5_0, IQ4_NL and IQ4_XS weights");
  return std::string("matmul_i8_") + (glu ? "glu_" : "") + type_suffix(type);
}

const Kernel& ModelGpu::matrix_kernel(DType type, bool glu, bool batched, const MatvecShape& shape, MatmulTile tile,
                                      bool int_dot, bool half_x) {
  if (batched && int_dot && plan.int_dot_for(type)) return kernels.pipelines->get(matmul_i8_kernel_name(type, glu), 4);
  if (batched)
    return kernels.pipelines->get(
        matmul_kernel_name(type, glu, tile, plan.prefill == Prefill::KhrCoopmat, half_x, half_x && plan.coop_half_sums), 4);
  const bool i8 = plan.int8_dot && int8_decode_type(type);
  const std::string name = std::string(i8 ? "matvec_i8_" : "matvec_") + (glu ? "glu_" : "") + type_suffix(type);
  return kernels.pipelines->get(name, 4, {shape.wg, shape.rows, shape.tpr});
}

const Kernel& ModelGpu::items_kernel(const BoundMatrix& bm, DType type, bool glu, uint32_t tokens) {
  const char* kind = items_quantized(bm) ? "matvec_items_qin_" : "matvec_items_";
  const MatvecShape s = items_shape(bm, glu, tokens);
  return kernels.pipelines->get(std::string(kind) + (glu ? "glu_" : "") + type_suffix(type), 4,
                                {s.wg, s.rows, s.tpr, tokens});
}

bool ModelGpu::items_quantized(const BoundMatrix& bm) const {
  return plan.int8_dot && std::all_of(bm.m->chunks.begin(), bm.m->chunks.end(),
                                      [](const DeviceMatrix::Chunk& c) { return int8_decode_type(c.type); });
}

MatvecShape ModelGpu::items_shape(const BoundMatrix& bm, bool glu, uint32_t tokens) const {
  return plan.items_shape(bm.shape, glu, tokens, items_quantized(bm));
}

bool ModelGpu::half_input(const BoundMatrix& bm) const {
  return plan.coop_half_input && std::all_of(bm.m->chunks.begin(), bm.m->chunks.end(),
                                             [&](const DeviceMatrix::Chunk& c) { return plan.coop_for(c.type); });
}

const Kernel& ModelGpu::staged_kernel(const BoundMatrix& bm, bool glu) {
  const MatvecShape& s = bm.staged_shape;
  const char* kind = bm.qact_out ? "glu_qout_" : glu ? "glu_" : "";
  return kernels.pipelines->get(std::string("matvec_staged_") + kind + type_suffix(bm.m->type), 4,
                                {s.wg, s.rows, s.tpr, uint32_t(bm.m->cols / kBlockSize)});
}

const Kernel& ModelGpu::qin_kernel(const BoundMatrix& bm, DType type, bool glu, bool early) {
  const MatvecShape& s = bm.qin_shape;
  const char* kind = glu ? "glu_qout_" : early ? "early_" : "";
  return kernels.pipelines->get(std::string("matvec_qin_") + kind + type_suffix(type), 4, {s.wg, s.rows, s.tpr});
}

const Kernel& ModelGpu::sums_kernel(const BoundMatrix& bm, bool early) {
  const MatvecShape& s = bm.qin_shape;
  const std::string name = std::string(early ? "matvec_qin_sums_early_" : "matvec_qin_sums_") + type_suffix(bm.m->type);
  return kernels.pipelines->get(name, 7, {s.wg, s.rows, s.tpr});
}

// Both matrices must read and write int8 activations, in one chunk each; the part ends on a whole
// 128-byte line of down's input (8 blocks of 48 bytes, from a binding offset the arena aligns to
// 256), so that nothing down reads early shares a cache line with what it may read only after all
// of gate_up.
EarlyPart ModelGpu::early_part(const LayerGpu& l) const {
  const BoundMatrix &g = l.gate_up, &d = l.down;
  const double fraction = plan.early_part(d.m->type);
  if (fraction <= 0 || !g.qact_in || !d.qact_in || g.m->chunks.size() != 1 || d.m->chunks.size() != 1) return {};
  const uint32_t nb = uint32_t(d.m->cols / kBlockSize), per_group = g.qin_shape.rows_per_workgroup();
  const uint32_t blocks = uint32_t(fraction * nb) / 8 * 8;
  const uint32_t groups = blocks * kBlockSize * 2 / per_group;  // two rows (gate, up) an output
  const uint32_t all_groups = uint32_t((g.m->rows + per_group - 1) / per_group);
  if (blocks == 0 || blocks * kBlockSize * 2 % per_group != 0 || groups >= all_groups) return {};
  return {groups, blocks};
}

GpuPlan ModelGpu::summary() const {
  GpuPlan s = plan.summary();
  // What the weights took: F32 batches stay on fp32 tiles, and only the quantized formats
  // (int8_decode_type) take the int8 decode kernels.
  const BoundMatrix& m = layers.empty() ? embed_logits : layers.back().gate_up;
  if (!plan.coop_for(m.m->type)) s.prefill = plan.int_dot_for(m.m->type) ? "int_dot" : "fp32";
  s.decode = m.qact_in ? "int8_act" : m.staged ? "int8_staged"
             : plan.int8_dot && int8_decode_type(m.m->type) ? "int8_dot" : "fp32";
  return s;
}

void ModelGpu::build_pipelines() {
  kernels.pipelines = std::make_unique<PipelineLibrary>(device, PipelineLibrary::default_cache_path(device.info()),
                                                        StageWait{plan.stage_spin_rounds, plan.stage_backoff});
  PipelineLibrary& lib = *kernels.pipelines;
  // Every kernel the forward pass can take, resolved now (MatrixKernels): recording reads them.
  auto matrix_kernels = [&](BoundMatrix& bm, bool glu) {
    bm.shape = plan.matvec_shape(bm.m->type, bm.m->rows, bm.m->cols, glu);
    for (size_t begin = 0; begin < bm.m->chunks.size();) {  // a mixed stack's parts each take their type's
      MatrixKernels k;
      k.type = bm.m->chunks[begin].type;
      k.first_chunk = begin;
      k.end_chunk = begin;
      while (k.end_chunk < bm.m->chunks.size() && bm.m->chunks[k.end_chunk].type == k.type) ++k.end_chunk;
      k.matvec = &matrix_kernel(k.type, glu, false, bm.shape);
      k.tile = plan.matmul_tile(k.type);
      k.batched = &matrix_kernel(k.type, glu, true, bm.shape, k.tile, !bm.m->mixed(), half_input(bm));
      bm.kernels.push_back(k);
      begin = k.end_chunk;
    }
    bm.staged_shape = plan.staged_shape(bm.m->type, glu);
    bm.staged = !bm.m->mixed() && plan.staged_for(bm.m->type, bm.m->cols) &&
                staged_shared_bytes(bm.staged_shape, bm.m->cols) <= device.limits().maxComputeSharedMemorySize;
  };
  for_each_matrix(matrix_kernels);
  kernels.embed = &lib.get(std::string("embed_") + type_suffix(embed_logits.m->type), 6, {plan.norm_wg});
  // Batches of 2 to matvec_max_tokens tokens take matvec_items_* too (Recorder::matrix).
  make_items_kernels(plan.matvec_max_tokens);
  const std::string kv = kv_f16 ? "f16" : "f32";
  kernels.rope = &lib.get("qk_norm_rope_kv_" + kv, 5, {plan.rope_wg});
  const uint32_t qb = plan.prefill_attention_queries;
  kernels.attention =
      kernels.coop_attention
          ? &lib.get("attention_prefill_khr_d" + std::to_string(config.head_dim) + "_kv_f16", 4)
          : &lib.get((qb ? "attention_prefill_q" + std::to_string(qb) + "_kv_" : "attention_kv_") + kv, 4,
                     {plan.attention_wg});
  kernels.attention_queries = kernels.coop_attention ? 16 : qb;
  const bool attention_int8 = plan.quantized_act && plan_int8_activations();
  kernels.decode_attention =
      &lib.get((attention_int8 ? "attention_decode_qout_kv_" : "attention_decode_kv_") + kv, 10, {plan.attention_wg});
  if (kernels.add_norm_int8) kernels.add_norm_qout = &lib.get("add_norm_qout", 5, {plan.norm_wg});
  // The one-token kernel each matrix ended up with (after the plan, so none is built for nothing).
  auto one_token_kernel = [&](BoundMatrix& bm, bool glu) {
    for (MatrixKernels& k : bm.kernels) {  // a mixed stack reads int8 part by part; none is staged
      if (bm.qact_in) k.qin = &qin_kernel(bm, k.type, glu);
      else if (bm.staged) k.staged = &staged_kernel(bm, glu);
    }
  };
  for_each_matrix(one_token_kernel);
  kernels.add_norm = &lib.get("add_norm", 5, {plan.norm_wg});
  kernels.argmax = &lib.get("argmax", 4);
  kernels.wide_norm = plan_wide_norm();
  if (kernels.wide_norm) {
    for (LayerGpu& l : layers)  // plan_wide_norm: o and down are one run each
      for (BoundMatrix* bm : {&l.o, &l.down}) bm->kernels[0].sums = &sums_kernel(*bm);
    kernels.add_norm_slots = &lib.get("add_norm_slots_qout", 6, {plan.wide_norm_wg});
  }
  for (LayerGpu& l : layers) {  // early_part: down is one run
    if (!early_part(l).groups) continue;
    MatrixKernels& k = l.down.kernels[0];
    if (kernels.wide_norm) k.sums_early = &sums_kernel(l.down, true);
    else k.qin_early = &qin_kernel(l.down, k.type, false, true);
  }
  if (xq.buffer != VK_NULL_HANDLE) kernels.quantize = &lib.get("quantize_i8", 2);
  if (xh.buffer != VK_NULL_HANDLE) kernels.convert = &lib.get("convert_f16", 2);
  if (plan.coop_matmul) {
    kernels.split_sum = &lib.get("split_sum", 4);
    for (LayerGpu& l : layers) l.o.split_output = l.down.split_output = coop_slices > 1;
  }
}

// One token: the producers of the decode matrices' inputs round them to int8 (a scale for each 8)
// and the matrices read them with matvec_qin_* (PERFORMANCE.md, "Int8 activations from their
// producers"). Each link only where both ends can: int8 weights, whole groups of 8 outputs. Sets
// the matrices' flags and shapes and ModelKernels::add_norm_int8; returns whether the decode
// attention rounds.
bool ModelGpu::plan_int8_activations() {
  // A mixed q|k|v stack (Q4_K_M: v in Q6_K on some layers) reads int8 part by part.
  auto int8 = [](const BoundMatrix& bm) {
    return std::all_of(bm.m->chunks.begin(), bm.m->chunks.end(),
                       [](const DeviceMatrix::Chunk& c) { return int8_decode_type(c.type); });
  };
  auto reads_int8 = [&](BoundMatrix& bm, bool glu) {
    bm.qact_in = true;
    bm.qin_shape = glu ? bm.staged_shape : plan.qin_shape(false);
  };
  // gate_up -> down: gate_up's workgroups must write whole groups of 8 outputs (128,8,64: 8 each),
  // and so must its chunks: each starts at a multiple of 16 rows (8 outputs), which chunks of
  // whole 64-row granules do, and a binding too small for one may not (weight_layout.h).
  auto whole_groups = [](const BoundMatrix& bm) {
    return std::all_of(bm.m->chunks.begin(), bm.m->chunks.end(),
                       [](const DeviceMatrix::Chunk& c) { return c.row_begin % 16 == 0; });
  };
  for (LayerGpu& l : layers) {
    if (!l.gate_up.staged || !int8(l.down) || !whole_groups(l.gate_up)) continue;
    l.gate_up.staged_shape = plan.qin_shape(true);
    const MatvecShape& g = l.gate_up.staged_shape;
    if ((g.wg / g.tpr) * g.rows / 2 % 8 != 0 ||
        staged_shared_bytes(g, l.gate_up.m->cols) > device.limits().maxComputeSharedMemorySize)
      continue;
    l.gate_up.qact_out = true;
    reads_int8(l.down, false);
    l.down.qin_shape = plan.down_shape(l.down.m->type);
  }
  // add_norm -> q/k/v (layers 1..; layer 0's reads the embedding's fp32 output), gate_up, logits.
  kernels.add_norm_int8 = int8(embed_logits) && std::all_of(layers.begin(), layers.end(), [&](const LayerGpu& l) {
                    return int8(l.qkv) && l.gate_up.qact_out;
                  });
  if (kernels.add_norm_int8) {
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

// The wide add_norm (ModelKernels::wide_norm) where add_norm writes int8 and o and down read int8 in
// qin_shape workgroups, each of their chunks starting at a whole workgroup (a slot each).
bool ModelGpu::plan_wide_norm() const {
  if (!plan.wide_norm || !kernels.add_norm_int8 || norm_slots == 0 || plan.wide_norm_wg % 2 != 0) return false;
  const uint32_t per_group = plan.qin_shape(false).rows_per_workgroup();
  auto fits = [&](const BoundMatrix& bm) {
    return bm.qact_in && bm.qin_shape.rows_per_workgroup() == per_group &&
           std::all_of(bm.m->chunks.begin(), bm.m->chunks.end(),
                       [&](const DeviceMatrix::Chunk& c) { return c.row_begin % per_group == 0; });
  };
  return std::all_of(layers.begin(), layers.end(), [&](const LayerGpu& l) { return fits(l.o) && fits(l.down); });
}

void ModelGpu::make_items_kernels(int rows) {
  for_each_matrix([&](BoundMatrix& bm, bool glu) {
    for (uint32_t tokens = 2; tokens <= items_pass_tokens(rows); tokens *= 2)
      for (MatrixKernels& k : bm.kernels) k.items[items_slot(tokens)] = &items_kernel(bm, k.type, glu, tokens);
  });
}

}  // namespace kiln::vk
