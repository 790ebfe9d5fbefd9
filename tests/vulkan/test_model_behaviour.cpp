// What the Vulkan backend promises beyond numbers: no allocation while decoding, one submit a token,
// GPU timestamps per op and layer, barriers by default and stage flags (forced) that change no
// result, a rewritable last position, and clear errors on bad input and bad tuning.
#include <QtTest>

#include <algorithm>
#include <optional>

#include "generate/sampler.h"
#include "kiln/engine.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan_probe.h"
#include "model_fixture.h"

using namespace kiln;
using namespace kiln::test;

namespace {

// Greedy decode steps after `prompt` up to position `until`, every step's logits one after another.
std::vector<float> greedy_step_logits(Backend& b, const std::vector<int32_t>& prompt, int until, int vocab) {
  std::vector<float> logits(static_cast<size_t>(vocab)), out;
  b.forward(prompt, 0, false, logits.data());
  for (int p = int(prompt.size()); p < until; ++p) {
    const int32_t next = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
    b.forward(std::span(&next, 1), p, false, logits.data());
    out.insert(out.end(), logits.begin(), logits.end());
  }
  return out;
}

}  // namespace

class VulkanModelBehaviour : public QObject {
  Q_OBJECT
 private slots:
  void decode_is_allocation_free_data() {
    QTest::addColumn<QString>("family");
    QTest::newRow("this device's plan") << QString();
    QTest::newRow("nvidia plan") << QString("nvidia");  // stage flags
  }

  // Decoding allocates nothing, builds no pipeline or descriptor set, and submits once a token; a
  // batch and the decode steps after it record kernels resolved at load, none looked up by name.
  void decode_is_allocation_free() {
    QFETCH(QString, family);
    auto w = load_fixture("tiny-gemma3-b", DType::Q8_0);
    auto b = family.isEmpty() ? vulkan(w) : vulkan(w, {{"family", family.toStdString()}});
    const int vocab = w->config.vocab_size;
    std::vector<int32_t> ids{2, 10, 20, 30, 40, 50, 60};
    std::vector<float> logits(size_t(ids.size()) * vocab);
    b->forward(ids, 0, false, logits.data());
    for (int p = int(ids.size()); p < 40; ++p) {
      const int32_t next = int32_t(std::max_element(logits.begin(), logits.begin() + vocab) - logits.begin());
      b->forward(std::span(&next, 1), p, false, logits.data());
    }
    QCOMPARE(counter(*b, "decode_tokens"), 33.0);
    QCOMPARE(counter(*b, "allocations_during_decode"), 0.0);
    QCOMPARE(counter(*b, "descriptor_set_allocations_during_decode"), 0.0);
    QCOMPARE(counter(*b, "pipeline_creations_during_decode"), 0.0);
    QCOMPARE(counter(*b, "pipeline_lookups_after_load"), 0.0);
    QCOMPARE(counter(*b, "submits_per_token"), 1.0);
  }

  // Greedy decoding's pick made on the GPU (forward_argmax) is the host's argmax of the logits,
  // from a batch and from each decode step, with each step queued behind the one before (running
  // ahead, NVIDIA's plan forced here); the cache it leaves gives the same logits afterwards, whether
  // the caller then feeds the token the GPU already ran or another; and it decodes with one submit
  // a token, no allocation.
  void greedy_pick_on_the_device() {
    auto w = load_fixture("tiny-gemma3-b", DType::Q8_0);
    const int vocab = w->config.vocab_size;
    auto host = vulkan(w), device = vulkan(w, {{"family", "nvidia"}});
    const std::vector<int32_t> prompt{2, 10, 20, 30, 40};
    std::vector<float> logits(static_cast<size_t>(vocab)), after(static_cast<size_t>(vocab));
    host->forward(prompt, 0, false, logits.data());
    const std::optional<int32_t> first = device->forward_argmax(prompt, 0);
    QVERIFY(first.has_value());
    QCOMPARE(*first, kiln::argmax(logits));
    int32_t next = *first;
    for (int p = int(prompt.size()); p < 30; ++p) {
      const std::span<const int32_t> fed(&next, 1);
      host->forward(fed, p, false, logits.data());
      const int32_t picked = device->forward_argmax(fed, p).value();
      QCOMPARE(picked, kiln::argmax(logits));
      next = picked;
    }
    // 25 steps: each submitted the step after it, and the first its own as well.
    QCOMPARE(counter(*device, "submits_per_token"), 26.0 / 25.0);
    QCOMPARE(counter(*device, "allocations_during_decode"), 0.0);
    QCOMPARE(counter(*device, "descriptor_set_allocations_during_decode"), 0.0);
    // Position 30 ran ahead, fed `next`. Another token there instead, then `next` over it.
    const int32_t other = (next + 1) % vocab;
    for (int32_t t : {other, next}) {
      host->forward(std::span<const int32_t>(&t, 1), 30, false, logits.data());
      device->forward(std::span<const int32_t>(&t, 1), 30, false, after.data());
      QVERIFY(after == logits);
    }
  }

