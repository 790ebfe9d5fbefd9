#include "runtime/npu/npu_layout.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>

#include "kiln/types.h"
#include "quant/convert.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/npu/npu_kernel_math.h"

namespace kiln {

using namespace kiln_npu;

NpuTileShape npu_tile_shape(int head_dim, int kv_split) {
  if (head_dim <= 0 || head_dim % kMmulS != 0 || head_dim > kShapeD256.head_dim)
    throw Error("npu: head_dim " + std::to_string(head_dim) +
                " has no attention kernel (a multiple of 8 up to 256 is needed)");
  if (kv_split != 1 && kv_split != 2)
    throw Error("npu: no kernel shares a key chunk among " + std::to_string(kv_split) + " columns (1 or 2)");
  const bool small = head_dim <= kShapeD128.head_dim;
  NpuTileShape s = kv_split == 1 ? (small ? kShapeD128 : kShapeD256) : (small ? kShapeD128Split : kShapeD256Split);
  s.head_dim = head_dim;
  return s;
}

bool npu_kernel_exists(int head_dim) {
  return head_dim == kShapeD128.head_dim || head_dim == kShapeD256.head_dim;
}

int64_t NpuProblem::first_visible(int64_t row) const {
  const int64_t p = row_position(row);
  return window > 0 ? std::max<int64_t>(0, p - window + 1) : 0;
}

NpuProblem make_npu_problem(const Gemma3Config& c, int layer, int64_t pos, int n) {
  NpuProblem p;
  p.heads = c.num_heads;
  p.kv_heads = c.num_kv_heads;
  p.head_dim = c.head_dim;
  p.window = c.is_global(layer) ? 0 : c.sliding_window;
  p.pos = pos;
  p.n = n;
  p.q_scale = 1.0f / std::sqrt(c.query_pre_attn_scalar);
  return p;
}

int NpuPlan::launch_of(int64_t step) const {
  return int(step / (int64_t(kColumns) * shape.steps_per_launch));
}
int NpuPlan::column_of(int64_t step) const {
  return int(step / shape.steps_per_launch % kColumns);
}
int NpuPlan::slot_of(int64_t step) const { return int(step % shape.steps_per_launch); }
int64_t NpuPlan::step_at(int launch, int column, int slot) const {
  return (int64_t(launch) * kColumns + column) * shape.steps_per_launch + slot;
}

NpuPlan plan_npu_attention(const NpuProblem& problem, const NpuTileShape& shape) {
  if (problem.kv_heads <= 0 || problem.heads % problem.kv_heads != 0 || problem.n <= 0 || problem.pos < 0)
    throw Error("npu: impossible attention problem (" + std::to_string(problem.heads) + " heads, " +
                std::to_string(problem.kv_heads) + " kv heads, " + std::to_string(problem.n) + " tokens)");
  if (problem.head_dim != shape.head_dim) throw Error("npu: tile shape is for another head_dim");
  NpuPlan plan;
  plan.shape = shape;
  plan.problem = problem;
  if (!shape_is_valid(shape)) throw Error("npu: invalid tile shape");
  const int64_t rows = problem.rows();
  const int64_t chunk = chunk_keys(shape), part = column_part_keys(shape);
  // One unit per (Q group, key chunk): its kv_split parts, each a step (kv_head -1 when empty).
  std::vector<std::vector<NpuStep>> units;
  std::vector<std::pair<size_t, size_t>> tile_units;  // per Q tile: its Q group's units [first, end)
  for (int g = 0; g < problem.kv_heads; ++g) {
    for (int64_t group_row = 0; group_row < rows; group_row += int64_t(shape.q_rows) * kRowsPerColumn) {
      // One Q group: up to 4 consecutive Q tiles sharing one stream of keys.
      NpuStep step;
      step.kv_head = g;
      const int64_t group_end = std::min(rows, group_row + int64_t(shape.q_rows) * kRowsPerColumn);
      for (int slot = 0; slot < kRowsPerColumn; ++slot) {
        const int64_t first = group_row + int64_t(slot) * shape.q_rows;
        if (first >= group_end) break;
        NpuQTile t;
        t.kv_head = g;
        t.first_row = first;
        t.rows_valid = int(std::min<int64_t>(shape.q_rows, group_end - first));
        t.row_slot = slot;
        step.q_tiles[slot] = int(plan.q_tiles.size());
        plan.q_tiles.push_back(t);
      }
      // The union of what the group's rows see: rows are in position order.
      const int64_t lo = problem.first_visible(group_row);
      const int64_t hi = problem.row_position(group_end - 1) + 1;
      const int first_unit = int(units.size());
      for (int64_t begin = lo; begin < hi; begin += chunk) {
        std::vector<NpuStep> parts(size_t(shape.kv_split));
        for (int h = 0; h < shape.kv_split; ++h) {
          const int64_t b = begin + h * part;
          if (b >= hi) break;  // an empty part: its column idles in this slot
          parts[h] = step;
          parts[h].key_begin = b;
          parts[h].key_end = std::min(hi, b + part);
        }
        units.push_back(std::move(parts));
      }
      tile_units.resize(plan.q_tiles.size(), {size_t(first_unit), units.size()});
    }
  }
  // Deal units round-robin to column groups so that consecutive work runs in parallel; part h of a
  // unit goes to column h of its group, in the same slot.
  const int groups = kColumns / shape.kv_split;
  const int64_t per_group = (int64_t(units.size()) + groups - 1) / groups;
  plan.launches = int(std::max<int64_t>(1, (per_group + shape.steps_per_launch - 1) / shape.steps_per_launch));
  plan.steps.assign(size_t(plan.launches) * kColumns * shape.steps_per_launch, NpuStep{});
  std::vector<int64_t> unit_first_item(units.size() + 1, 0);
  for (size_t u = 0; u < units.size(); ++u) {
    const int group = int(u % groups);
    const int64_t k = int64_t(u / groups);
    unit_first_item[u] = int64_t(plan.item_steps.size());
    for (int h = 0; h < shape.kv_split; ++h) {
      const int64_t step = plan.step_at(int(k / shape.steps_per_launch), group * shape.kv_split + h,
                                        int(k % shape.steps_per_launch));
      plan.steps[step] = units[u][h];
      if (units[u][h].kv_head >= 0) plan.item_steps.push_back(step);
    }
  }
  unit_first_item[units.size()] = int64_t(plan.item_steps.size());
  // A Q tile's items: those of its Q group's units, which are consecutive.
  for (size_t t = 0; t < plan.q_tiles.size(); ++t) {
    plan.q_tiles[t].first_item = unit_first_item[tile_units[t].first];
    plan.q_tiles[t].items = int(unit_first_item[tile_units[t].second] - plan.q_tiles[t].first_item);
  }
  return plan;
}

NpuBufferWords npu_launch_words(const NpuTileShape& shape) {
  const int64_t steps = int64_t(kColumns) * shape.steps_per_launch;
  return {steps * kRowsPerColumn * q_object_words(shape), steps * shape.tiles_per_step * kv_object_words(shape),
          steps * kRowsPerColumn * out_object_words(shape)};
}

namespace {
int64_t local_step(const NpuPlan& plan, int64_t step) { return step % (int64_t(kColumns) * plan.shape.steps_per_launch); }
}  // namespace

int64_t q_object_offset(const NpuPlan& plan, int64_t step, int row) {
  return (local_step(plan, step) * kRowsPerColumn + row) * q_object_words(plan.shape);
}
int64_t kv_object_offset(const NpuPlan& plan, int64_t step, int tile) {
  return (local_step(plan, step) * plan.shape.tiles_per_step + tile) * kv_object_words(plan.shape);
}
int64_t out_object_offset(const NpuPlan& plan, int64_t step, int row) {
  return (local_step(plan, step) * kRowsPerColumn + row) * out_object_words(plan.shape);
}

namespace {

inline uint16_t bf16_bits(float f) { return uint16_t(std::bit_cast<uint32_t>(npu_math::round_bf16(f)) >> 16); }
inline float bf16_value(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

// One kv head's key and value rows at a position, as floats.
struct KeyRows {
  const NpuProblem& p;
  const NpuKeySource& src;
  int64_t row_elements;  // kv_heads * head_dim

  void read(int64_t position, int kv_head, float* k, float* v) const {
    const int D = p.head_dim;
    const int64_t off = int64_t(kv_head) * D;
    if (position >= src.batch_pos) {
      std::memcpy(k, src.k + (position - src.batch_pos) * row_elements + off, D * sizeof(float));
      std::memcpy(v, src.v + (position - src.batch_pos) * row_elements + off, D * sizeof(float));
      return;
    }
    const int64_t s = src.cache->slot_of(src.layer, position);
    if (src.cache->element() == DType::F32) {
      std::memcpy(k, reinterpret_cast<const float*>(src.cache->keys(src.layer)) + s * row_elements + off, D * 4);
      std::memcpy(v, reinterpret_cast<const float*>(src.cache->values(src.layer)) + s * row_elements + off, D * 4);
    } else {
      const auto* ck = reinterpret_cast<const uint16_t*>(src.cache->keys(src.layer)) + s * row_elements + off;
      const auto* cv = reinterpret_cast<const uint16_t*>(src.cache->values(src.layer)) + s * row_elements + off;
      for (int d = 0; d < D; ++d) {
        k[d] = fp16_to_float(ck[d]);
        v[d] = fp16_to_float(cv[d]);
      }
    }
  }
};

int tiles_valid(const NpuPlan& plan, const NpuStep& s) {
  return s.kv_head < 0 ? 0 : int((s.key_end - s.key_begin + plan.shape.kv_keys - 1) / plan.shape.kv_keys);
}

int64_t steps_per_launch(const NpuPlan& plan) { return int64_t(kColumns) * plan.shape.steps_per_launch; }

void check_launch(const NpuPlan& plan, int launch) {
  if (launch < 0 || launch >= plan.launches)
    throw Error("npu: launch " + std::to_string(launch) + " is not in a plan of " + std::to_string(plan.launches));
}

}  // namespace

void pack_npu_launch(const NpuPlan& plan, int launch, const float* q, const NpuKeySource& keys,
                     std::span<int32_t> q_words, std::span<int32_t> kv_words, ThreadPool& pool) {
  check_launch(plan, launch);
  const NpuProblem& p = plan.problem;
  const NpuTileShape& shape = plan.shape;
  const NpuBufferWords need = npu_launch_words(shape);
  if (int64_t(q_words.size()) < need.q || int64_t(kv_words.size()) < need.kv)
    throw Error("npu: input buffers are smaller than a launch");
  if (keys.batch_pos > p.pos) throw Error("npu: the batch's own keys start after its first query");
  const int D = p.head_dim, group = p.group();
  const int64_t q_row = int64_t(p.heads) * D, kv_row = int64_t(p.kv_heads) * D;
  const float q_scale = float(double(p.q_scale) * double(kLog2e));
  const KeyRows rows{p, keys, kv_row};
  const int64_t first_step = launch * steps_per_launch(plan);
  pool.parallel_for(steps_per_launch(plan), [&](int64_t begin, int64_t end) {
    std::vector<float> k(D), v(D);
    for (int64_t si = first_step + begin; si < first_step + end; ++si) {
      const NpuStep& s = plan.steps[si];
      const int valid_tiles = tiles_valid(plan, s);
      for (int r = 0; r < kRowsPerColumn; ++r) {
        int32_t* obj = q_words.data() + q_object_offset(plan, si, r);
        std::memset(obj, 0, size_t(q_object_words(shape)) * 4);
        const NpuQTile* tile = s.kv_head >= 0 && s.q_tiles[r] >= 0 ? &plan.q_tiles[s.q_tiles[r]] : nullptr;
        obj[kDescMagic] = kDescriptorMagic;
        obj[kDescRowsValid] = tile ? tile->rows_valid : 0;
        obj[kDescGroup] = group;
        obj[kDescQueryPos] = int32_t(p.pos);
        obj[kDescFirstRow] = tile ? int32_t(tile->first_row) : 0;
        obj[kDescKeyPos] = int32_t(s.key_begin);
        obj[kDescKeyEnd] = int32_t(s.key_end);
        obj[kDescTilesValid] = tile ? valid_tiles : 0;
        obj[kDescWindow] = p.window;
        obj[kDescTileCounter] = 0;
        if (!tile) continue;
        auto* qt = reinterpret_cast<uint16_t*>(obj + kDescriptorWords);
        for (int i = 0; i < tile->rows_valid; ++i) {
          const int64_t row = tile->first_row + i;
          const int head = s.kv_head * group + int(row % group);
          const float* src = q + (row / group) * q_row + int64_t(head) * D;
          for (int d = 0; d < D; ++d) qt[q_offset(D, i, d)] = bf16_bits(src[d] * q_scale);
        }
      }
      for (int t = 0; t < shape.tiles_per_step; ++t) {
        int32_t* obj = kv_words.data() + kv_object_offset(plan, si, t);
        std::memset(obj, 0, size_t(kv_object_words(shape)) * 4);
        if (t >= valid_tiles) continue;
        auto* kt = reinterpret_cast<uint16_t*>(obj);
        uint16_t* vt = kt + shape.kv_keys * D;
        for (int j = 0; j < shape.kv_keys; ++j) {
          const int64_t position = s.key_begin + int64_t(t) * shape.kv_keys + j;
          if (position >= s.key_end) break;
          rows.read(position, s.kv_head, k.data(), v.data());
          for (int d = 0; d < D; ++d) {
            kt[kt_offset(shape.kv_keys, d, j)] = bf16_bits(k[d]);
            vt[v_offset(D, j, d)] = bf16_bits(v[d]);
          }
        }
      }
    }
  });
}

NpuMerge::NpuMerge(const NpuPlan& plan) : plan_(plan) {
  const size_t rows = plan.q_tiles.size() * size_t(plan.shape.q_rows);
  max_.assign(rows, kNoMax);
  sum_.assign(rows, 0.0f);
  acc_.assign(rows * size_t(plan.problem.head_dim), 0.0f);
}

void NpuMerge::add_launch(int launch, std::span<const int32_t> out_words, ThreadPool& pool) {
  check_launch(plan_, launch);
  if (int64_t(out_words.size()) < npu_launch_words(plan_.shape).out) throw Error("npu: output buffer is smaller than a launch");
  const int D = plan_.problem.head_dim, BQ = plan_.shape.q_rows;
  // Q tiles are independent; a Q tile's chunk parts are folded in key order (its items are
  // consecutive and their launches never decrease). The two halves of a split chunk are folded like
  // two chunks: the same exact power-of-two rescaling, one fp32 rounding per added element.
  pool.parallel_for(int64_t(plan_.q_tiles.size()), [&](int64_t begin, int64_t end) {
    for (int64_t ti = begin; ti < end; ++ti) {
      const NpuQTile& tile = plan_.q_tiles[ti];
      for (int64_t item = tile.first_item; item < tile.first_item + tile.items; ++item) {
        if (plan_.launch_of(plan_.item_steps[item]) != launch) continue;
        const float* out =
            reinterpret_cast<const float*>(out_words.data() + out_object_offset(plan_, plan_.item_steps[item], tile.row_slot));
        for (int i = 0; i < tile.rows_valid; ++i) {
          const float l = out[BQ * D + BQ + i];
          if (!(l > 0)) continue;  // no key of this chunk was visible to the row
          const size_t row = size_t(ti) * BQ + i;
          const float m = out[BQ * D + i];
          float* acc = &acc_[row * D];
          // Running maximum over chunks; every rescaling is by an exact power of two.
          if (m > max_[row]) {
            const int down = sum_[row] > 0 ? int(max_[row] - m) : 0;
            for (int d = 0; d < D; ++d) acc[d] = std::ldexp(acc[d], down);
            sum_[row] = std::ldexp(sum_[row], down);
            max_[row] = m;
          }
          const int shift = int(m - max_[row]);
          sum_[row] += std::ldexp(l, shift);
          for (int d = 0; d < D; ++d) acc[d] += std::ldexp(out[o_offset(D, i, d)], shift);
        }
      }
    }
  });
}

void NpuMerge::finish(float* att, ThreadPool& pool) const {
  const NpuProblem& p = plan_.problem;
  const int D = p.head_dim, group = p.group(), BQ = plan_.shape.q_rows;
  const int64_t q_row = int64_t(p.heads) * D;
  pool.parallel_for(int64_t(plan_.q_tiles.size()), [&](int64_t begin, int64_t end) {
    for (int64_t ti = begin; ti < end; ++ti) {
      const NpuQTile& tile = plan_.q_tiles[ti];
      for (int i = 0; i < tile.rows_valid; ++i) {
        const size_t row = size_t(ti) * BQ + i;
        const int64_t flat = tile.first_row + i;
        float* dst = att + (flat / group) * q_row + int64_t(tile.kv_head * group + int(flat % group)) * D;
        for (int d = 0; d < D; ++d) dst[d] = sum_[row] > 0 ? acc_[row * D + d] / sum_[row] : 0.0f;
      }
    }
  });
}

void unpack_npu_queries(const NpuPlan& plan, int launch, std::span<const int32_t> q_words, float* q) {
  check_launch(plan, launch);
  const NpuProblem& p = plan.problem;
  const int D = p.head_dim, group = p.group();
  const int64_t first_step = launch * steps_per_launch(plan);
  for (int64_t si = first_step; si < first_step + steps_per_launch(plan); ++si) {
    const NpuStep& s = plan.steps[si];
    if (s.kv_head < 0) continue;
    for (int r = 0; r < kRowsPerColumn; ++r) {
      const int32_t* obj = q_words.data() + q_object_offset(plan, si, r);
      const auto* qt = reinterpret_cast<const uint16_t*>(obj + kDescriptorWords);
      for (int i = 0; i < obj[kDescRowsValid]; ++i) {
        const int64_t row = int64_t(obj[kDescFirstRow]) + i;
        float* dst = q + (row / group) * int64_t(p.heads) * D + int64_t(s.kv_head * group + int(row % group)) * D;
        for (int d = 0; d < D; ++d) dst[d] = bf16_value(qt[q_offset(D, i, d)]);
      }
    }
  }
}

void unpack_npu_keys_values(const NpuPlan& plan, int launch, std::span<const int32_t> kv_words, int kv_head,
                            int64_t key_begin, int64_t key_end, float* k_out, float* v_out, std::vector<bool>& found) {
  check_launch(plan, launch);
  const int D = plan.problem.head_dim;
  const int keys = plan.shape.kv_keys;
  found.resize(size_t(std::max<int64_t>(0, key_end - key_begin)), false);
  const int64_t first_step = launch * steps_per_launch(plan);
  for (int64_t si = first_step; si < first_step + steps_per_launch(plan); ++si) {
    const NpuStep& s = plan.steps[si];
    if (s.kv_head != kv_head) continue;
    for (int t = 0; t < tiles_valid(plan, s); ++t) {
      const auto* kt = reinterpret_cast<const uint16_t*>(kv_words.data() + kv_object_offset(plan, si, t));
      const uint16_t* vt = kt + keys * D;
      for (int j = 0; j < keys; ++j) {
        const int64_t position = s.key_begin + int64_t(t) * keys + j;
        if (position >= s.key_end || position < key_begin || position >= key_end) continue;
        found[position - key_begin] = true;
        for (int d = 0; d < D; ++d) {
          k_out[(position - key_begin) * D + d] = bf16_value(kt[kt_offset(keys, d, j)]);
          v_out[(position - key_begin) * D + d] = bf16_value(vt[v_offset(D, j, d)]);
        }
      }
    }
  }
}

}  // namespace kiln
