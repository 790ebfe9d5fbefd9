// A device that throws or misses its deadline: the backend runs that request's attention on the
// CPU, gives the same logits as the CPU path, and says so (notes, counters, the profile's device).
// Asking for the NPU on a machine without one is a note at load time, not an error. A timed-out
// device gets a fresh context before the next request.
#include <QtTest>
#include <cstring>
#include <thread>

#include "fixture_backend.h"
#include "kiln/engine.h"
#include "runtime/npu/npu_detect.h"
#include "runtime/npu/npu_emulator.h"
#include "runtime/vulkan_probe.h"

using namespace kiln;
using namespace kiln::test;

namespace {

// Fails on the calls where fail(call) is true, else runs the emulator.
class FaultyDevice final : public NpuDevice {
 public:
  FaultyDevice(ThreadPool& pool, std::function<bool(int)> fail, std::chrono::milliseconds delay = {})
      : emulator_(make_npu_emulator(pool)), fail_(std::move(fail)), delay_(delay) {}
  std::string name() const override { return "npu-emulator"; }
  void run(const NpuJob& job, std::chrono::steady_clock::time_point deadline) override {
    if (fail_(calls_++)) throw Error("npu: injected fault");
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);  // a device that hangs past the deadline
    emulator_->run(job, deadline);
  }

 private:
  std::unique_ptr<NpuDevice> emulator_;
  std::function<bool(int)> fail_;
  std::chrono::milliseconds delay_;
  int calls_ = 0;
};

// A device that hangs: once a launch of it times out it stays hung (every later launch misses its
// deadline too) until reset() gives it a fresh context, as an NPU whose hw_context holds a stuck
// launch would. hang_on(call) says which calls start a hang; reset() fails when reset_fails is set.
class HangingDevice final : public NpuDevice {
 public:
  struct State {
    int calls = 0, resets = 0;
    bool hung = false;
  };
  HangingDevice(ThreadPool& pool, std::function<bool(int)> hang_on, std::shared_ptr<State> state, bool reset_fails)
      : emulator_(make_npu_emulator(pool)), hang_on_(std::move(hang_on)), state_(std::move(state)),
        reset_fails_(reset_fails) {}
  std::string name() const override { return "npu-emulator"; }
  void run(const NpuJob& job, std::chrono::steady_clock::time_point deadline) override {
    if (hang_on_(state_->calls++)) state_->hung = true;
    if (state_->hung) std::this_thread::sleep_until(deadline + std::chrono::milliseconds(5));
    emulator_->run(job, deadline);  // past the deadline: throws NpuTimeout
  }
  void reset() override {
    if (reset_fails_) throw Error("npu: injected reset failure");
    ++state_->resets;
    state_->hung = false;
  }

 private:
  std::unique_ptr<NpuDevice> emulator_;
  std::function<bool(int)> hang_on_;
  std::shared_ptr<HangingDevice::State> state_;
  bool reset_fails_;
};

AttentionRouting hanging(std::function<bool(int)> hang_on, std::shared_ptr<HangingDevice::State> state,
                         bool reset_fails = false) {
  AttentionRouting r;
  r.npu_timeout = std::chrono::milliseconds(500);  // generous: only hung calls may miss it
  r.npu_device = [=](ThreadPool& pool) { return std::make_unique<HangingDevice>(pool, hang_on, state, reset_fails); };
  return r;
}

AttentionRouting faulty(std::function<bool(int)> fail, std::chrono::milliseconds delay = {},
                        std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
  AttentionRouting r;
  r.npu_timeout = timeout;
  r.npu_device = [fail, delay](ThreadPool& pool) { return std::make_unique<FaultyDevice>(pool, fail, delay); };
  return r;
}

double counter(const Backend& b, const std::string& name) {
  for (const auto& [n, v] : b.counters())
    if (n == name) return v;
  return -1;
}