  // A greedy step whose stage flags give up is run again with barriers, and the step queued
  // behind it (fed by its garbage pick) is dropped: the picks stay the host's.
  void greedy_steps_survive_giving_up_stage_flags() {
    auto w = load_fixture("tiny-gemma3-b", DType::Q4_0);
    const int vocab = w->config.vocab_size;
    auto host = vulkan(w);
    auto device = vulkan(w, {{"family", "nvidia"}, {"stage_flags_test_give_up", "1"}});  // flags, running ahead
    const std::vector<int32_t> prompt{2, 10, 20, 30};
    std::vector<float> logits(static_cast<size_t>(vocab));
    host->forward(prompt, 0, false, logits.data());
    int32_t next = device->forward_argmax(prompt, 0).value();
    QCOMPARE(next, kiln::argmax(logits));
    for (int p = int(prompt.size()); p < 16; ++p) {
      const std::span<const int32_t> fed(&next, 1);
      host->forward(fed, p, false, logits.data());
      next = device->forward_argmax(fed, p).value();
      QCOMPARE(next, kiln::argmax(logits));
    }
    QCOMPARE(counter(*device, "stage_flag_fallbacks"), 1.0);
    QCOMPARE(counter(*device, "stage_flags"), 0.0);
  }

  // The engine decodes greedily through the GPU's pick: the text of the host's pick (top-k 1
  // reads the logits back), also when the request before left the cache behind it.
  void engine_greedy_text_is_the_hosts() {
    LoadOptions o;
    o.path = fixture_dir("tiny-gemma3-b");
    o.backend = BackendKind::Vulkan;
    o.context_length = 128;
    o.threads = 2;
    auto engine = Engine::load(o);
    QVERIFY(engine->info().backend.rfind("vulkan", 0) == 0);
    GenerateOptions device_pick, host_pick;
    device_pick.sampling.temperature = 0;
    host_pick.sampling.temperature = 1;
    host_pick.sampling.top_k = 1;
    device_pick.max_tokens = host_pick.max_tokens = 24;
    auto text = [&](const std::string& prompt, const GenerateOptions& g) {
      std::string out;
      engine->generate(prompt, g, [&](std::string_view t) {
        out += t;
        return true;
      });
      return out;
    };
    for (const char* prompt : {"The kiln was hot", "Sixty-four tokens of clay"}) {
      const std::string host = text(prompt, host_pick), device = text(prompt, device_pick);
      QVERIFY(!host.empty());
      QCOMPARE(device, host);
      QCOMPARE(text(prompt, device_pick), host);
    }
  }

  // GPU timestamps summed per op and layer, reset by each take.
  void profile_per_op_and_layer() {
    auto w = load_fixture("tiny-gemma3-a", DType::F32);
    auto b = vulkan(w);
    b->set_profiling(true);
    std::vector<int32_t> ids{2, 5, 6, 7};
    std::vector<float> logits(size_t(w->config.vocab_size));
    b->forward(ids, 0, false, logits.data());
    b->forward(std::span(ids).first(1), 4, false, logits.data());
    const auto profile = b->take_profile();
    int attention_layers = 0;
    bool logits_seen = false;
    for (const OpTiming& t : profile) {
      QCOMPARE(t.device, std::string("gpu"));
      QVERIFY(t.micros > 0);
      if (t.op == "attention") {
        QCOMPARE(t.calls, uint64_t(2));  // one per forward call (no split this short)
        ++attention_layers;
      }
      logits_seen |= t.op == "logits" && t.layer == -1;
    }
    QCOMPARE(attention_layers, w->config.num_layers);
    QVERIFY(logits_seen);
    QVERIFY(b->take_profile().empty());
  }

