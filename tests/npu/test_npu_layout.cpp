// The NPU kernel's tile layout: every block layout is a bijection, the plan covers every query row
// once and every key a row may see exactly once, and packing round-trips to the bf16 values of the
// right positions: odd sequence lengths, GQA (groups of 1, 2, 3 and 8), window edges, ring wraps.
// Every buffer of both kernel variants fits its bank, tile and DMA-channel limits under the
// allocation scheme the Makefile passes.
#include <QtTest>
#include <bit>
#include <fstream>
#include <set>
#include <sstream>

#include "npu_test_support.h"
#include "quant/convert.h"
#include "runtime/cpu/thread_pool.h"
#include "runtime/npu/npu_kernel_math.h"
#include "runtime/npu/npu_layout.h"
#include "runtime/npu/npu_tile_memory.h"

using namespace kiln;
using namespace kiln::test;
using namespace kiln_npu;

namespace {

// A shape small enough that the test fixtures' sizes need many chunks, steps and launches.
NpuTileShape small_shape(int head_dim, int kv_split = 1) { return {head_dim, 4, 8, 2, 1, 1, kv_split}; }

float expected_bf16(float x) { return npu_math::round_bf16(x); }

// Every (position, kv head) row the batch's queries can see: [lo, pos + n).
int64_t union_begin(const NpuProblem& p) { return p.first_visible(0); }

}  // namespace

class NpuLayout : public QObject {
  Q_OBJECT
 private slots:
  void block_layouts_are_bijections_data() {
    QTest::addColumn<int>("head_dim");
    QTest::addColumn<int>("q_rows");
    QTest::addColumn<int>("keys");
    QTest::newRow("kernel D=128") << kShapeD128.head_dim << kShapeD128.q_rows << kShapeD128.kv_keys;
    QTest::newRow("kernel D=256") << kShapeD256.head_dim << kShapeD256.q_rows << kShapeD256.kv_keys;
    QTest::newRow("fixture a (D=16)") << 16 << 4 << 8;
  }
  void block_layouts_are_bijections() {
    QFETCH(int, head_dim);
    QFETCH(int, q_rows);
    QFETCH(int, keys);
    const int D = head_dim;
    std::set<int> q, kt, v, o;
    for (int r = 0; r < q_rows; ++r)
      for (int d = 0; d < D; ++d) {
        q.insert(q_offset(D, r, d));
        o.insert(o_offset(D, r, d));
      }
    for (int j = 0; j < keys; ++j)
      for (int d = 0; d < D; ++d) {
        kt.insert(kt_offset(keys, d, j));
        v.insert(v_offset(D, j, d));
      }
    QCOMPARE(int(q.size()), q_rows * D);
    QCOMPARE(*q.rbegin(), q_rows * D - 1);
    QCOMPARE(int(o.size()), q_rows * D);
    QCOMPARE(*o.rbegin(), q_rows * D - 1);
    QCOMPARE(int(kt.size()), keys * D);
    QCOMPARE(*kt.rbegin(), keys * D - 1);
    QCOMPARE(int(v.size()), keys * D);
    QCOMPARE(*v.rbegin(), keys * D - 1);
    // mmul operand blocks are contiguous: the 32 elements of Q block (0, 0) are rows 0-3, d 0-7.
    for (int r = 0; r < 4; ++r)
      for (int d = 0; d < 8; ++d) QVERIFY(q_offset(D, r, d) < 32);
  }

  // Compute-tile memory: the numbers behind kernels/npu/README.md's tile shapes.
  void kernel_shapes_fit_the_phoenix_tiles() {
    QVERIFY(compute_tile_bytes(kShapeD128) <= kComputeTileBytes);
    QVERIFY(compute_tile_bytes(kShapeD256) <= kComputeTileBytes);
    // Doubling the keys per tile of the D=256 variant would not fit: the shape is at the limit.
    NpuTileShape bigger = kShapeD256;
    bigger.kv_keys *= 2;
    QVERIFY(compute_tile_bytes(bigger) > kComputeTileBytes);
    QCOMPARE(npu_tile_shape(256).q_rows, kShapeD256.q_rows);
    QCOMPARE(npu_tile_shape(16).head_dim, 16);
    QVERIFY_THROWS_EXCEPTION(Error, npu_tile_shape(12));
    QVERIFY_THROWS_EXCEPTION(Error, npu_tile_shape(512));
  }

