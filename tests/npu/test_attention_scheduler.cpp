// Where attention runs: explicit placements are honoured or refused with a reason, Auto without an
// NPU changes nothing, and Auto with an NPU follows the cost model, per phase and layer kind.
#include <QtTest>
#include <cmath>

#include "runtime/npu/attention_scheduler.h"
#include "runtime/npu/npu_cycle_model.h"
#include "runtime/npu/npu_layout.h"

using namespace kiln;

namespace {

// Gemma 3 27B (heads 32 / 16, head_dim 128, window 1024) at 8k context on an 8-core laptop.
ScheduleInputs gemma27b(AttentionPlacement requested, bool gpu_backend, bool npu) {
  ScheduleInputs in;
  in.requested = requested;
  in.gpu_backend = gpu_backend;
  in.npu_usable = npu;
  in.npu_reason = npu ? "" : "no /dev/accel device";
  in.heads = 32;
  in.kv_heads = 16;
  in.head_dim = 128;
  in.window = 1024;
  in.context = 8192;
  in.threads = 8;
  return in;
}

bool all(const AttentionSchedule& s, AttentionDevice d) {
  for (auto p : {AttentionPhase::Prefill, AttentionPhase::Decode})
    for (auto k : {LayerKind::Local, LayerKind::Global})
      if (s.at(p, k) != d) return false;
  return true;
}

bool has_note(const AttentionSchedule& s, const std::string& part) {
  for (const auto& n : s.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

class AttentionScheduler : public QObject {
  Q_OBJECT
 private slots:
  void explicit_placements() {
    QVERIFY(all(schedule_attention(gemma27b(AttentionPlacement::Cpu, true, true)), AttentionDevice::Cpu));
    QVERIFY(all(schedule_attention(gemma27b(AttentionPlacement::NpuEmulator, false, false)), AttentionDevice::NpuEmulator));
    QVERIFY(all(schedule_attention(gemma27b(AttentionPlacement::Npu, false, true)), AttentionDevice::Npu));
    QVERIFY(all(schedule_attention(gemma27b(AttentionPlacement::Gpu, true, false)), AttentionDevice::Gpu));
  }

  void refused_placements_say_why() {
    const AttentionSchedule gpu = schedule_attention(gemma27b(AttentionPlacement::Gpu, false, false));
    QVERIFY(all(gpu, AttentionDevice::Cpu));
    QVERIFY(has_note(gpu, "Vulkan backend"));
    const AttentionSchedule npu = schedule_attention(gemma27b(AttentionPlacement::Npu, true, false));
    QVERIFY(all(npu, AttentionDevice::Gpu));
    QVERIFY(has_note(npu, "no /dev/accel device"));
    ScheduleInputs odd = gemma27b(AttentionPlacement::Npu, false, true);
    odd.head_dim = 96;
    const AttentionSchedule s = schedule_attention(odd);
    QVERIFY(all(s, AttentionDevice::Cpu));
    QVERIFY(has_note(s, "head_dim 128 and 256"));
  }

  // No NPU: exactly today's path, with nothing to say.
  void auto_without_npu_changes_nothing() {
    const AttentionSchedule cpu = schedule_attention(gemma27b(AttentionPlacement::Auto, false, false));
    QVERIFY(all(cpu, AttentionDevice::Cpu));
    QVERIFY(cpu.notes.empty());
    QVERIFY(cpu.estimates.empty());
    QVERIFY(all(schedule_attention(gemma27b(AttentionPlacement::Auto, true, false)), AttentionDevice::Gpu));
  }

  // The 780M beats the Phoenix NPU at every phase by more than the margin (2x): the GPU keeps it.
  // By the cycle model it is at least 3x faster everywhere (27B prefill: 3.9x).
  void auto_on_vulkan_keeps_the_gpu() {
    for (int head_dim : {128, 256}) {
      ScheduleInputs in = gemma27b(AttentionPlacement::Auto, true, true);
      in.head_dim = head_dim;
      const AttentionSchedule s = schedule_attention(in);
      QVERIFY(all(s, AttentionDevice::Gpu));
      QCOMPARE(int(s.estimates.size()), 8);
      for (const AttentionEstimate& e : s.estimates)
        if (e.device == AttentionDevice::Npu) {
          const double gpu = estimate_attention_seconds(AttentionDevice::Gpu, e.phase, e.kind, in);
          QVERIFY2(e.seconds > 3 * gpu, qPrintable(QString("npu %1 s, gpu %2 s").arg(e.seconds).arg(gpu)));
        }
    }
  }

  // On the CPU backend the choice is the cost model's, phase by phase: NPU exactly where it is
  // estimated faster by the margin.
  void auto_on_cpu_follows_the_estimates() {
    for (int threads : {1, 8, 16}) {
      ScheduleInputs in = gemma27b(AttentionPlacement::Auto, false, true);
      in.threads = threads;
      const AttentionSchedule s = schedule_attention(in);
      for (auto p : {AttentionPhase::Prefill, AttentionPhase::Decode})
        for (auto k : {LayerKind::Local, LayerKind::Global}) {
          const double cpu = estimate_attention_seconds(AttentionDevice::Cpu, p, k, in);
          const double npu = estimate_attention_seconds(AttentionDevice::Npu, p, k, in);
          QCOMPARE(s.at(p, k), npu * in.rates.npu_margin < cpu ? AttentionDevice::Npu : AttentionDevice::Cpu);
        }
      QCOMPARE(int(s.notes.size()), 4);  // one line per phase and layer kind
    }
  }

  void extreme_rates_decide_extremes() {
    ScheduleInputs in = gemma27b(AttentionPlacement::Auto, false, true);
    in.rates.npu_clock_hz = 1e15;
    in.rates.memory_bytes_per_s = 1e13;
    in.rates.pack_bytes_per_core_s = 1e13;
    in.rates.npu_launch_s = 0;
    QVERIFY(all(schedule_attention(in), AttentionDevice::Npu));
    in.rates.npu_clock_hz = 1e3;
    QVERIFY(all(schedule_attention(in), AttentionDevice::Cpu));
  }

  // DESIGN.md's "what bounds it": the D=128 variant is bound by its vector unit, the D=256 variant
  // by its one K/V stream; neither beats the matrix unit's peak (4x8x4 MACs a cycle). A decode tile
  // (2 query rows: the kernel skips the empty row blocks) is stream-bound at both sizes, and a
  // decode launch (one busy row of a column) costs the stream's time per step.
  void cycle_model_bounds() {
    const NpuTileCycles d128 = npu_tile_cycles(npu_tile_shape(128)), d256 = npu_tile_cycles(npu_tile_shape(256));
    QVERIFY(d128.mmul + d128.softmax > d128.stream);
    QVERIFY(d256.stream > d256.mmul + d256.softmax);
    for (int head_dim : {128, 256}) {
      const NpuTileShape shape = npu_tile_shape(head_dim);
      const NpuTileCycles t = npu_tile_cycles(shape);
      const double flops = 4.0 * shape.q_rows * shape.kv_keys * shape.head_dim;
      QVERIFY(flops / t.busy() <= 2.0 * kiln_npu::kMmulR * kiln_npu::kMmulS * kiln_npu::kMmulT);
      QVERIFY(t.mmul >= t.mmul_ops);
    }
    NpuProblem decode;
    decode.heads = 8;
    decode.kv_heads = 4;
    decode.head_dim = 256;
    decode.pos = 4000;
    decode.n = 1;
    for (int head_dim : {128, 256}) {
      const NpuTileCycles two_rows = npu_tile_cycles(npu_tile_shape(head_dim), 2);
      qInfo("D=%d, 2 query rows: stream %.0f, mmul %.0f (%d ops), softmax %.0f cycles per K/V tile", head_dim,
            two_rows.stream, two_rows.mmul, two_rows.mmul_ops, two_rows.softmax);
      QVERIFY(two_rows.stream > two_rows.mmul + two_rows.softmax);
      QVERIFY(two_rows.mmul_ops * 4 <= npu_tile_cycles(npu_tile_shape(head_dim)).mmul_ops);  // one row block
      QCOMPARE(npu_tile_cycles(npu_tile_shape(head_dim), 0).busy(), two_rows.stream);  // an idle row streams
    }
    const NpuPlan plan = plan_npu_attention(decode, npu_tile_shape(256));
    const NpuTileCycles t = npu_tile_cycles(plan.shape, 2);
    // 4 kv heads x 8 chunks of 512 keys: 8 steps per column, 2 launches, every step busy.
    QCOMPARE(plan.launches, 2);
    QCOMPARE(npu_launch_cycles(plan, 0), double(plan.shape.steps_per_launch) * plan.shape.tiles_per_step * t.busy());
  }

  // The numbers of DESIGN.md's tables (ms per layer, context 8192, 8 threads), printed from the
  // model itself; each NPU estimate is finite and no faster than its buffers cross DDR.
  void design_tables() {
    struct Model {
      const char* name;
      int heads, kv_heads, head_dim, window;
    };
    for (const Model& m : {Model{"1B", 4, 1, 256, 512}, Model{"4B", 8, 4, 256, 1024}, Model{"27B", 32, 16, 128, 1024}}) {
      ScheduleInputs in = gemma27b(AttentionPlacement::Auto, false, true);
      in.heads = m.heads;
      in.kv_heads = m.kv_heads;
      in.head_dim = m.head_dim;
      in.window = m.window;
      QString line = QString("%1:").arg(m.name);
      for (auto p : {AttentionPhase::Prefill, AttentionPhase::Decode})
        for (auto k : {LayerKind::Local, LayerKind::Global}) {
          ScheduleInputs gpu = in;
          gpu.gpu_backend = true;
          const double c = estimate_attention_seconds(AttentionDevice::Cpu, p, k, in) * 1e3;
          const double n = estimate_attention_seconds(AttentionDevice::Npu, p, k, in) * 1e3;
          const double g = estimate_attention_seconds(AttentionDevice::Gpu, p, k, gpu) * 1e3;
          const double n1 = estimate_npu_seconds(p, k, in, 1) * 1e3, n2 = estimate_npu_seconds(p, k, in, 2) * 1e3;
          QVERIFY(std::isfinite(n) && n > 0);
          QCOMPARE(n, std::min(n1, n2));  // the scheduler takes the faster variant
          line += QString(" | %1 %2: cpu %3, npu %4 (unsplit %5, split %6), gpu %7")
                      .arg(p == AttentionPhase::Prefill ? "prefill" : "decode")
                      .arg(k == LayerKind::Local ? "local" : "global")
                      .arg(c, 0, 'g', 3).arg(n, 0, 'g', 3).arg(n1, 0, 'g', 3).arg(n2, 0, 'g', 3).arg(g, 0, 'g', 3);
        }
      qInfo("%s", qPrintable(line));
    }
  }

  // Two columns per key chunk halve a column's step (half the K/V tiles on each column's stream), so
  // a launch that holds one chunk takes half the cycles; it wins decode where few kv heads leave
  // columns idle, and the scheduler picks it there, not for the 27B's prefill.
  void split_wins_decode_with_few_kv_heads() {
    NpuProblem one_chunk;
    one_chunk.heads = 4;
    one_chunk.kv_heads = 1;
    one_chunk.head_dim = 256;
    one_chunk.window = 512;
    one_chunk.pos = 4095;
    one_chunk.n = 1;
    const NpuPlan unsplit = plan_npu_attention(one_chunk, npu_tile_shape(256, 1));
    const NpuPlan split = plan_npu_attention(one_chunk, npu_tile_shape(256, 2));
    QCOMPARE(unsplit.launches, 1);
    QCOMPARE(split.launches, 1);
    const NpuTileCycles t = npu_tile_cycles(split.shape);
    QCOMPARE(npu_launch_cycles(split, 0) * 2, npu_launch_cycles(unsplit, 0));
    QCOMPARE(npu_launch_cycles(split, 0), split.shape.steps_per_launch * split.shape.tiles_per_step * t.busy());
    qInfo("1B decode, local layer: %.0f cycles unsplit, %.0f split", npu_launch_cycles(unsplit, 0),
          npu_launch_cycles(split, 0));

    ScheduleInputs b1 = gemma27b(AttentionPlacement::Auto, false, true);
    b1.heads = 4;
    b1.kv_heads = 1;
    b1.head_dim = 256;
    b1.window = 512;
    QCOMPARE(npu_kv_split_for(AttentionPhase::Decode, LayerKind::Local, b1), 2);
    const AttentionSchedule s = schedule_attention(b1);
    QCOMPARE(s.kv_split_at(AttentionPhase::Decode, LayerKind::Local), 2);
    QVERIFY(has_note(s, "two columns per key chunk"));
    b1.npu_kv_split = false;  // not installed: never chosen
    QCOMPARE(npu_kv_split_for(AttentionPhase::Decode, LayerKind::Local, b1), 1);
    const ScheduleInputs b27 = gemma27b(AttentionPlacement::Auto, false, true);
    QCOMPARE(npu_kv_split_for(AttentionPhase::Prefill, LayerKind::Global, b27), 1);
  }

  // Gemma 3 4B decode (8 query heads on 4 kv heads, D=256) halfway through 8k: what the array's
  // columns, compute rows and Q rows do, for DESIGN.md ("What the rows do").
  void decode_occupancy_of_gemma3_4b() {
    NpuProblem p;
    p.heads = 8;
    p.kv_heads = 4;
    p.head_dim = 256;
    p.pos = 4095;
    p.n = 1;
    for (int kv_split : {1, 2})
      for (int window : {0, 1024}) {
        p.window = window;
        const NpuPlan plan = plan_npu_attention(p, npu_tile_shape(256, kv_split));
        int busy_steps = 0, busy_rows = 0, q_rows = 0;
        for (const NpuStep& s : plan.steps) {
          if (s.kv_head < 0) continue;
          ++busy_steps;
          for (int r = 0; r < kiln_npu::kRowsPerColumn; ++r)
            if (s.q_tiles[r] >= 0) {
              ++busy_rows;
              q_rows += plan.q_tiles[s.q_tiles[r]].rows_valid;
            }
        }
        const int steps = int(plan.steps.size());
        double cycles = 0;
        for (int l = 0; l < plan.launches; ++l) cycles += npu_launch_cycles(plan, l);
        qInfo("4B decode, %s, kv_split %d: %d launches, %d of %d column steps busy, %d of %d compute tiles, "
              "%d of %d Q rows; %.0f cycles",
              window ? "local" : "global", kv_split, plan.launches, busy_steps, steps, busy_rows,
              steps * kiln_npu::kRowsPerColumn, q_rows, busy_rows * plan.shape.q_rows, cycles);
        QCOMPARE(busy_rows, busy_steps);               // one Q tile (2 rows: the group's 2 heads) per step
        QCOMPARE(q_rows, busy_rows * p.heads / p.kv_heads);
      }
  }

  // The model's physics: decode of a global layer grows with the context, a local layer's does not
  // beyond the window; prefill costs more than decode.
  void estimates_scale_with_the_work() {
    ScheduleInputs small = gemma27b(AttentionPlacement::Auto, true, true), large = small;
    small.context = 2048;
    large.context = 32768;
    for (AttentionDevice d : {AttentionDevice::Cpu, AttentionDevice::Gpu, AttentionDevice::Npu}) {
      QVERIFY(estimate_attention_seconds(d, AttentionPhase::Decode, LayerKind::Global, large) >
              4 * estimate_attention_seconds(d, AttentionPhase::Decode, LayerKind::Global, small));
      QVERIFY(estimate_attention_seconds(d, AttentionPhase::Decode, LayerKind::Local, large) <
              1.5 * estimate_attention_seconds(d, AttentionPhase::Decode, LayerKind::Local, small));
      QVERIFY(estimate_attention_seconds(d, AttentionPhase::Prefill, LayerKind::Global, large) >
              estimate_attention_seconds(d, AttentionPhase::Decode, LayerKind::Global, large));
    }
  }
};

QTEST_APPLESS_MAIN(AttentionScheduler)
#include "test_attention_scheduler.moc"
