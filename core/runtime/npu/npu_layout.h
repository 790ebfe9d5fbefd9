// How one layer's attention for a batch is cut into the NPU kernel's work and laid out in its
// buffers (kernels/npu/attention_layout.h is the kernel's side of this contract).
//
// Rows: for kv head g, the batch's queries are flattened token-major into rows
// (row = token * group + head-in-group) and cut into Q tiles of shape.q_rows rows. Units: a Q group
// (up to 4 Q tiles of one kv head, one per compute-tile row of a column) against one key chunk of
// at most chunk_keys(shape) keys. A unit runs on a column group of shape.kv_split adjacent columns
// in one slot: column h of the group takes part h of the chunk (kv_keys * tiles_per_step keys);
// each non-empty part is an item (a step with keys), an empty one an idle step. Units in order are
// dealt round-robin to the column groups, steps_per_launch per column per launch; the last launch
// is padded with idle steps.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "attention_layout.h"
#include "model/config.h"
#include "runtime/cpu/kv_cache.h"

namespace kiln {

using NpuTileShape = kiln_npu::TileShape;

// The shape the kernel is compiled for at this head size: the D=128 variant for head_dim <= 128
// (the emulator runs it at any multiple of 8, e.g. the test fixtures' 16 and 32), the D=256 variant
// up to 256; kv_split 2 gives the variant where two columns share each key chunk. Throws
// kiln::Error naming the head size (or the split) otherwise.
NpuTileShape npu_tile_shape(int head_dim, int kv_split = 1);
// Whether compiled kernels exist for exactly this head size (the hardware path needs that).
bool npu_kernel_exists(int head_dim);

// One layer's attention problem, in the CPU backend's terms.
struct NpuProblem {
  int heads = 0, kv_heads = 0, head_dim = 0;
  int window = 0;          // 0: global layer
  int64_t pos = 0;         // position of the batch's first token
  int n = 0;               // tokens in the batch
  float q_scale = 1.0f;    // query_pre_attn_scalar^-0.5
  int group() const { return heads / kv_heads; }
  int64_t rows() const { return int64_t(n) * group(); }  // rows per kv head
  // Keys row `row` sees: [lo, hi).
  int64_t row_position(int64_t row) const { return pos + row / group(); }
  int64_t first_visible(int64_t row) const;
};

NpuProblem make_npu_problem(const Gemma3Config& c, int layer, int64_t pos, int n);

struct NpuQTile {
  int kv_head = 0;
  int64_t first_row = 0;   // flattened row of tile row 0
  int rows_valid = 0;
  int row_slot = 0;        // which compute-tile row of its steps holds it
  int64_t first_item = 0;  // its items (one per non-empty chunk part, in key order) are consecutive
  int items = 0;
};

// One column step: up to kRowsPerColumn Q tiles of one kv head against keys [key_begin, key_end).
struct NpuStep {
  int kv_head = -1;        // -1: an idle padding step
  int64_t key_begin = 0, key_end = 0;
  int q_tiles[kiln_npu::kRowsPerColumn] = {-1, -1, -1, -1};  // into NpuPlan::q_tiles, -1: idle row
};

struct NpuPlan {
  NpuTileShape shape{};
  NpuProblem problem;
  std::vector<NpuQTile> q_tiles;
  std::vector<NpuStep> steps;   // in launch order; steps.size() == launches * columns * steps_per_launch
  std::vector<int64_t> item_steps;  // item i (Q group x chunk part, in key order) runs as step item_steps[i]
  int launches = 0;
  // Where step i's objects live: launch, column and slot inside the column's run of steps.
  int launch_of(int64_t step) const;
  int column_of(int64_t step) const;
  int slot_of(int64_t step) const;
  // Index of the step a (launch, column, slot) holds.
  int64_t step_at(int launch, int column, int slot) const;
};

NpuPlan plan_npu_attention(const NpuProblem& problem, const NpuTileShape& shape);

// A launch is one kernel dispatch: kColumns * steps_per_launch steps, launch-major in
// NpuPlan::steps. Its buffers, in 32-bit words; every launch has the same sizes.
struct NpuBufferWords {
  int64_t q = 0, kv = 0, out = 0;
};
NpuBufferWords npu_launch_words(const NpuTileShape& shape);
// Word offset of the Q / KV / out object of (step, row) or (step, tile) in its launch's buffers.
int64_t q_object_offset(const NpuPlan& plan, int64_t step, int row);
int64_t kv_object_offset(const NpuPlan& plan, int64_t step, int tile);
int64_t out_object_offset(const NpuPlan& plan, int64_t step, int row);

// Where the keys and values come from: positions before batch_pos from the cache (ring slots for
// local layers), later ones from the batch's k/v [tokens][kv_heads * head_dim], row 0 at batch_pos.
struct NpuKeySource {
  const KvCache* cache = nullptr;
  int layer = 0;
  const float* k = nullptr;
  const float* v = nullptr;
  int64_t batch_pos = 0;
};

class ThreadPool;

// Lays one launch's inputs out in kernel order, converting to bf16 (Q pre-scaled by
// q_scale * log2(e)); q is [n][heads * head_dim] for the plan's tokens. Padding (rows, keys, idle
// steps) is zero. q_words / kv_words hold npu_launch_words().
void pack_npu_launch(const NpuPlan& plan, int launch, const float* q, const NpuKeySource& keys,
                     std::span<int32_t> q_words, std::span<int32_t> kv_words, ThreadPool& pool);

// Folds the kernel's partial results (O not yet divided by l, m, l) launch by launch, in item order,
// into each row's running (max, sum, output), then writes att [n][heads * head_dim].
class NpuMerge {
 public:
  explicit NpuMerge(const NpuPlan& plan);
  void add_launch(int launch, std::span<const int32_t> out_words, ThreadPool& pool);
  void finish(float* att, ThreadPool& pool) const;

 private:
  const NpuPlan& plan_;
  std::vector<float> max_, sum_, acc_;  // per flattened (q tile, row): m, l; acc [.. ][head_dim]
};

// Inverse of the Q / K / V packing of one launch, for tests and diagnostics: the bf16 values the
// tiles hold, back in the CPU's layout (Q still pre-scaled). Rows or keys the launch does not hold
// are left untouched.
void unpack_npu_queries(const NpuPlan& plan, int launch, std::span<const int32_t> q_words, float* q);
// Keys and values of kv head g at positions [key_begin, key_end) that the launch holds: k_out / v_out
// are [key_end - key_begin][head_dim]; found[i] is set for each position seen.
void unpack_npu_keys_values(const NpuPlan& plan, int launch, std::span<const int32_t> kv_words, int kv_head,
                            int64_t key_begin, int64_t key_end, float* k_out, float* v_out, std::vector<bool>& found);

}  // namespace kiln