  // Every buffer of a compute tile placed as basic-sequential places it: within 64 KiB, aligned,
  // without overlap; the only buffers wider than a 16 KiB bank are the out objects (why the Makefile
  // must not leave the choice to the bank-aware default).
  void compute_tile_buffers_fit_data() {
    QTest::addColumn<int>("head_dim");
    QTest::addColumn<int>("kv_split");
    QTest::newRow("D=128") << 128 << 1;
    QTest::newRow("D=256") << 256 << 1;
    QTest::newRow("D=128, two columns per key chunk") << 128 << 2;
    QTest::newRow("D=256, two columns per key chunk") << 256 << 2;
  }
  void compute_tile_buffers_fit() {
    QFETCH(int, head_dim);
    QFETCH(int, kv_split);
    const NpuTileShape shape = npu_tile_shape(head_dim, kv_split);
    QCOMPARE(shape.kv_split, kv_split);
    const NpuTileMemory m = npu_compute_tile_memory(shape);
    int previous_end = 0;
    for (const NpuTileBuffer& b : m.buffers) {
      QVERIFY2(b.address >= previous_end, qPrintable(QString::fromStdString(b.name) + " overlaps"));
      QCOMPARE(b.address % kNpuBufferAlignment, 0);
      QVERIFY2(b.bytes > 0 && b.bytes <= kComputeTileBytes, b.name.c_str());
      previous_end = b.address + b.bytes * b.copies;
      qInfo("D=%d %-44s %6d B x%d at %6d", head_dim, b.name.c_str(), b.bytes, b.copies, b.address);
    }
    qInfo("D=%d compute tile: %d of %d bytes", head_dim, m.end, m.capacity);
    QVERIFY2(m.end <= m.capacity, qPrintable(QString("%1 bytes of %2").arg(m.end).arg(m.capacity)));
    QCOMPARE(m.end, compute_tile_bytes(shape));  // the kernel's static_assert counts the same bytes
    const std::vector<std::string> wide = npu_buffers_wider_than_a_bank(m);
    QCOMPARE(int(wide.size()), 1);
    QCOMPARE(wide[0], std::string("out_<c>_<r> (O, m, l)"));
    QVERIFY(out_object_words(shape) * 4 > kBankBytes);
    QVERIFY(out_object_words(shape) * 4 <= 2 * kBankBytes);  // spans two banks, never three
  }

  void memory_tile_buffers_fit() {
    for (int head_dim : {128, 256})
      for (int kv_split : {1, 2}) {
        const NpuTileMemory m = npu_memory_tile_memory(npu_tile_shape(head_dim, kv_split));
        qInfo("D=%d kv_split %d memory tile: %d of %d bytes", head_dim, kv_split, m.end, m.capacity);
        QVERIFY(m.end <= m.capacity);
        QCOMPARE(m.end, mem_tile_bytes(npu_tile_shape(head_dim, kv_split)));
      }
  }

