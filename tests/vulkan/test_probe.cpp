// Device discovery and choice for the hardware report and the backend, and the bandwidth probe of
// the benchmark, on whatever Vulkan devices this machine has (lavapipe in CI).
#include <QtTest>

#include "kiln/types.h"
#include "runtime/vulkan/bandwidth.h"
#include "runtime/vulkan/device.h"
#include "runtime/vulkan_probe.h"

using namespace kiln;

class VulkanProbe : public QObject {
  Q_OBJECT
 private slots:
  // Every device is listed with its limits; one Kiln would not use says why.
  void lists_devices_with_reasons() {
    std::string status;
    const std::vector<GpuDevice> devices = list_vulkan_devices(status);
    QVERIFY2(status.empty(), status.c_str());
    QVERIFY(!devices.empty());
    for (const GpuDevice& d : devices) {
      QVERIFY(!d.name.empty());
      QVERIFY(!d.heaps.empty());
      QVERIFY(d.max_storage_buffer_range >= (1u << 20));
      QCOMPARE(d.usable, d.refusal.empty());
      if (d.type == "cpu") {
        QVERIFY(!d.usable);  // lavapipe only when asked for
        QVERIFY2(d.refusal.find("--device " + std::to_string(d.index)) != std::string::npos, d.refusal.c_str());
      }
      if (d.usable) QVERIFY(d.subgroup_size >= 4);
    }
  }

  // The report names the features that pick kernels exactly as the backend sees them.
  void reports_kernel_features() {
    vk::Instance instance;
    for (const auto& d : instance.devices()) {
      QCOMPARE(d.report.integer_dot_fast, d.int8_dot_fast);
      QCOMPARE(d.report.cooperative_matrix, d.coop_matrix_f16 || d.coop_khr_f16);  // NV's or KHR's extension
      if (d.coop_khr_subgroup_size) QCOMPARE(d.coop_khr_subgroup_size, 32u);  // what matmul_coop_khr_* needs
      if (d.report.integer_dot_fast) QVERIFY(d.report.integer_dot);
      if (d.report.cooperative_matrix) QVERIFY(d.report.fp16);
    }
  }

  // Without a real GPU, the automatic choice refuses and says why; asked for, a CPU device is used.
  void chooses_real_gpus_first() {
    vk::Instance instance;
    bool real_gpu = false;
    for (const auto& d : instance.devices()) real_gpu |= d.report.usable;
    if (real_gpu) {
      const int i = vk::choose_device(instance.devices(), -1, false);
      QVERIFY(!instance.devices()[i].cpu_implementation);
    } else {
      try {
        vk::choose_device(instance.devices(), -1, false);
        QFAIL("a CPU implementation was chosen without being asked for");
      } catch (const Error& e) {
        QVERIFY2(std::string(e.what()).find("no usable device") != std::string::npos, e.what());
      }
    }
    const int any = vk::choose_device(instance.devices(), -1, true);
    QVERIFY(any >= 0 && any < int(instance.devices().size()));
    QCOMPARE(vk::choose_device(instance.devices(), any, false), any);  // an explicit index is honoured
  }

  // The compute-shader copy moves the bytes it claims (checked) and reports a rate.
  void bandwidth_probe_copies() {
    const VulkanBandwidth bw = measure_vulkan_bandwidth(-1, true, 16u << 20, 2);
    QCOMPARE(bw.buffer_bytes, uint64_t(16u << 20));
    QVERIFY(bw.copy_gbs > 0 && bw.best_pass_ms > 0);
    QVERIFY(!bw.device.empty());
  }
};

QTEST_GUILESS_MAIN(VulkanProbe)
#include "test_probe.moc"
