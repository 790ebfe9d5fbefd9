// The CPU backend's element-wise ops against double-precision formulas: gelu_tanh_mul computes
// tanh through its own vectorizable exp, so it is checked over the whole range activations reach.
#include <QtTest>

#include <cmath>
#include <vector>

#include "runtime/cpu/ops.h"

using namespace kiln;

class TestCpuOps : public QObject {
  Q_OBJECT

 private slots:
  void gelu_tanh_mul_matches_the_formula() {
    std::vector<float> gate, up;
    for (float g = -60.0f; g <= 60.0f; g += 0.0137f) {
      gate.push_back(g);
      up.push_back(1.0f + 0.25f * std::sin(g));
    }
    for (float g : {0.0f, -0.0f, 1e-30f, -1e-30f, 3.0e5f, -3.0e5f}) {
      gate.push_back(g);
      up.push_back(2.0f);
    }
    std::vector<float> out(gate.size());
    gelu_tanh_mul(gate.data(), up.data(), int64_t(gate.size()), out.data());
    for (size_t i = 0; i < gate.size(); ++i) {
      const double g = gate[i];
      const double want = 0.5 * g * (1.0 + std::tanh(0.7978845608028654 * (g + 0.044715 * g * g * g))) * up[i];
      const double error = std::fabs(double(out[i]) - want);
      QVERIFY2(error <= 1e-6 * std::fabs(g * up[i]) + 1e-37,
               qPrintable(QString("gate %1: %2 vs %3").arg(g).arg(out[i]).arg(want)));
    }
  }

  void gelu_tanh_mul_keeps_nan() {
    const float gate[2] = {std::nanf(""), 1.0f}, up[2] = {1.0f, std::nanf("")};
    float out[2];
    gelu_tanh_mul(gate, up, 2, out);
    QVERIFY(std::isnan(out[0]) && std::isnan(out[1]));
  }
};

QTEST_APPLESS_MAIN(TestCpuOps)
#include "test_cpu_ops.moc"
