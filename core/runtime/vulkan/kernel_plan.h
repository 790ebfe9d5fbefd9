// The device plan: which kernel, shape and synchronisation each op runs on one device, decided once
// at load by plan_for() from what the device reports, a small table of device families and
// explicit overrides (tuning keys: LoadOptions::vulkan_tuning, `kiln bench --tune key=value`).
// ModelGpu holds it const. What depends on the model as well (which matrices read int8
// activations, whether the wide add_norm fits its chunks) ModelGpu decides beside it, at load.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kiln/hardware.h"
#include "kiln/types.h"
#include "quant/dtype.h"
#include "runtime/vulkan/device.h"

namespace kiln::vk {

// How matvec.comp splits a matrix (specialization constants): workgroups of `wg` invocations in
// groups of `tpr`, each group accumulating `rows` rows.
struct MatvecShape {
  uint32_t wg = 128, rows = 2, tpr = 32;
  uint32_t rows_per_workgroup() const { return wg / tpr * rows; }
  bool operator==(const MatvecShape&) const = default;
};

// Rows x tokens a workgroup of a batched kernel takes: matmul.comp 64 x 64, matmul_coop.comp
// (tensor cores) 128 x 128.
struct MatmulTile {
  uint32_t rows = 64, tokens = 64;
  bool operator==(const MatmulTile&) const = default;
};
constexpr MatmulTile kMatmulTile{64, 64}, kCoopTile{128, 128};

// The batched matrix kernels (prefill): tensor cores through NVIDIA's extension (matmul_coop_*),
// through the portable KHR one (matmul_coop_khr_*: RDNA3, Intel, NVIDIA), int8 tiles on integer dot
// products (matmul_i8_*: Q8_0/Q4_0/Q5_0/IQ4_NL/IQ4_XS weights on devices without tensor cores), or fp32 tiles (matmul_*).
enum class Prefill { Fp32, NvCoopmat, KhrCoopmat, IntDot };
const char* prefill_name(Prefill p);  // "fp32", "nv_coopmat", "khr_coopmat", "int_dot"
// Whether this build embedded the KHR kernels (they need Debian 13's glslc: kernels/vulkan).
bool khr_coopmat_built();

// Device families: the rows of the table in kernel_plan.cpp (kFamilies).
// Weights whose one-token kernels take int8 activations (matvec_i8_*, matvec_staged_*,
// matvec_qin_*): Q8_0, Q4_0, the K-quants, IQ4_XS and GGUF's other 32-weight formats (Q5_0, Q4_1, Q5_1, IQ4_NL).
bool int8_decode_type(DType type);
// Weights with int8 prefill tiles (matmul_i8_*): Q8_0, Q4_0, Q5_0, IQ4_NL and IQ4_XS (no mins to carry).
bool int_dot_prefill_type(DType type);

enum class DeviceFamily { Nvidia, Amd, Intel, Cpu, Other };
const char* family_name(DeviceFamily f);  // "nvidia", "amd", "intel", "cpu", "other"
DeviceFamily family_of(const PhysicalDeviceInfo& device);

// The tuning keys, parsed: each set one overrides what the device and its family would decide.
// Capabilities cannot be forced: int8_dot=1 on a device without integer dot products stays off.
struct TuningOverrides {
  std::optional<DeviceFamily> family;  // take another family's row of the table
  std::optional<Prefill> prefill;  // prefill=khr_coopmat|nv_coopmat|int_dot|fp32 (fp32 where the device lacks it)
  std::optional<bool> int8_dot, staged, qact, coopmat, stage_flags, run_ahead, wide_norm, down_groups_of_96;
  std::optional<bool> coop_half_input;  // coop_input=f16|f32
  std::optional<bool> coop_half_sums;   // coop_sums=f16|f32
  std::optional<bool> coop_attention;   // coop_attention=0|1
  std::optional<uint32_t> staged_max_blocks, prefill_queries, coop_split, attention_split, wide_norm_wg;
  std::optional<uint32_t> step_items;  // step_items=2..16
  std::optional<uint32_t> items_rows;   // items_rows=1..16
  std::optional<uint32_t> matvec_max_tokens;  // matvec_max_tokens=1..16
  std::optional<uint32_t> items_pass;         // items_pass=2|4|8|16
  std::optional<MatvecShape> matvec, matvec_down, matvec_glu, matvec_qin;
  std::optional<double> early_part;
  // Tests: weights in bindings of at most this many bytes, uploaded through staging on UMA too.
  std::optional<uint64_t> max_chunk_bytes;
  std::optional<uint32_t> max_logit_rows;  // tests: a logits buffer of at most this many rows
  std::optional<bool> force_staging;
  // Measurement: fence polling, stage-wait idle, barriers before the named ops, warm-up tokens at load.
  std::optional<bool> fence_poll;
  std::optional<uint32_t> stage_backoff, warmup;
  std::optional<std::string> stage_barrier_before;
  bool stage_flags_test_give_up = false;  // tests: the first flagged step's wait gives up
};
// Throws kiln::Error naming the key (and listing the valid ones) for an unknown key or a bad value.
TuningOverrides parse_tuning(const VulkanTuning& tuning);

struct KernelPlan {
  DeviceFamily family = DeviceFamily::Other;
  bool cpu_device = false;       // lavapipe and the like: few, fat invocations
  uint32_t subgroup_size = 0;

