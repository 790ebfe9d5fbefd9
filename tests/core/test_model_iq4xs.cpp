// A GGUF model whose every matrix is IQ4_XS (the K-quant fixture tiny-gemma3-k, every row a whole
// number of super-blocks, re-quantized by iq4xs_test_model.h) on the CPU: it loads with
// Precision::Auto as stored, at the file's size, `kiln info` lists its types, and its logits are those
// of the same weights dequantized to F32: to float rounding with float activations, and with the
// integer kernels within issue 24's bound for K-quant files (relative error 5e-2, top-1 95 %).
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <span>

#include "engine/backend_factory.h"
#include "fixture_reference.h"
#include "iq4xs_test_model.h"
#include "model/checkpoint.h"
#include "model/weights.h"
#include "runtime/cpu/cpu_backend.h"

using namespace kiln;
using namespace kiln::test;

namespace {

std::string k_fixture() { return fixture_dir("gguf/tiny-gemma3-k") + "/tiny-gemma3-k-q4_k_m.gguf"; }

std::vector<const Matrix*> matrices(const Gemma3Weights& w) {
  std::vector<const Matrix*> out{&w.embed};
  for (const LayerWeights& l : w.layers)
    for (const Matrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) out.push_back(m);
  return out;
}

double relative_error(const std::vector<float>& a, const std::vector<float>& b) {
  double e = 0, s = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    e += double(a[i] - b[i]) * (a[i] - b[i]);
    s += double(b[i]) * b[i];
  }
  return std::sqrt(e / s);
}

// Positions whose largest logit is the same token.
double top1_agreement(const std::vector<float>& a, const std::vector<float>& b, int vocab) {
  int same = 0;
  const size_t n = a.size() / size_t(vocab);
  for (size_t p = 0; p < n; ++p) {
    auto at = [&](const std::vector<float>& v) { return std::max_element(v.begin() + p * vocab, v.begin() + (p + 1) * vocab) - v.begin(); };
    same += at(a) == at(b);
  }
  return double(same) / double(n);
}

}  // namespace

class ModelIq4xs : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::string file_;
  const std::vector<int32_t> ids_ = {2, 351, 10, 90, 17, 300, 5, 100, 42, 7, 200, 600};

  // Every position's logits: the first `prefill` tokens at once, then one at a time.
  std::vector<float> logits(std::shared_ptr<const Gemma3Weights> w, bool integer, int prefill) {
    CpuOptions o;
    o.context_length = 64;
    o.threads = 2;
    o.integer_activations = integer;
    const int vocab = w->config.vocab_size;
    auto backend = make_cpu_backend(std::move(w), o);
    std::vector<float> all(ids_.size() * size_t(vocab));
    backend->forward(std::span(ids_).first(prefill), 0, true, all.data());
    for (size_t p = prefill; p < ids_.size(); ++p)
      backend->forward(std::span(ids_).subspan(p, 1), int(p), false, all.data() + p * vocab);
    return all;
  }

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    file_ = (std::filesystem::path(dir_.path().toStdString()) / "tiny-gemma3-k-iq4_xs.gguf").string();
    write_iq4xs_gguf(k_fixture(), file_);
  }

  void loads_as_stored() {
    const Checkpoint ck = open_checkpoint(file_);
    const auto types = ck.stored_types;
    const auto iq4 = std::find_if(types.begin(), types.end(), [](const auto& p) { return p.first == "IQ4_XS"; });
    QVERIFY(iq4 != types.end());
    QCOMPARE(iq4->second, 1 + 7 * ck.config.num_layers);
    const Gemma3Weights w = load_checkpoint_weights(ck, Precision::Auto, 2, {});
    for (const Matrix* m : matrices(w)) QCOMPARE(m->type, DType::IQ4_XS);
    uint64_t file_bytes = 0, held = 0;
    for (const GgufTensorInfo& t : GgufFile::open(file_)->tensors())
      if (t.type == uint32_t(GgmlType::IQ4_XS)) file_bytes += t.bytes;
    for (const Matrix* m : matrices(w)) held += m->bytes();
    QCOMPARE(held, file_bytes);  // 136 bytes a super-block in memory as in the file
  }

  void kiln_info_lists_the_types() {
    QProcess p;
    p.start(QString(KILN_BINARY_DIR) + "/core/cli/kiln", {"info", "--model", QString::fromStdString(file_)});
    QVERIFY(p.waitForFinished(60000));
    const QString out = QString::fromUtf8(p.readAllStandardOutput());
    QVERIFY2(p.exitCode() == 0, qPrintable(out + p.readAllStandardError()));
    QVERIFY2(out.contains("IQ4_XS x43"), qPrintable(out));
  }

  void logits_match_the_dequantized_model() {
    const Checkpoint ck = open_checkpoint(file_);
    auto stored = std::make_shared<Gemma3Weights>(load_checkpoint_weights(ck, Precision::Auto, 2, {}));
    auto f32 = std::make_shared<Gemma3Weights>(load_weights_held_as(ck.config, *ck.tensors, [](DType) { return DType::F32; }, 2));
    // The baseline: the K-quant file the model came from, its own int8 (per 256) activations against
    // its weights in F32 (3.8e-2 measured: random tiny weights make every rounding count).
    const Checkpoint k = open_checkpoint(k_fixture());
    auto k_stored = std::make_shared<Gemma3Weights>(load_checkpoint_weights(k, Precision::Auto, 2, {}));
    auto k_f32 = std::make_shared<Gemma3Weights>(load_weights_held_as(k.config, *k.tensors, [](DType) { return DType::F32; }, 2));
    const double k_error = relative_error(logits(k_stored, true, int(ids_.size())), logits(k_f32, false, int(ids_.size())));
    for (int prefill : {int(ids_.size()), 3}) {
      const double float_error = relative_error(logits(stored, false, prefill), logits(f32, false, prefill));
      const std::vector<float> int8 = logits(stored, true, prefill), reference = logits(f32, false, prefill);
      const double int8_error = relative_error(int8, reference), top1 = top1_agreement(int8, reference, f32->config.vocab_size);
      qInfo("prefill %d: IQ4_XS held vs F32: %.2e (float activations), %.2e top-1 %.3f (int8; Q4_K_M's own: %.2e)",
            prefill, float_error, int8_error, top1, k_error);
      QVERIFY2(float_error < 1e-5, qPrintable(QString::number(float_error)));
      // int8 activations per 32 (2.5e-2 measured): issue 24's bound for K-quant files, and no worse
      // than the K-quant file's own rounding on the same model.
      QVERIFY2(int8_error < 5e-2 && int8_error <= k_error, qPrintable(QString("%1 (Q4_K_M %2)").arg(int8_error).arg(k_error)));
      QVERIFY2(top1 >= 0.95, qPrintable(QString::number(top1)));
    }
  }
};

QTEST_GUILESS_MAIN(ModelIq4xs)
#include "test_model_iq4xs.moc"