  // The split variant: the same tile buffers and key chunk, half the K/V tiles per column step, so
  // half the K/V bytes per launch (and per column step); Q and out objects as many as before.
  void split_variant_buffers() {
    for (int head_dim : {128, 256}) {
      const NpuTileShape one = npu_tile_shape(head_dim, 1), two = npu_tile_shape(head_dim, 2);
      QCOMPARE(chunk_keys(two), chunk_keys(one));
      QCOMPARE(column_part_keys(two) * 2, column_part_keys(one));
      QCOMPARE(compute_tile_bytes(two), compute_tile_bytes(one));
      const NpuBufferWords w1 = npu_launch_words(one), w2 = npu_launch_words(two);
      QCOMPARE(w2.kv * 2, w1.kv);
      QCOMPARE(w2.q, w1.q);
      QCOMPARE(w2.out, w1.out);
      qInfo("D=%d launch buffers, split: Q %lld, K/V %lld, out %lld bytes", head_dim, (long long)w2.q * 4,
            (long long)w2.kv * 4, (long long)w2.out * 4);
    }
    QVERIFY_THROWS_EXCEPTION(Error, npu_tile_shape(128, 3));
  }

  // bringup.sh's memlock check leaves room for what the XRT device maps: one launch of each variant
  // at the larger head size (plus 1 MiB for the two instruction streams, a few KiB each in
  // mlir-aie's examples).
  void memlock_covers_both_variants() {
    std::ifstream in(std::string(KILN_SOURCE_DIR) + "/kernels/npu/bringup.sh");
    QVERIFY2(in, "kernels/npu/bringup.sh is missing");
    std::stringstream text;
    text << in.rdbuf();
    const std::string s = text.str();
    const size_t at = s.find("MEMLOCK_NEED_KIB=");
    QVERIFY(at != std::string::npos);
    const int64_t need = std::stoll(s.substr(at + 17)) * 1024;
    int64_t mapped = 1 << 20;
    for (int kv_split : {1, 2}) {
      const NpuBufferWords w = npu_launch_words(npu_tile_shape(256, kv_split));
      mapped += 4 * (w.q + w.kv + w.out);
    }
    qInfo("mapped at head_dim 256: %.1f MiB; bringup.sh asks for %.1f MiB", mapped / 1048576.0, need / 1048576.0);
    QVERIFY(need >= mapped);
  }

  // Every unit of a split plan sits on a column pair in one slot: the first half on the even column,
  // the second (when the keys reach it) on the odd one, with the same Q tiles, keys continuing.
  void split_plan_pairs_the_halves() {
    NpuProblem p;
    p.heads = 8;
    p.kv_heads = 4;
    p.head_dim = 16;
    p.pos = 45;
    p.n = 3;
    const NpuTileShape shape = small_shape(16, 2);  // chunk 32 keys, halves of 16
    const NpuPlan plan = plan_npu_attention(p, shape);
    int pairs = 0, lone = 0;
    for (int launch = 0; launch < plan.launches; ++launch)
      for (int column = 0; column < kColumns; column += 2)
        for (int slot = 0; slot < shape.steps_per_launch; ++slot) {
          const NpuStep& a = plan.steps[plan.step_at(launch, column, slot)];
          const NpuStep& b = plan.steps[plan.step_at(launch, column + 1, slot)];
          if (b.kv_head >= 0) {
            QCOMPARE(a.kv_head, b.kv_head);
            QCOMPARE(a.key_end, b.key_begin);
            QCOMPARE(a.key_end - a.key_begin, int64_t(column_part_keys(shape)));
            for (int r = 0; r < kRowsPerColumn; ++r) QCOMPARE(a.q_tiles[r], b.q_tiles[r]);
            ++pairs;
          } else if (a.kv_head >= 0) {
            ++lone;
          }
        }
    // 48 keys per kv head: one full chunk (a pair) and 16 keys alone in a second unit.
    QCOMPARE(pairs, 4);
    QCOMPARE(lone, 4);
  }

  // The design's DMA channels per column against the tiles' limits: every memory-tile MM2S channel
  // is taken, which is what keeps K and V on one stream (core/runtime/npu/DESIGN.md, "Cycle model").
  void dma_channels_within_limits() {
    const NpuColumnChannels c = npu_column_channels();
    QVERIFY(c.mem_tile_mm2s <= kMemTileMm2s);
    QVERIFY(c.mem_tile_s2mm <= kMemTileS2mm);
    QVERIFY(c.compute_s2mm <= kComputeTileS2mm);
    QVERIFY(c.shim_mm2s <= kShimMm2s);
    QCOMPARE(c.mem_tile_mm2s, kMemTileMm2s);
  }