bool any_note(const std::vector<std::string>& notes, const std::string& part) {
  for (const auto& n : notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

const std::vector<int32_t>& case_ids() {
  static const Reference ref = read_reference(fixture_dir("tiny-gemma3-a") + "/reference.json");
  return ref.cases[0].ids;
}

}  // namespace

class NpuFallback : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { weights_ = fixture_weights("tiny-gemma3-a"); }

  void a_throwing_device_falls_back_to_the_cpu() {
    const int vocab = weights_->config.vocab_size;
    auto cpu = fixture_backend(weights_, AttentionPlacement::Cpu);
    auto npu = fixture_backend(weights_, AttentionPlacement::NpuEmulator, faulty([](int) { return true; }));
    const auto expected = backend_logits(*cpu, case_ids(), vocab);
    const auto got = backend_logits(*npu, case_ids(), vocab);
    for (size_t t = 0; t < expected.size(); ++t)
      QVERIFY(std::memcmp(expected[t].data(), got[t].data(), size_t(vocab) * 4) == 0);  // the CPU path, exactly
    const auto notes = npu->take_notes();
    QVERIFY2(any_note(notes, "failed at layer 0 (npu: injected fault); this request's attention runs on the CPU"),
             notes.empty() ? "no note" : notes.front().c_str());
    QCOMPARE(counter(*npu, "attention_npu_fallbacks"), 1.0);  // one per request, not per layer
    QCOMPARE(counter(*npu, "attention_npu_calls"), 0.0);
  }

  // Three failed requests in a row turn the NPU off; the notes say so once.
  void repeated_failures_turn_the_npu_off() {
    const int vocab = weights_->config.vocab_size;
    auto npu = fixture_backend(weights_, AttentionPlacement::NpuEmulator, faulty([](int) { return true; }));
    std::vector<float> logits(vocab);
    const auto& ids = case_ids();
    for (int request = 0; request < 5; ++request) npu->forward(std::span(ids.data(), 4), 0, false, logits.data());
    QCOMPARE(counter(*npu, "attention_npu_fallbacks"), 3.0);
    QVERIFY(any_note(npu->take_notes(), "stays off until the model is reloaded"));
  }

  // A fault in one request does not stick: the next request runs on the NPU again.
  void a_transient_fault_costs_one_request() {
    const int vocab = weights_->config.vocab_size;
    auto npu = fixture_backend(weights_, AttentionPlacement::NpuEmulator, faulty([](int call) { return call == 2; }));
    npu->set_profiling(true);
    std::vector<float> logits(vocab);
    const auto& ids = case_ids();
    npu->forward(std::span(ids.data(), 6), 0, false, logits.data());  // fails at layer 2, layers 2-5 on the CPU
    QCOMPARE(counter(*npu, "attention_npu_fallbacks"), 1.0);
    QCOMPARE(counter(*npu, "attention_npu_calls"), 2.0);
    int cpu = 0, emulated = 0;
    for (const OpTiming& t : npu->take_profile())
      if (t.op == "attention") (t.device == "cpu" ? cpu : emulated) += 1;
    QCOMPARE(emulated, 2);
    QCOMPARE(cpu, 4);
    npu->forward(std::span(ids.data() + 6, 1), 6, false, logits.data());
    QCOMPARE(counter(*npu, "attention_npu_calls"), 8.0);
    QCOMPARE(counter(*npu, "attention_npu_fallbacks"), 1.0);
  }

  void a_device_past_its_deadline_falls_back() {
    const int vocab = weights_->config.vocab_size;
    auto cpu = fixture_backend(weights_, AttentionPlacement::Cpu);
    auto npu = fixture_backend(weights_, AttentionPlacement::NpuEmulator,
                               faulty([](int) { return false; }, std::chrono::milliseconds(30), std::chrono::milliseconds(5)));
    const auto expected = backend_logits(*cpu, case_ids(), vocab, 5);
    const auto got = backend_logits(*npu, case_ids(), vocab, 5);
    for (size_t t = 0; t < expected.size(); ++t)
      QVERIFY(std::memcmp(expected[t].data(), got[t].data(), size_t(vocab) * 4) == 0);
    QVERIFY(counter(*npu, "attention_npu_timeouts") >= 1);
    QVERIFY(any_note(npu->take_notes(), "did not finish in time"));
  }

  // A timeout leaves the device hung; the next request first gets it a fresh context, then runs on
  // it. Without the reset every later request would time out too.
  void a_timed_out_device_is_reset_before_the_next_request() {
    const int vocab = weights_->config.vocab_size;
    auto state = std::make_shared<HangingDevice::State>();
    auto npu = fixture_backend(weights_, AttentionPlacement::NpuEmulator, hanging([](int call) { return call == 1; }, state));
    std::vector<float> logits(vocab);
    const auto& ids = case_ids();
    npu->forward(std::span(ids.data(), 4), 0, false, logits.data());  // layer 1 times out, the rest on the CPU
    QCOMPARE(counter(*npu, "attention_npu_timeouts"), 1.0);
    QCOMPARE(state->resets, 0);  // not yet: the reset waits for the next request
    const int layers = weights_->config.num_layers;
    for (int t = 4; t < 7; ++t) npu->forward(std::span(&ids[t], 1), t, false, logits.data());
    QCOMPARE(state->resets, 1);
    QCOMPARE(counter(*npu, "attention_npu_resets"), 1.0);
    QCOMPARE(counter(*npu, "attention_npu_fallbacks"), 1.0);
    QCOMPARE(counter(*npu, "attention_npu_calls"), 1.0 + 3.0 * layers);  // layer 0, then every layer of 3 requests
    const auto notes = npu->take_notes();
    QVERIFY(any_note(notes, "did not finish in time"));
    QVERIFY(any_note(notes, "was reset after a timeout (a fresh hardware context, kernel reloaded)"));
  }

  // A device that hangs again after every reset still turns the NPU off after three requests.
  void a_device_that_keeps_hanging_is_turned_off() {
    const int vocab = weights_->config.vocab_size;
    auto state = std::make_shared<HangingDevice::State>();
    auto npu = fixture_backend(weights_, AttentionPlacement::NpuEmulator, hanging([](int) { return true; }, state));
    std::vector<float> logits(vocab);
    const auto& ids = case_ids();
    for (int t = 0; t < 5; ++t) npu->forward(std::span(&ids[t], 1), t, false, logits.data());
    QCOMPARE(counter(*npu, "attention_npu_timeouts"), 3.0);
    QCOMPARE(state->resets, 2);  // before requests 2 and 3; after the third failure the NPU is off
    QCOMPARE(state->calls, 3);
    QVERIFY(any_note(npu->take_notes(), "stays off until the model is reloaded"));
  }

  // When the reset itself fails the NPU goes off at once, with a note, and the CPU carries on.
  void a_failed_reset_turns_the_npu_off() {
    const int vocab = weights_->config.vocab_size;
    auto cpu = fixture_backend(weights_, AttentionPlacement::Cpu);
    auto state = std::make_shared<HangingDevice::State>();
    auto npu = fixture_backend(weights_, AttentionPlacement::NpuEmulator,
                               hanging([](int call) { return call == 0; }, state, /*reset_fails=*/true));
    const auto expected = backend_logits(*cpu, case_ids(), vocab, 3);
    const auto got = backend_logits(*npu, case_ids(), vocab, 3);
    for (size_t t = 0; t < expected.size(); ++t)
      QVERIFY(std::memcmp(expected[t].data(), got[t].data(), size_t(vocab) * 4) == 0);
    QCOMPARE(state->calls, 1);  // the timed-out call; nothing after the failed reset
    QCOMPARE(counter(*npu, "attention_npu_resets"), 0.0);
    QVERIFY(any_note(npu->take_notes(), "could not be reset after a timeout (npu: injected reset failure)"));
  }

  // This machine has no NPU: asking for it is a clear note and today's CPU path.
  void npu_without_hardware_is_a_note() {
    if (npu_usable(detect_npu())) QSKIP("this machine has a usable NPU");
    LoadOptions o;
    o.path = fixture_dir("tiny-gemma3-a");
    o.precision = Precision::F32;
    o.backend = BackendKind::Cpu;
    o.attention = AttentionPlacement::Npu;
    o.context_length = 64;
    o.threads = 2;
    auto engine = Engine::load(o);
    QVERIFY(any_note(engine->info().notes, "NPU attention was asked for, but"));
    QVERIFY(any_note(engine->info().notes, "attention runs on the cpu"));
    QCOMPARE(engine->info().backend, std::string("cpu (2 threads)"));
    o.attention = AttentionPlacement::Cpu;
    auto reference = Engine::load(o);
    const auto& ids = case_ids();
    QVERIFY(engine->logits(ids) == reference->logits(ids));
  }

 private:
  std::shared_ptr<const Gemma3Weights> weights_;
};

QTEST_APPLESS_MAIN(NpuFallback)
#include "test_npu_fallback.moc"