  // This device's own plan, and that of any family but NVIDIA: pipeline barriers, no step run
  // ahead; the pick is still the host's.
  void default_plan_uses_barriers() {
    auto w = load_fixture("tiny-gemma3-b", DType::Q8_0);
    const int vocab = w->config.vocab_size;
    auto host = vulkan(w), device = vulkan(w);
    const std::optional<GpuPlan> plan = device->gpu_plan();
    QVERIFY(plan.has_value());
    vk::Instance instance;  // the device vulkan() chose
    const GpuDevice& chosen = instance.devices()[vk::choose_device(instance.devices(), -1, true)].report;
    if (chosen.type == "cpu") QCOMPARE(plan->family, std::string("cpu"));
    if (plan->family != "nvidia") {
      QVERIFY(!plan->stage_flags);
      QVERIFY(!plan->run_ahead);
    }
    QCOMPARE(plan->subgroup_size, chosen.subgroup_size);
    // Tensor cores where the device has them (KHR's kernel first where built), else int8 tiles
    // where it has integer dot products in hardware (these are Q8_0 weights), else fp32 tiles.
    if (chosen.cooperative_matrix)
      QVERIFY(plan->prefill == "khr_coopmat" || plan->prefill == "nv_coopmat");
    else
      QCOMPARE(plan->prefill, std::string(chosen.integer_dot_fast ? "int_dot" : "fp32"));
    for (const char* family : {"amd", "intel", "cpu", "other"}) {
      auto b = vulkan(w, {{"family", family}});
      QCOMPARE(b->gpu_plan()->family, std::string(family));
      QVERIFY(!b->gpu_plan()->stage_flags);
      QVERIFY(!b->gpu_plan()->run_ahead);
      QCOMPARE(counter(*b, "stage_flags"), 0.0);
    }
    if (plan->family == "nvidia") return;
    QCOMPARE(counter(*device, "stage_flags"), 0.0);
    const std::vector<int32_t> prompt{2, 10, 20, 30, 40};
    std::vector<float> logits(static_cast<size_t>(vocab));
    host->forward(prompt, 0, false, logits.data());
    int32_t next = device->forward_argmax(prompt, 0).value();
    QCOMPARE(next, kiln::argmax(logits));
    for (int p = int(prompt.size()); p < 20; ++p) {
      const std::span<const int32_t> fed(&next, 1);
      host->forward(fed, p, false, logits.data());
      next = device->forward_argmax(fed, p).value();
      QCOMPARE(next, kiln::argmax(logits));
    }
    QCOMPARE(counter(*device, "submits_per_token"), 1.0);  // nothing queued ahead
  }

  void stage_flags_match_barriers_data() {
    QTest::addColumn<bool>("int8_dot");
    QTest::newRow("q4_0") << false;
    QTest::newRow("q4_0, int8 dots") << true;  // int8 activations and the wide add_norm
  }