  // --- Matrices, one token (decode) ---
  bool int8_dot = false;         // int8-dot matvec for Q8_0/Q4_0 and the K-quants (int8_dot=0|1)
  // Batches up to this size use matrix-vector kernels (matvec_items_*, each weight block loaded
  // once for all tokens) instead of tiles, whose cost does not shrink below a whole tile of tokens.
  // On an H100 (27B Q4_K_M, second prefill, 2026-11-26) items (in passes of 8 and 16 then, see
  // items_pass) against 128 x 128 tensor-core tiles: 5 tokens 177.8 tok/s against 77.7, 8 283.6 /
  // 123.5, 12 192.1 / 184.8, 16 254.1 / 243.1. Lavapipe: 4. matvec_max_tokens=1..16.
  int matvec_max_tokens = 16;
  MatvecShape forced{0, 0, 0};   // matvec=wg,rows,tpr: every matvec in this shape (tuning runs)
  // Enough invocations a row that each streams several blocks, enough rows that the GPU is full.
  MatvecShape matvec_shape(DType type, int64_t rows, int64_t cols, bool glu) const;
  // One token with int8 dots: matvec_staged_* rounds the activations to int8 once per workgroup
  // into shared memory, for rows of at most max_staged_blocks blocks (its prologue grows with the
  // row: on the H100 it lost on down's 672 blocks). staged=0 turns it off, staged_max_blocks=N
  // moves the limit.
  bool staged_matvec = false;
  uint32_t max_staged_blocks = 256;
  bool staged_for(DType type, int64_t cols) const {
    return staged_matvec && int8_decode_type(type) && cols / kBlockSize <= max_staged_blocks;
  }
  MatvecShape staged_shape(DType type, bool glu) const;
  // One token: gate_up, the decode attention and add_norm write their outputs rounded to int8 (a
  // scale for each 8), and the matrices reading them use matvec_qin_*, which has no rounding and
  // no prologue (ModelGpu::plan_int8_activations). qact=0: off.
  bool quantized_act = false;
  MatvecShape forced_glu{0, 0, 0}, forced_qin{0, 0, 0};  // matvec_glu=, matvec_qin= (tuning runs)
  MatvecShape qin_shape(bool glu) const;  // matvec_qin_*: whole groups of 8 outputs with GLU
  // down's one-token int8 kernel: Q4_0 on GPUs whose subgroups divide 96 takes groups of 96
  // invocations (7 steps a lane over 27B's 672 blocks instead of 11): on an H100 129.2-129.3 tok/s
  // against 127.4-127.5 for qin_shape; Q8_0 lost (81.6 against 84.5) and keeps qin_shape
  // (PERFORMANCE.md, "Ninth session"). 8 rows a workgroup, as o's, for the wide add_norm's slots.
  // Measured on NVIDIA only (down_groups_96=0|1); matvec_down=wg,rows,tpr tries another shape.
  bool down_groups_of_96 = false;
  MatvecShape forced_down{0, 0, 0};
  MatvecShape down_shape(DType type) const;
  // A decode step of several sequences, or a batch of 2 to matvec_max_tokens tokens of one
  // (matvec_items_*, batch buffers): the matrix's one-token wg
  // and tpr, which keep each token's sum in the one-token kernel's order. With int8 dots
  // (matvec_items_qin_*, the input rounded once by quantize_i8) one row an invocation (a GLU pair):
  // on an H100 (27B Q4_K_M, 4 sequences) 184.8 tok/s against 181.3 for 2 rows and 178.3 for 4,
  // as registers hold each row's unpacked block for all tokens. In fp32, fewer rows as the tokens
  // grow, so that the [rows][tokens] accumulators stay about the one-token kernel's rows.
  // items_rows=N: N rows an invocation (measurement).
  MatvecShape items_shape(const MatvecShape& one_token, bool glu, uint32_t tokens, bool quantized) const;
  uint32_t items_rows = 0;
  // Tokens a pass of matvec_items_* at most (2, 4, 8 or 16): more take further passes inside the
  // same dispatch, each workgroup reading its rows' blocks again. On an H200
  // (27B Q4_K_M, 2026-11-26) passes of 4 against 8 and 16: 16 sequences 272.5 / 266.2 / 225.5-226.7
  // tok/s, 8 sequences 259.8 / 252.2, a batch of 16 tokens 325.2 / 314.5 / 253.4, of 8 299.0 /
  // 286.1; passes of 2 lost at 4 sequences (204-207 against 236-239). H100, 4 against 16: 16
  // sequences 269.5 / 221.9, a batch of 16 tokens 310.4 / 255.8. items_pass=N.
  uint32_t items_pass = 4;

