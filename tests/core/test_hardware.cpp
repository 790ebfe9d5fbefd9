// The hardware report and memory counters, checked against the kernel's own answers.
#include <QtTest>

#include <unistd.h>

#include <cstring>
#include <memory>

#include "kiln/hardware.h"

class TestHardware : public QObject {
  Q_OBJECT

 private slots:
  void cpu_and_ram_are_reported() {
    const kiln::HardwareInfo info = kiln::probe_hardware();
    QVERIFY(info.cpu_cores > 0);
    QVERIFY(!info.cpu_model.empty());
    QVERIFY(info.ram_total > 0);
    QVERIFY(info.ram_available > 0 && info.ram_available <= info.ram_total);
    // /proc/meminfo and sysconf both come from the kernel's page counts: within 1 %.
    const double sysconf_total = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
    QVERIFY(std::abs(double(info.ram_total) - sysconf_total) < 0.01 * sysconf_total);
    QVERIFY(info.cpu_cores <= sysconf(_SC_NPROCESSORS_CONF));
  }

  void gpu_and_npu_absence_is_explained() {
    const kiln::HardwareInfo info = kiln::probe_hardware();
    if (info.gpus.empty()) QVERIFY2(!info.vulkan_status.empty(), "no GPU listed and no reason given");
    for (const auto& gpu : info.gpus) {
      QVERIFY(!gpu.name.empty());
      if (!gpu.usable) QVERIFY2(!gpu.refusal.empty(), gpu.name.c_str());
    }
    if (!info.npu.present) QVERIFY2(!info.npu.reason.empty(), "no NPU and no reason given");
  }

  void resident_memory_follows_allocations() {
    const uint64_t before = kiln::resident_memory_bytes();
    QVERIFY(before > 0);
    QVERIFY(kiln::peak_resident_memory_bytes() >= before);
    // Touch 64 MiB so the pages become resident; both counters must see it.
    constexpr size_t kBytes = 64u << 20;
    auto block = std::make_unique<char[]>(kBytes);
    std::memset(block.get(), 1, kBytes);
    const uint64_t during = kiln::resident_memory_bytes();
    QVERIFY2(during >= before + kBytes * 3 / 4, "64 MiB touched but resident memory barely moved");
    QVERIFY(kiln::peak_resident_memory_bytes() >= during);
    QCOMPARE(block[kBytes - 1], char(1));  // keeps the writes from being optimized away
    block.reset();
    // The peak remembers the block after it is freed. (Not ">= during" exactly: the kernel's
    // counters are per-CPU approximations, and its high-water mark can trail a reading by pages.)
    QVERIFY(kiln::peak_resident_memory_bytes() >= before + kBytes * 3 / 4);
  }
};

QTEST_APPLESS_MAIN(TestHardware)
#include "test_hardware.moc"