  // The Makefile passes the allocation scheme the placement above assumes.
  void makefile_pins_the_allocation_scheme() {
    std::ifstream in(std::string(KILN_SOURCE_DIR) + "/kernels/npu/Makefile");
    QVERIFY2(in, "kernels/npu/Makefile is missing");
    std::stringstream text;
    text << in.rdbuf();
    QVERIFY(text.str().find("--alloc-scheme=basic-sequential") != std::string::npos);
  }

  void plan_covers_rows_and_keys_once_data() {
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("kv_heads");
    QTest::addColumn<int>("window");
    QTest::addColumn<bool>("global");
    QTest::addColumn<int>("pos");
    QTest::addColumn<int>("n");
    QTest::addColumn<bool>("small");
    QTest::addColumn<int>("kv_split");
    QTest::newRow("decode, GQA 2, local, ring wrapped") << 4 << 2 << 8 << false << 37 << 1 << true << 1;
    QTest::newRow("odd prefill 7 at 0, GQA 3, local") << 6 << 2 << 16 << false << 0 << 7 << true << 1;
    QTest::newRow("odd prefill 33 after 5, global") << 4 << 2 << 8 << true << 5 << 33 << true << 1;
    QTest::newRow("group 8 > 4 rows per tile") << 8 << 1 << 8 << false << 9 << 3 << true << 1;
    QTest::newRow("window edge: pos = window - 1") << 4 << 2 << 8 << false << 7 << 2 << true << 1;
    QTest::newRow("window edge: pos = window") << 4 << 2 << 8 << false << 8 << 2 << true << 1;
    QTest::newRow("no GQA, batch longer than window") << 2 << 2 << 8 << false << 3 << 21 << true << 1;
    QTest::newRow("kernel shape, 27B-like decode at 1500") << 32 << 16 << 1024 << true << 1500 << 1 << false << 1;
    QTest::newRow("kernel shape, 1B-like prefill 129") << 4 << 1 << 512 << false << 700 << 129 << false << 1;
    QTest::newRow("split: odd prefill 33 after 5, global") << 4 << 2 << 8 << true << 5 << 33 << true << 2;
    QTest::newRow("split: decode, local, ring wrapped") << 4 << 2 << 8 << false << 37 << 1 << true << 2;
    QTest::newRow("split: 3 keys, shorter than a tile") << 4 << 2 << 8 << true << 0 << 3 << true << 2;
    QTest::newRow("split, kernel shape: 1B-like decode at 4095") << 4 << 1 << 512 << true << 4095 << 1 << false << 2;
    QTest::newRow("split, kernel shape: 4B-like prefill 129") << 8 << 4 << 1024 << false << 700 << 129 << false << 2;
  }
  void plan_covers_rows_and_keys_once() {
    QFETCH(int, heads);
    QFETCH(int, kv_heads);
    QFETCH(int, window);
    QFETCH(bool, global);
    QFETCH(int, pos);
    QFETCH(int, n);
    QFETCH(bool, small);
    QFETCH(int, kv_split);
    const int D = small ? 16 : 128;
    NpuProblem p;
    p.heads = heads;
    p.kv_heads = kv_heads;
    p.head_dim = D;
    p.window = global ? 0 : window;
    p.pos = pos;
    p.n = n;
    const NpuPlan plan = plan_npu_attention(p, small ? small_shape(D, kv_split) : npu_tile_shape(D, kv_split));
    QCOMPARE(int64_t(plan.steps.size()), int64_t(plan.launches) * kColumns * plan.shape.steps_per_launch);
    // Every row of every kv head in exactly one Q tile.
    std::vector<std::vector<int>> seen(kv_heads, std::vector<int>(size_t(p.rows()), 0));
    for (const NpuQTile& t : plan.q_tiles) {
      QVERIFY(t.rows_valid > 0 && t.rows_valid <= plan.shape.q_rows);
      for (int i = 0; i < t.rows_valid; ++i) ++seen[t.kv_head][t.first_row + i];
    }
    for (const auto& rows : seen)
      for (int count : rows) QCOMPARE(count, 1);
    // Each Q tile's chunks, in item order, tile [lo, hi) of what its rows see, without gap or overlap.
    std::set<int64_t> steps_used;
    for (const NpuQTile& t : plan.q_tiles) {
      int64_t expect = p.first_visible(t.first_row - t.row_slot * int64_t(plan.shape.q_rows));
      for (int it = 0; it < t.items; ++it) {
        const NpuStep& s = plan.steps[plan.item_steps[t.first_item + it]];
        QCOMPARE(s.kv_head, t.kv_head);
        QCOMPARE(s.key_begin, expect);
        QVERIFY(s.key_end > s.key_begin);
        QVERIFY(s.key_end - s.key_begin <= int64_t(plan.shape.kv_keys) * plan.shape.tiles_per_step);
        expect = s.key_end;
      }
      QVERIFY(expect > p.row_position(t.first_row + t.rows_valid - 1));  // the last row sees itself
      // The row that sees the fewest old keys still finds its first one in the tile's range.
      QVERIFY(plan.steps[plan.item_steps[t.first_item]].key_begin <= p.first_visible(t.first_row));
    }
    for (int64_t s : plan.item_steps) QVERIFY(steps_used.insert(s).second);
  }

