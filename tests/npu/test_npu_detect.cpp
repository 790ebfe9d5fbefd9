// NPU detection on fake /dev and /sys trees shaped like the amdxdna driver's, and on this machine:
// every way the NPU can be missing or unusable gets its own reason.
#include <QtTest>
#include <filesystem>
#include <fstream>

#include "runtime/npu/npu_detect.h"
#include "runtime/vulkan_probe.h"

using namespace kiln;
namespace fs = std::filesystem;

namespace {

// dev/accel/accel0 and sys/class/accel/accel0/device/{driver -> .../<driver>, device, revision}.
struct FakeSystem {
  QTemporaryDir dir;
  NpuProbeRoots roots;
  std::string kernels;

  FakeSystem() {
    roots.dev = dir.filePath("dev").toStdString();
    roots.sys = dir.filePath("sys").toStdString();
    kernels = dir.filePath("kernels").toStdString();
    fs::create_directories(roots.dev);
    fs::create_directories(roots.sys);
    fs::create_directories(kernels);
  }
  void add_accel(const std::string& node, const std::string& driver, const char* device, const char* revision) {
    fs::create_directories(fs::path(roots.dev) / "accel");
    std::ofstream(fs::path(roots.dev) / "accel" / node) << "";
    const fs::path sys_dev = fs::path(roots.sys) / "class" / "accel" / node / "device";
    fs::create_directories(sys_dev);
    const fs::path drv = fs::path(roots.sys) / "bus" / "pci" / "drivers" / driver;
    fs::create_directories(drv);
    fs::create_directory_symlink(drv, sys_dev / "driver");
    std::ofstream(sys_dev / "vendor") << "0x1022\n";
    std::ofstream(sys_dev / "device") << device << "\n";
    std::ofstream(sys_dev / "revision") << revision << "\n";
  }
  void install_kernel(int head_dim) { std::ofstream(npu_xclbin_path(kernels, head_dim)) << "xclbin"; }
};

NpuBuildInfo debian_xrt() { return {"2.13.0", false}; }
NpuBuildInfo modern_xrt() { return {"2.19.0", true}; }

}  // namespace

class NpuDetect : public QObject {
  Q_OBJECT
 private slots:
  void no_accel_device() {
    FakeSystem s;
    const NpuInfo info = detect_npu_at(s.roots, debian_xrt(), s.kernels);
    QVERIFY(!info.present);
    QVERIFY(info.reason.find("no " + s.roots.dev + "/accel device") == 0);
    QVERIFY(info.reason.find("amdxdna") != std::string::npos);
    QCOMPARE(info.xrt_version, std::string("2.13.0"));
  }

  void another_drivers_accelerator() {
    FakeSystem s;
    s.add_accel("accel0", "habanalabs", "0x1020", "0x01");
    const NpuInfo info = detect_npu_at(s.roots, modern_xrt(), s.kernels);
    QVERIFY(!info.present);
    QVERIFY(info.reason.find("driven by 'habanalabs', not amdxdna") != std::string::npos);
  }

  void phoenix_with_debian_xrt() {
    FakeSystem s;
    s.add_accel("accel0", "amdxdna", "0x1502", "0x00");
    const NpuInfo info = detect_npu_at(s.roots, debian_xrt(), s.kernels);
    QVERIFY(info.present);
    QCOMPARE(info.device_path, s.roots.dev + "/accel/accel0");
    QCOMPARE(info.generation, std::string("XDNA (Phoenix / Hawk Point), npu1"));
    QVERIFY(info.reason.find("XRT 2.13.0, which has no xrt::hw_context") != std::string::npos);
    QVERIFY(!npu_usable(info));
  }

  void phoenix_without_xrt() {
    FakeSystem s;
    s.add_accel("accel0", "amdxdna", "0x1502", "0x00");
    const NpuInfo info = detect_npu_at(s.roots, {}, s.kernels);
    QVERIFY(info.reason.find("built without XRT") != std::string::npos);
  }

  void phoenix_without_kernels_then_with() {
    FakeSystem s;
    s.add_accel("accel0", "amdxdna", "0x1502", "0x00");
    NpuInfo info = detect_npu_at(s.roots, modern_xrt(), s.kernels);
    QVERIFY(info.reason.find("kernels are not installed") != std::string::npos);
    s.install_kernel(256);
    info = detect_npu_at(s.roots, modern_xrt(), s.kernels);
    QVERIFY2(info.reason.empty(), info.reason.c_str());
    QVERIFY(npu_usable(info));
  }

  // The kernel targets npu1; a Strix NPU is found and named, but not used.
  void strix_is_named_but_not_used() {
    FakeSystem s;
    s.add_accel("accel0", "habanalabs", "0x1020", "0x01");
    s.add_accel("accel1", "amdxdna", "0x17f0", "0x10");
    s.install_kernel(128);
    const NpuInfo info = detect_npu_at(s.roots, modern_xrt(), s.kernels);
    QVERIFY(info.present);
    QCOMPARE(info.device_path, s.roots.dev + "/accel/accel1");
    QCOMPARE(info.generation, std::string("XDNA2 (Strix), npu4"));
    QVERIFY(info.reason.find("built for the Phoenix NPU (npu1)") != std::string::npos);
  }

  void generations() {
    QCOMPARE(npu_generation(0x17f0, 0x11), std::string("XDNA2 (Krackan), npu5"));
    QCOMPARE(npu_generation(0x1b0a, 0), std::string("AMD NPU, npu3"));
    QCOMPARE(npu_generation(0x1234, 0), std::string("unknown AMD NPU (PCI device 0x1234)"));
  }

  // This machine: whatever it has, the report is consistent and explains an absence.
  void this_machine() {
    const NpuInfo info = detect_npu();
    QCOMPARE(info.xrt_version, npu_build_info().xrt_version);
    if (!npu_usable(info)) QVERIFY(!info.reason.empty());
    qInfo("present %d, reason: %s", int(info.present), info.reason.c_str());
  }
};

QTEST_GUILESS_MAIN(NpuDetect)
#include "test_npu_detect.moc"
