// The real NPU (Phoenix, amdxdna, XRT with xrt::hw_context, kernels installed): the kernel computes
// what the emulator models, for both head sizes, unsplit and with two columns per key chunk. Skips,
// saying why, anywhere else. This is the test a person with a Phoenix laptop runs:
// kernels/npu/README.md, "Bring-up on a Phoenix laptop".
#include <QtTest>

#include "runtime/cpu/thread_pool.h"
#include "runtime/npu/attention_router.h"
#include "runtime/npu/npu_attention.h"
#include "runtime/npu/npu_detect.h"
#include "runtime/vulkan_probe.h"

using namespace kiln;

class NpuHardware : public QObject {
  Q_OBJECT
 private slots:
  void kernel_matches_the_emulator_data() {
    QTest::addColumn<int>("head_dim");
    QTest::addColumn<int>("kv_split");
    QTest::newRow("D=128 (27B)") << 128 << 1;
    QTest::newRow("D=256 (1B, 4B, 12B)") << 256 << 1;
    QTest::newRow("D=128, two columns per key chunk") << 128 << 2;
    QTest::newRow("D=256, two columns per key chunk") << 256 << 2;
  }
  void kernel_matches_the_emulator() {
    QFETCH(int, head_dim);
    QFETCH(int, kv_split);
    const NpuInfo info = detect_npu();
    if (!npu_usable(info)) QSKIP(("no usable NPU: " + info.reason).c_str());
#ifdef KILN_HAVE_XRT_NPU
    if (!QFile::exists(QString::fromStdString(npu_xclbin_path(npu_kernel_dir(), head_dim, kv_split))))
      QSKIP("this variant's kernel is not installed");
    ThreadPool pool(0);
    auto device = make_xrt_npu_device(head_dim, npu_kernel_dir());
    const double diff = compare_with_emulator(*device, head_dim, pool, kv_split);
    qInfo("head_dim %d, kv_split %d: largest difference from the emulator %.3g of the output scale (0 = bit-exact)",
          head_dim, kv_split, diff);
    QVERIFY2(diff <= 1e-2, qPrintable(QString("difference %1").arg(diff)));
#else
    QSKIP("Kiln was built without the XRT NPU dispatch");
#endif
  }
};

QTEST_GUILESS_MAIN(NpuHardware)
#include "test_npu_hardware.moc"