  void pack_round_trips_data() {
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("kv_heads");
    QTest::addColumn<int>("window");
    QTest::addColumn<bool>("global");
    QTest::addColumn<int>("pos");
    QTest::addColumn<int>("n");
    QTest::addColumn<bool>("f16_cache");
    QTest::newRow("decode after the ring wrapped, f16 cache") << 4 << 2 << 8 << false << 29 << 1 << true;
    QTest::newRow("odd prefill 13 from 0, GQA 3") << 6 << 2 << 8 << false << 0 << 13 << false;
    QTest::newRow("window edge pos = window") << 4 << 2 << 8 << false << 8 << 3 << false;
    QTest::newRow("window edge pos = window + 1") << 4 << 2 << 8 << false << 9 << 3 << true;
    QTest::newRow("global, odd 17 after 11") << 4 << 2 << 8 << true << 11 << 17 << true;
    QTest::newRow("group 8, one kv head") << 8 << 1 << 8 << false << 5 << 5 << false;
  }
  void pack_round_trips() {
    QFETCH(int, heads);
    QFETCH(int, kv_heads);
    QFETCH(int, window);
    QFETCH(bool, global);
    QFETCH(int, pos);
    QFETCH(int, n);
    QFETCH(bool, f16_cache);
    const int D = 16;
    AttentionCase a = make_case(heads, kv_heads, D, window, global, pos, n, f16_cache ? DType::F16 : DType::F32, 5);
    ThreadPool pool(2);
    const NpuPlan plan = plan_npu_attention(make_npu_problem(a.config, a.layer, pos, n), small_shape(D));
    const NpuBufferWords words = npu_launch_words(plan.shape);
    std::vector<int32_t> qw(size_t(words.q)), kvw(size_t(words.kv));
    std::vector<float> q_back(a.q.size(), NAN);
    const int64_t lo = union_begin(plan.problem), hi = pos + n;
    const int64_t row = int64_t(kv_heads) * D;
    std::vector<std::vector<float>> k_back(kv_heads, std::vector<float>(size_t((hi - lo) * D), NAN));
    std::vector<std::vector<float>> v_back = k_back;
    std::vector<std::vector<bool>> found(kv_heads);
    // One position before the range must never be packed (the window's edge).
    const int64_t below = lo - 1;
    std::vector<float> k_below(D), v_below(D);
    std::vector<bool> found_below;
    for (int launch = 0; launch < plan.launches; ++launch) {
      pack_npu_launch(plan, launch, a.q.data(), {a.cache.get(), a.layer, a.k.data(), a.v.data(), pos}, qw, kvw, pool);
      unpack_npu_queries(plan, launch, qw, q_back.data());
      for (int g = 0; g < kv_heads; ++g) {
        unpack_npu_keys_values(plan, launch, kvw, g, lo, hi, k_back[g].data(), v_back[g].data(), found[g]);
        if (below >= 0)
          unpack_npu_keys_values(plan, launch, kvw, g, below, below + 1, k_below.data(), v_below.data(), found_below);
      }
    }
    const float scale = float(double(plan.problem.q_scale) * double(kLog2e));
    for (size_t i = 0; i < a.q.size(); ++i) QCOMPARE(q_back[i], expected_bf16(a.q[i] * scale));
    // Keys from the cache (ring slot of the position) and from the batch, as bf16 of the stored value.
    for (int g = 0; g < kv_heads; ++g) {
      for (int64_t position = lo; position < hi; ++position) {
        QVERIFY2(found[g][position - lo], qPrintable(QString("position %1 missing").arg(position)));
        for (int d = 0; d < D; ++d) {
          float k, v;
          if (position >= pos) {
            k = a.k[(position - pos) * row + g * D + d];
            v = a.v[(position - pos) * row + g * D + d];
          } else {
            const int64_t slot = a.cache->slot_of(a.layer, position);
            if (f16_cache) {
              k = fp16_to_float(reinterpret_cast<const uint16_t*>(a.cache->keys(a.layer))[slot * row + g * D + d]);
              v = fp16_to_float(reinterpret_cast<const uint16_t*>(a.cache->values(a.layer))[slot * row + g * D + d]);
            } else {
              k = reinterpret_cast<const float*>(a.cache->keys(a.layer))[slot * row + g * D + d];
              v = reinterpret_cast<const float*>(a.cache->values(a.layer))[slot * row + g * D + d];
            }
          }
          QCOMPARE(k_back[g][(position - lo) * D + d], expected_bf16(k));
          QCOMPARE(v_back[g][(position - lo) * D + d], expected_bf16(v));
        }
      }
    }
    if (below >= 0) QVERIFY2(found_below.empty() || !found_below[0], "a key outside the window was packed");
  }

