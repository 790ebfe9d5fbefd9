// The engine on llama.cpp's GGUF files gives llama.cpp's logits (computed by llama.cpp itself on
// the same files): F16 within 2e-3 relative error, Q8_0 within 2e-2, Q4_0 and the K-quant mixes
// (Q4_K_M, Q3_K_M: Q3_K, Q4_K, Q5_K and Q6_K) within 5e-2; the same top-1 token at >= 95 % of
// positions (on the GPU >= 90 % on the K-quant files, whose other picks are near-ties).
#include <QtTest>
#include <cmath>
#include <nlohmann/json.hpp>

#include "gguf_fixtures.h"
#include "kiln/engine.h"
#include "kiln/types.h"
#include "model/gguf_file.h"

using namespace kiln;
using namespace kiln::test;

namespace {

struct Case {
  std::vector<int32_t> ids;
  std::vector<std::vector<float>> logits;  // [position][vocab]
};

std::vector<Case> read_cases(const std::string& path) {
  const auto root = nlohmann::json::parse(read_file_bytes(path));
  std::vector<Case> out;
  for (const auto& c : root["cases"]) out.push_back({c["input_ids"].get<std::vector<int32_t>>(),
                                                     c["logits"].get<std::vector<std::vector<float>>>()});
  return out;
}

struct Agreement {
  double relative_error = 0;
  double top1 = 0;
  int positions = 0;
  double worst_pick_gap = 0;  // where the top-1 differs: how far below llama.cpp's top logit ours is, by its logits
};

Agreement compare(const std::vector<std::vector<float>>& ours, const std::vector<std::vector<float>>& ref) {
  double diff = 0, norm = 0, gap = 0;
  int agree = 0;
  for (size_t p = 0; p < ref.size(); ++p) {
    for (size_t v = 0; v < ref[p].size(); ++v) {
      diff += double(ours[p][v] - ref[p][v]) * (ours[p][v] - ref[p][v]);
      norm += double(ref[p][v]) * ref[p][v];
    }
    auto argmax = [](const std::vector<float>& r) { return std::max_element(r.begin(), r.end()) - r.begin(); };
    const auto mine = argmax(ours[p]), theirs = argmax(ref[p]);
    agree += mine == theirs;
    gap = std::max(gap, double(ref[p][theirs] - ref[p][mine]));
  }
  return {std::sqrt(diff / norm), double(agree) / double(ref.size()), int(ref.size()), gap};
}

}  // namespace