  // --- Matrices, batches (prefill) ---
  // Batches on tensor cores: KHR's extension where the device lists a 16x16x16 fp16 shape and the
  // build has the kernels (faster than NV's on the H100), else NV's, else int8 tiles where the
  // device has integer dot products (int_dot_for, below), else fp32 (PERFORMANCE.md,
  // "Prefill on VK_KHR_cooperative_matrix"). prefill=khr_coopmat|nv_coopmat|int_dot|fp32 picks one; coopmat=0: fp32.
  Prefill prefill = Prefill::Fp32;
  bool coop_matmul = false;      // prefill is NvCoopmat or KhrCoopmat: the 128 x 128 tensor-core tiles
  // The tiles read their activations in fp16, converted once per matrix input (convert_f16.comp),
  // instead of converting fp32 in every row tile: 128 tokens x 32 activations a step were 16 KiB
  // of the 18 KiB a workgroup loads (PERFORMANCE.md, "Prefill on VK_KHR_cooperative_matrix").
  // coop_input=f16|f32.
  bool coop_half_input = false;
  // coop_sums=f16 (KHR tiles with fp16 input, where the device lists fp16 sums): the tiles sum in
  // fp16, as llama.cpp's KHR path does, in one buffer (20 KiB, 111 registers: two workgroups an
  // H100 SM). 27B pp512 1.14-1.24x there, but ~15x the fp32 sums' rounding error (3.9e-3 against
  // 2.6e-4 on 27B's gate_up) and a sum past 65504 becomes infinite, so off by default
  // (PERFORMANCE.md, "Prefill tiles: occupancy and fp16 sums").
  bool coop_half_sums = false;
  // Tensor cores for batches of these weights: not F32, whose point is fp32-exact results.
  bool coop_for(DType type) const { return coop_matmul && type != DType::F32; }
  MatmulTile matmul_tile(DType type) const { return coop_for(type) ? kCoopTile : kMatmulTile; }
  // Int8 tiles (prefill int_dot): where the device has no tensor cores and the one-token int8
  // kernels run (int8_dot: hardware dots, or int8_dot=1), for int_dot_prefill_type weights; F16/F32 stay on
  // fp32 tiles. Each matrix input is rounded to int8 once (quantize_i8), a scale for each 16, as
  // dot_i8.glsl's. prefill=int_dot forces it on any device with the dots (lavapipe's emulated ones).
  bool int_dot_for(DType type) const { return prefill == Prefill::IntDot && int_dot_prefill_type(type); }
  // Split-K parts for a matmul_coop call of `rows` x n tokens, at most max_splits (the slices the
  // output buffer holds): more workgroups where few row x token tiles would leave SMs idle
  // (PERFORMANCE.md). coop_split=N forces N (1: off).
  int forced_coop_splits = 0;
  uint32_t coop_splits(int64_t rows, int n, uint32_t max_splits) const;

