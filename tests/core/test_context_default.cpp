// The context a load gets when the caller leaves it to the engine: the model's trained length, cut
// to what memory holds beside the weights and to one GPU buffer, never silently past either.
#include <QtTest>
#include <algorithm>

#include "engine/context_budget.h"
#include "kiln/hardware.h"
#include "kiln/engine.h"
#include "model/presets.h"
#include "model/weights.h"

using namespace kiln;

namespace {
constexpr uint64_t kGiB = 1ull << 30, kMiB = 1ull << 20;

Gemma3Config preset(const char* name) {
  auto c = preset_config(name);
  if (!c) qFatal("no preset %s", name);
  return *c;
}
}  // namespace

class ContextDefaultTest : public QObject {
  Q_OBJECT

 private slots:
  void a_machine_with_room_gets_the_trained_length() {
    const Gemma3Config c = preset("gemma3-4b");
    QCOMPARE(c.max_position_embeddings, 131072);
    const ContextBudget big{64 * kGiB, 0, "RAM"};
    QCOMPARE(default_context(c, weight_bytes_for(c, DType::Q8_0), DType::F16, big), 131072);
  }

  void less_memory_cuts_it_to_what_fits_beside_the_weights() {
    // Gemma 3 4B: 34 layers, every sixth global (5), 4 KV heads of 256. Per position an f16 global
    // layer holds 4 * 256 * 2 (keys, values) * 2 bytes; the 29 sliding layers hold 1024 positions at most.
    const Gemma3Config c = preset("gemma3-4b");
    QCOMPARE(int(std::count(c.layer_is_global.begin(), c.layer_is_global.end(), true)), 5);
    const uint64_t weights = weight_bytes_for(c, DType::Q8_0);
    const uint64_t memory = 6 * kGiB;
    const ContextBudget six{memory, 0, "RAM"};
    const uint64_t room = memory - memory / 10 - weights;
    const uint64_t sliding = 29ull * 1024 * 4 * 256 * 2 * 2;
    const uint64_t per_position = 5ull * 4 * 256 * 2 * 2;
    const int expected = int((room - sliding) / per_position) / 1024 * 1024;
    QVERIFY2(expected > 8192 && expected < 131072, qPrintable(QString::number(expected)));
    QCOMPARE(default_context(c, weights, DType::F16, six), expected);
    // What it chose fits with the margin kept; the next step of 1024 would not.
    QVERIFY(weights + kv_cache_bytes_for(c, expected, DType::F16) <= memory - memory / 10);
    QVERIFY(weights + kv_cache_bytes_for(c, expected + 1024, DType::F16) > memory - memory / 10);
    // F32 keys and values take twice the room.
    QVERIFY(default_context(c, weights, DType::F32, six) < expected);
  }

  void one_gpu_buffer_caps_it() {
    // Gemma 3 27B: 16 KV heads of 128; a global layer's keys in f16 are 4096 bytes a position, so a
    // 128 MiB binding (lavapipe's) holds 32768 of them. RoPE (128 * 8 bytes) is smaller.
    const Gemma3Config c = preset("gemma3-27b");
    const ContextBudget gpu{1024 * kGiB, 128 * kMiB, "the memory of a GPU"};
    QCOMPARE(default_context(c, weight_bytes_for(c, DType::Q4_0), DType::F16, gpu), 32768);
    const ContextBudget wide{1024 * kGiB, 4 * kGiB, "the memory of a GPU"};
    QCOMPARE(default_context(c, weight_bytes_for(c, DType::Q4_0), DType::F16, wide), 131072);
  }

  void unknown_or_too_little_memory() {
    const Gemma3Config c = preset("gemma3-1b");
    QCOMPARE(c.max_position_embeddings, 32768);
    QCOMPARE(default_context(c, weight_bytes_for(c, DType::Q8_0), DType::F16, ContextBudget{}), 8192);  // as before
    // Weights that barely fit leave a usable context rather than none; the load then says what it lacks.
    const ContextBudget tiny{weight_bytes_for(c, DType::Q8_0), 0, "RAM"};
    QCOMPARE(default_context(c, weight_bytes_for(c, DType::Q8_0), DType::F16, tiny), 1024);
  }

  void the_budget_is_where_the_load_runs() {
    LoadOptions cpu;
    cpu.backend = BackendKind::Cpu;
    const ContextBudget ram = context_budget_for(cpu);
    QCOMPARE(ram.where, std::string("RAM"));
    QCOMPARE(ram.max_binding_bytes, uint64_t(0));
    QVERIFY(ram.memory_bytes > 0);
    // Vulkan chosen by hand runs on the first device (a CPU implementation too): its heap and its
    // buffer limit count, not RAM's.
    const HardwareInfo hw = probe_hardware();
    if (hw.gpus.empty()) QSKIP("no Vulkan device here");
    LoadOptions vulkan;
    vulkan.backend = BackendKind::Vulkan;
    vulkan.vulkan_device = hw.gpus.front().index;
    const ContextBudget gpu = context_budget_for(vulkan);
    if (!hw.gpus.front().usable && hw.gpus.front().type != "cpu") QSKIP("the first Vulkan device cannot run Kiln");
    QCOMPARE(gpu.where, "the memory of " + hw.gpus.front().name);
    QCOMPARE(gpu.max_binding_bytes, hw.gpus.front().max_storage_buffer_range);
    QVERIFY(gpu.memory_bytes > 0);
  }

  void a_real_load_takes_the_models_own_length() {
    LoadOptions o;
    o.path = KILN_TEST_DATA "/fixtures/tiny-gemma3-a";
    o.backend = BackendKind::Cpu;
    o.precision = Precision::F16;
    o.threads = 1;
    auto engine = Engine::load(o);
    QCOMPARE(engine->info().context_length, engine->info().max_context);
    QCOMPARE(engine->info().max_context, 4096);
    for (const std::string& note : engine->info().notes) QVERIFY2(note.find("the context is") == std::string::npos, note.c_str());
  }
};

QTEST_GUILESS_MAIN(ContextDefaultTest)
#include "test_context_default.moc"
