// Where attention runs: explicit placements are honoured or refused with a reason, Auto without an
// NPU changes nothing, and Auto with an NPU follows the cost model, per phase and layer kind.
#include <QtTest>
#include <cmath>

#include "runtime/npu/attention_scheduler.h"
#include "runtime/npu/npu_cycle_model.h"

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
  // by its one K/V stream; neither beats the matrix unit's peak (4x8x4 MACs a cycle); a decode
  // launch (one busy row of a column) costs as much per step as a full one.
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
    const NpuPlan plan = plan_npu_attention(decode, npu_tile_shape(256));
    const NpuTileCycles t = npu_tile_cycles(plan.shape);
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
          QVERIFY(std::isfinite(n) && n > 0);
          line += QString(" | %1 %2: cpu %3, npu %4, gpu %5")
                      .arg(p == AttentionPhase::Prefill ? "prefill" : "decode")
                      .arg(k == LayerKind::Local ? "local" : "global")
                      .arg(c, 0, 'g', 3).arg(n, 0, 'g', 3).arg(g, 0, 'g', 3);
        }
      qInfo("%s", qPrintable(line));
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