class GgufLogitsTest : public QObject {
  Q_OBJECT
 private slots:
  void matchesLlamaCpp_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("kind");
    QTest::addColumn<int>("precision");
    QTest::addColumn<double>("bound");
    QTest::addColumn<int>("backend");
    QTest::addColumn<double>("min_top1");
    for (const char* name : {"a", "b"}) {
      // Each file is held in its own format (F16 widened to F32, which is exact).
      QTest::newRow((std::string(name) + " f16").c_str()) << name << "f16" << int(Precision::F32) << 2e-3 << int(BackendKind::Cpu) << 0.95;
      QTest::newRow((std::string(name) + " q8_0").c_str()) << name << "q8_0" << int(Precision::Q8_0) << 2e-2 << int(BackendKind::Cpu) << 0.95;
      QTest::newRow((std::string(name) + " q4_0").c_str()) << name << "q4_0" << int(Precision::Q4_0) << 5e-2 << int(BackendKind::Cpu) << 0.95;
      // The default, Auto: each tensor as the file stores it, on both backends.
      for (const char* kind : {"f16", "q8_0", "q4_0"})
        for (BackendKind backend : {BackendKind::Cpu, BackendKind::Vulkan})
          QTest::newRow((std::string(name) + " " + kind + " as stored " + to_string(backend)).c_str())
              << name << kind << int(Precision::Auto) << (kind == std::string("f16") ? 2e-3 : kind == std::string("q8_0") ? 2e-2 : 5e-2)
              << int(backend) << 0.95;
    }
    // Auto (the default) runs each K-quant tensor as stored, on both backends. On these random
    // weights the logits are flat: the few positions whose top-1 differs are near-ties that
    // llama.cpp's CPU rounding of activations (8 bits per 256) decides (the gap check below), 6 of
    // 72 for Q4_K_M even with exact F32 weights. The CPU rounds as llama.cpp does and agrees at
    // >= 95 % (95.8 % and 97.2 %). The GPU kernels' activations are fp32 (lavapipe) or rounded per
    // 16 (int8 decode): Q4_K_M 66 of 72 (91.7 %, the same on the H100). So does llama.cpp's own
    // Vulkan backend on the same file against its CPU's logits (H100, 2026-11-26: 66 of 72 with
    // coopmat2 and with KHR, 67 without matrix cores; its CPU backend on that host 67, on this
    // project's 2-core VM 69), which is why the Vulkan rows hold 90 %.
    for (const char* kind : {"q4_k_m", "q3_k_m"})
      for (BackendKind backend : {BackendKind::Cpu, BackendKind::Vulkan})
        QTest::newRow((std::string("k ") + kind + " " + to_string(backend)).c_str())
            << "k" << kind << int(LoadOptions{}.precision) << 5e-2 << int(backend)
            << (backend == BackendKind::Cpu ? 0.95 : 0.9);
  }
  void matchesLlamaCpp() {
    QFETCH(QString, name);
    QFETCH(QString, kind);
    QFETCH(int, precision);
    QFETCH(double, bound);
    QFETCH(int, backend);
    QFETCH(double, min_top1);
    LoadOptions options;
    options.path = gguf_path(name.toStdString(), kind.toStdString());
    options.precision = Precision(precision);
    options.backend = BackendKind(backend);
    options.threads = 2;
    auto engine = Engine::load(options);
    if (options.backend == BackendKind::Vulkan && !engine->info().backend.starts_with("vulkan"))
      QSKIP("no Vulkan device (CI has lavapipe)");
    if (options.precision == Precision::Auto && name != "k") {
      // As stored: the weights in memory are the file's tensor bytes (norms widened to F32 aside).
      uint64_t file_bytes = 0;
      for (const auto& t : GgufFile::open(options.path)->tensors()) file_bytes += t.bytes;
      const double ratio = double(engine->info().weight_bytes) / double(file_bytes);
      QVERIFY2(ratio > 0.9 && ratio < 1.1, qPrintable(QString("weights %1 of the file's tensor bytes").arg(ratio)));
    }
    QCOMPARE(engine->info().source_format, std::string("gguf"));
    const auto cases = read_cases(llama_logits_path(name.toStdString(), kind.toStdString()));
    QVERIFY(!cases.empty());
    double worst = 0, agreeing = 0, worst_gap = 0;
    int positions = 0;
    for (size_t c = 0; c < cases.size(); ++c) {
      // The last case goes through the decode path: half as one batch, the rest token by token;
      // the K-quant files take every case both as one batch and after a prefill of 3.
      std::vector<int> prefills{c + 1 == cases.size() ? int(cases[c].ids.size() / 2) : 0};
      if (name == "k") prefills = {0, 3};
      for (int prefill : prefills) {
        engine->reset();
        const auto ours = engine->logits(cases[c].ids, prefill);
        QCOMPARE(ours.size(), cases[c].logits.size());
        const Agreement a = compare(ours, cases[c].logits);
        worst = std::max(worst, a.relative_error);
        agreeing += a.top1 * a.positions;
        worst_gap = std::max(worst_gap, a.worst_pick_gap);
        positions += a.positions;
      }
    }
    const double top1 = agreeing / positions;  // over every position of every case
    qInfo("%s: worst relative error %.2e, top-1 agreement %.1f %%", qPrintable(name + " " + kind), worst, top1 * 100);
    QVERIFY2(worst < bound, qPrintable(QString("relative error %1 >= %2").arg(worst).arg(bound)));
    QVERIFY2(top1 >= min_top1, qPrintable(QString("top-1 agreement %1").arg(top1)));
    // Where the pick differs, llama.cpp itself rates it within 0.2 of its own pick: a near-tie
    // (these logits span about 4; the relative-error bound allows 5 %).
    QVERIFY2(worst_gap < 0.2, qPrintable(QString("a differing pick %1 below llama.cpp's").arg(worst_gap)));
  }

  void tokenizeThroughTheEngine() {
    // The engine's tokenizer for a GGUF is the one rebuilt from its arrays.
    LoadOptions options;
    options.path = gguf_path("a", "q8_0");
    options.backend = BackendKind::Cpu;
    options.threads = 2;
    auto engine = Engine::load(options);
    const auto ids = engine->tokenize("Hello world", true);
    QVERIFY(ids.size() >= 2);
    QCOMPARE(ids[0], 2);  // BOS
    QCOMPARE(engine->detokenize(std::span<const int32_t>(ids).subspan(1)), std::string("Hello world"));
  }
};

QTEST_APPLESS_MAIN(GgufLogitsTest)
#include "test_gguf_logits.moc"