  // Decode steps ordered by stage flags (forced: lavapipe's own plan has barriers) give the logits
  // of barriers, bit for bit (the same kernels in the same order); a step whose wait gives up is
  // run again with barriers, and the backend stays on barriers.
  void stage_flags_match_barriers() {
    QFETCH(bool, int8_dot);
    if (int8_dot) {
      std::string status;
      const auto devices = list_vulkan_devices(status);
      if (std::none_of(devices.begin(), devices.end(), [](const GpuDevice& d) { return d.integer_dot; }))
        QSKIP("no Vulkan device with integer dot products");
    }
    auto w = load_fixture("tiny-gemma3-b", DType::Q4_0);
    const int vocab = w->config.vocab_size;
    const std::vector<int32_t> prompt{2, 10, 20, 30};
    auto decode = [&](const char* flags, std::unique_ptr<Backend>& b, bool give_up = false) {
      b = vulkan(w, {{"stage_flags", flags},
                     {"int8_dot", int8_dot ? "1" : "0"},
                     {"wide_norm", "1"},
                     {"stage_flags_test_give_up", give_up ? "1" : "0"}});
      return greedy_step_logits(*b, prompt, 16, vocab);
    };
    std::unique_ptr<Backend> barriers, flags, gave_up;
    const std::vector<float> expected = decode("0", barriers);
    QCOMPARE(counter(*barriers, "stage_flags"), 0.0);
    QCOMPARE(counter(*barriers, "wide_norm"), int8_dot ? 1.0 : 0.0);
    const std::vector<float> with_flags = decode("1", flags);
    QCOMPARE(counter(*flags, "stage_flags"), 1.0);
    QCOMPARE(counter(*flags, "wide_norm"), int8_dot ? 1.0 : 0.0);
    QCOMPARE(counter(*flags, "stage_flag_fallbacks"), 0.0);
    QVERIFY(with_flags == expected);
    const std::vector<float> after_giving_up = decode("1", gave_up, true);
    QCOMPARE(counter(*gave_up, "stage_flag_fallbacks"), 1.0);
    QCOMPARE(counter(*gave_up, "stage_flags"), 0.0);
    QVERIFY(after_giving_up == expected);
  }

  void down_starts_on_gate_ups_first_part_data() {
    QTest::addColumn<bool>("wide_norm");  // down gathers the add_norm's sums (matvec_qin_sums_early_*)
    QTest::newRow("wide add_norm") << true;
    QTest::newRow("add_norm") << false;
  }

  // With stage flags and int8 activations, down reads the first part of gate_up's output once the
  // workgroups that wrote it are done, and the rest after all of gate_up (KernelPlan::early_part):
  // the logits of every decode step are those of waiting for all of gate_up, and of barriers, bit
  // for bit. The fixtures' MLPs are too narrow for a part of whole cache lines, so this model has
  // tiny-gemma3-b's shape with a wider MLP and random weights.
  void down_starts_on_gate_ups_first_part() {
    QFETCH(bool, wide_norm);
    std::string status;
    const auto devices = list_vulkan_devices(status);
    if (std::none_of(devices.begin(), devices.end(), [](const GpuDevice& d) { return d.integer_dot; }))
      QSKIP("no Vulkan device with integer dot products");
    Gemma3Config config = open_checkpoint(fixture_dir("tiny-gemma3-b")).config;
    config.hidden_size = 256;
    config.intermediate_size = 2048;  // down: 64 blocks a row, the part 48 of them
    auto w = std::make_shared<const Gemma3Weights>(synthetic_weights(config, DType::Q4_0, 7, 2));
    const int vocab = config.vocab_size;
    auto decode = [&](const char* flags, const char* early, std::unique_ptr<Backend>& b) {
      b = vulkan(w, {{"stage_flags", flags}, {"int8_dot", "1"}, {"early_part", early}, {"wide_norm", wide_norm ? "1" : "0"}});
      return greedy_step_logits(*b, {2, 10, 20, 30}, 10, vocab);
    };
    std::unique_ptr<Backend> barriers, whole, early;
    const std::vector<float> expected = decode("0", "0.85", barriers);
    const std::vector<float> with_whole_waits = decode("1", "0", whole);
    const std::vector<float> with_part = decode("1", "0.85", early);
    QCOMPARE(counter(*barriers, "early_part_layers"), 0.0);  // the part waits on counters: flags only
    QCOMPARE(counter(*whole, "early_part_layers"), 0.0);
    QCOMPARE(counter(*early, "wide_norm"), wide_norm ? 1.0 : 0.0);
    QCOMPARE(counter(*early, "early_part_layers"), double(config.num_layers));
    QCOMPARE(counter(*early, "stage_flags"), 1.0);
    QCOMPARE(counter(*early, "stage_flag_fallbacks"), 0.0);
    QVERIFY(with_whole_waits == expected);
    QVERIFY(with_part == expected);
  }