  void idle_steps_consume_nothing() {
    // A single decode row: one busy step, the rest of the launch idle with zero tiles to compute.
    AttentionCase a = make_case(4, 2, 16, 8, true, 3, 1, DType::F32, 9);
    ThreadPool pool(1);
    const NpuPlan plan = plan_npu_attention(make_npu_problem(a.config, a.layer, 3, 1), npu_tile_shape(16));
    QCOMPARE(plan.launches, 1);
    const NpuBufferWords words = npu_launch_words(plan.shape);
    std::vector<int32_t> qw(size_t(words.q)), kvw(size_t(words.kv));
    pack_npu_launch(plan, 0, a.q.data(), {a.cache.get(), a.layer, a.k.data(), a.v.data(), 3}, qw, kvw, pool);
    int busy = 0;
    for (int64_t s = 0; s < int64_t(plan.steps.size()); ++s)
      for (int r = 0; r < kRowsPerColumn; ++r) {
        const int32_t* desc = qw.data() + q_object_offset(plan, s, r);
        QCOMPARE(desc[kDescMagic], kDescriptorMagic);
        if (desc[kDescRowsValid] == 0) {
          QCOMPARE(desc[kDescTilesValid], 0);
        } else {
          ++busy;
          QCOMPARE(desc[kDescRowsValid], 2);  // two query heads share kv head g
          QCOMPARE(desc[kDescKeyEnd], 4);
          QCOMPARE(desc[kDescTilesValid], 1);
        }
      }
    QCOMPARE(busy, 2);  // one row slot per kv head
  }
};

QTEST_APPLESS_MAIN(NpuLayout)
#include "test_npu_layout.moc"