  // --- Attention and norms ---
  // Batches: 0 runs attention.comp (a workgroup a query); 4, 8 or 16 attention_prefill_q<N>
  // (a workgroup a block of N queries); prefill_queries=N. On an H100 (27B, 512 tokens) 4 took
  // 23.8 ms against 27.5 (one a query), 32.3 (8) and 61 (16).
  uint32_t prefill_attention_queries = 4;
  // Batches with KHR tensor-core tiles: attention on the tensor cores too
  // (attention_prefill_coop.comp), where the cache is fp16 and heads are 128 or 256 wide (ModelGpu
  // decides; the tiles above take the rest). On an H100, pp512: 27B attention 23.8 -> 10.0 ms,
  // Q4_K_M 1881 -> 1986 tok/s; 4B attention 6.7 -> 5.6 ms, 11 533-11 720 -> 11 856-11 866 tok/s.
  // coop_attention=0|1.
  bool coop_attention = false;
  uint32_t attention_wg = 64;    // >= head_dim / 4
  uint32_t max_attention_splits = 128;     // decode: the partials buffer holds this many a head
  uint32_t attention_keys_per_split = 64;  // decode: at least this many keys a workgroup (attention_split=N)
  uint32_t norm_wg = 256;
  uint32_t rope_wg = 64;
  // One token: the add_norm spread over many workgroups, its sums gathered by the matrix before
  // (ModelKernels::wide_norm; wide_norm=0|1). wide_norm_wg: invocations a workgroup (wide_norm_wg=N;
  // H100, 27B Q4_0: 110.0-110.8 tok/s against 110.2, 109.1 and 108.3 for 256, 64 and 32).
  bool wide_norm = false;
  uint32_t wide_norm_wg = 128;

  // --- Synchronisation of a decode step ---
  // Dispatches ordered by stage flags instead of pipeline barriers: workgroups wait on counters
  // and read without a cache invalidation, which Vulkan's memory model does not promise to work
  // (CommandSequence; PERFORMANCE.md, "Stage flags instead of barriers"). stage_flags=0|1.
  bool stage_flags = false;
  // With stage flags and int8 activations: down starts on the first fraction of its row blocks as
  // soon as the gate_up workgroups that wrote them are done, so that it streams while gate_up's
  // last, partial wave of workgroups runs (PERFORMANCE.md, "Ninth session"). On an H100 (27B):
  // Q4_0 0.55-0.7 gained 3 %, Q8_0 lost 0.5 % at 0.6 and 0.85, so it is off there.
  // early_part=F sets it for both (0: off); without stage flags it is always off.
  double early_part_q4_0 = 0, early_part_q8_0 = 0;
  double early_part(DType type) const {
    return type == DType::Q4_0 ? early_part_q4_0 : type == DType::Q8_0 ? early_part_q8_0 : 0.0;
  }
  // Greedy decoding: each step queues the next one on the GPU before waiting (VulkanBackend,
  // "running ahead"). run_ahead=0|1.
  bool run_ahead = false;
  // stage_flags.glsl's bounded wait: polls before it gives up, idle between polls (stage_backoff=N).
  uint32_t stage_spin_rounds = 20000, stage_backoff = 32;

  // A decode step of several sequences (server slots) goes through the model in recordings of at
  // most this many (step_items=2..16), each reading the weights once. On an H100 (27B Q4_K_M, NVIDIA
  // plan) 8 and 16 sequences gave 247 and 224 tok/s in recordings of 16, against 195 and 191 in
  // recordings of 4.
  uint32_t max_step_items = 16;

  // --- Memory, measurement and tests ---
  bool force_staging = false;             // force_staging=1: weights through staging on UMA too
  uint64_t max_chunk_bytes = UINT64_MAX;  // max_chunk_bytes=N: many-chunk matrices in tests
  // max_logit_rows=N: a logits buffer of at most N rows, as a real vocabulary leaves 64 (tests of
  // all logits of an image's batch, which come back in slices).
  uint32_t max_logit_rows = UINT32_MAX;
  bool fence_poll = true;                 // fence_poll=0: always sleep in vkWaitForFences
  std::string stage_barrier_before;       // stage_barrier_before=op,op: barriers before those ops too
  // warmup=N: one batch of N tokens at load (0: none); one past the items kernels' batches, so
  // that it runs the tiles.
  int warmup_tokens = matvec_max_tokens + 1;
  bool stage_flags_test_give_up = false;  // stage_flags_test_give_up=1 (tests)

  // For reports (`kiln info --hardware`, `kiln bench --json`): the family, the prefill and
  // decode kernels for quantized weights, the synchronisation.
  GpuPlan summary() const;
};

// The plan for a device: what it reports, its family's row of the table, then the overrides.
KernelPlan plan_for(const PhysicalDeviceInfo& device, const TuningOverrides& overrides = {});

}  // namespace kiln::vk