  // Going back one position rewrites it: the same logits as the first time.
  void rewrite_last_position() {
    auto w = load_fixture("tiny-gemma3-a", DType::F32);
    auto b = vulkan(w);
    const int vocab = w->config.vocab_size;
    std::vector<int32_t> ids{2, 100, 200, 300, 400, 500, 17, 18, 19, 20};  // past the window of 8
    std::vector<float> first(vocab), again(vocab);
    b->forward(ids, 0, false, first.data());
    b->forward(std::span(ids).last(1), int(ids.size()) - 1, false, again.data());
    double diff = 0;
    for (int v = 0; v < vocab; ++v) diff = std::max(diff, double(std::abs(first[v] - again[v])));
    QVERIFY2(diff < 1e-5, qPrintable(QString("max difference %1").arg(diff)));
  }

  // Bad input is a clear kiln::Error, and the backend still works afterwards.
  void bad_input_is_an_error() {
    auto w = load_fixture("tiny-gemma3-a", DType::Q4_0);
    auto b = vulkan(w, {}, 16);
    std::vector<float> logits(size_t(w->config.vocab_size) * 32);
    const std::vector<int32_t> bad{2, 512}, ok{2, 3};
    QVERIFY_THROWS_EXCEPTION(Error, b->forward(bad, 0, false, logits.data()));
    QVERIFY_THROWS_EXCEPTION(Error, b->forward(ok, 5, false, logits.data()));        // a gap in the cache
    QVERIFY_THROWS_EXCEPTION(Error, b->forward(std::vector<int32_t>(17, 3), 0, true, logits.data()));  // > context
    QVERIFY_THROWS_EXCEPTION(Error, b->forward({}, 0, false, logits.data()));
    b->forward(ok, 0, false, logits.data());
    QVERIFY(std::isfinite(logits[0]));

    VulkanOptions o;
    o.device = 99;
    try {
      make_vulkan_backend(w, o);
      QFAIL("device 99 accepted");
    } catch (const Error& e) {
      QVERIFY2(std::string(e.what()).find("no device 99") != std::string::npos, e.what());
    }
    o.device = -1;
    o.allow_cpu_device = true;
    o.context_length = 1 << 28;  // its KV cache cannot fit one binding: refused before any upload
    QVERIFY_THROWS_EXCEPTION(Error, make_vulkan_backend(w, o));
  }

  // A tuning key the plan does not know, or a value it cannot take, is an Error that names it (and
  // lists the keys), never silently ignored.
  void bad_tuning_is_an_error() {
    auto w = load_fixture("tiny-gemma3-a", DType::Q4_0);
    auto message = [&](const VulkanTuning& tuning) -> std::string {
      try {
        vulkan(w, tuning);
      } catch (const Error& e) {
        return e.what();
      }
      return "accepted";
    };
    const std::string unknown = message({{"stage_flag", "1"}});
    QVERIFY2(unknown.find("unknown key 'stage_flag'") != std::string::npos, unknown.c_str());
    QVERIFY2(unknown.find("stage_flags=0|1") != std::string::npos, unknown.c_str());  // the valid keys
    QVERIFY2(unknown.find("matvec=wg,rows,tpr") != std::string::npos, unknown.c_str());
    for (const auto& [key, value] : VulkanTuning{{"stage_flags", "yes"},
                                                 {"int8_dot", "2"},
                                                 {"early_part", "1.5"},
                                                 {"attention_split", "8"},
                                                 {"matvec", "128,8"},
                                                 {"matvec", "100,8,64"},
                                                 {"matvec_glu", "128,3,64"},
                                                 {"prefill_queries", "5"},
                                                 {"family", "nvidia-ish"},
                                                 {"max_chunk_bytes", "-1"}}) {
      const std::string e = message({{key, value}});
      QVERIFY2(e.find(key + "=" + value + ": expected") != std::string::npos, e.c_str());
    }
    QVERIFY_THROWS_EXCEPTION(Error, check_vulkan_tuning({{"bogus", "1"}}));
    check_vulkan_tuning({{"stage_flags", "0"}, {"matvec", "128,8,64"}, {"early_part", "0.6"}});  // valid
  }
};

QTEST_GUILESS_MAIN(VulkanModelBehaviour)
#include "test_model_behaviour.moc"
