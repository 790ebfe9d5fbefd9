// The device plan (kernel_plan.h) for devices this machine does not have, from what they would
// report: the cross-workgroup tricks only on NVIDIA's own driver, barriers everywhere else (the
// 780M and lavapipe included), the tricks switched together where one needs another, and tuning
// keys over it. No GPU needed: plan_for reads only the reported facts.
#include <QtTest>

#include "runtime/vulkan/kernel_plan.h"
#include "runtime/vulkan/model_kernels.h"
#include "runtime/vulkan/pipeline.h"

using namespace kiln;
using namespace kiln::vk;

namespace {

// What a device reports, in the fields plan_for reads.
PhysicalDeviceInfo device(uint32_t vendor, VkDriverId driver, uint32_t subgroup, bool int8_fast, bool coop = false) {
  PhysicalDeviceInfo d;
  d.properties.vendorID = vendor;
  d.properties.deviceType = VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
  d.driver_id = driver;
  d.subgroup_size = subgroup;
  d.subgroup_shuffle = true;
  d.int8_dot = true;
  d.int8_dot_fast = int8_fast;
  d.coop_matrix_f16 = coop;
  d.device_address = true;
  return d;
}

PhysicalDeviceInfo h100() {  // both cooperative-matrix extensions, as NVIDIA's driver lists them
  PhysicalDeviceInfo d = device(0x10DE, VK_DRIVER_ID_NVIDIA_PROPRIETARY, 32, true, true);
  d.coop_khr_f16 = true;
  return d;
}
PhysicalDeviceInfo radeon_780m(VkDriverId driver) { return device(0x1002, driver, 64, true); }
PhysicalDeviceInfo lavapipe() {
  PhysicalDeviceInfo d = device(0x10005, VK_DRIVER_ID_MESA_LLVMPIPE, 8, false);
  d.properties.deviceType = VK_PHYSICAL_DEVICE_TYPE_CPU;
  d.cpu_implementation = true;
  return d;
}

// Every cross-workgroup trick off: what a device outside the NVIDIA family gets.
void expect_barriers(const KernelPlan& p) {
  QVERIFY(!p.stage_flags);
  QVERIFY(!p.run_ahead);
  QCOMPARE(p.early_part(DType::Q4_0), 0.0);
  QCOMPARE(p.early_part(DType::Q8_0), 0.0);
  QVERIFY(!p.down_groups_of_96);
  // The wide add_norm needs no trick (its sums cross a pipeline barrier): wherever activations are int8.
  QCOMPARE(p.wide_norm, p.quantized_act);
  QVERIFY(!p.summary().stage_flags);
}

}  // namespace

class KernelPlanTest : public QObject {
  Q_OBJECT
 private slots:
  // On NVIDIA's driver, everything measured faster on the H100 (PERFORMANCE.md).
  void nvidia_gets_the_measured_tricks() {
    const KernelPlan p = plan_for(h100());
    QCOMPARE(p.family, DeviceFamily::Nvidia);
    QVERIFY(p.stage_flags && p.run_ahead && p.wide_norm && p.quantized_act && p.int8_dot && p.coop_matmul);
    QCOMPARE(p.early_part(DType::Q4_0), 0.6);
    QCOMPARE(p.early_part(DType::Q8_0), 0.0);  // lost 0.5 % there
    QCOMPARE(p.down_shape(DType::Q4_0), (MatvecShape{192, 4, 96}));
    QCOMPARE(p.down_shape(DType::Q8_0), p.qin_shape(false));
    QCOMPARE(p.attention_keys_per_split, 32u);
    const GpuPlan s = p.summary();
    QCOMPARE(s.family, std::string("nvidia"));
    QCOMPARE(s.prefill, std::string(khr_coopmat_built() ? "khr_coopmat" : "nv_coopmat"));
    QCOMPARE(s.decode, std::string("int8_act"));
    QVERIFY(s.stage_flags && s.run_ahead);
    QCOMPARE(s.subgroup_size, 32);
  }

  // The 780M (RADV or AMDVLK), Intel, NVK and lavapipe: pipeline barriers and nothing built on
  // stage flags; the int8 kernels still run where the hardware has dot products.
  void other_families_get_barriers() {
    for (VkDriverId driver : {VK_DRIVER_ID_MESA_RADV, VK_DRIVER_ID_AMD_OPEN_SOURCE, VK_DRIVER_ID_AMD_PROPRIETARY}) {
      const KernelPlan p = plan_for(radeon_780m(driver));
      QCOMPARE(p.family, DeviceFamily::Amd);
      expect_barriers(p);
      QVERIFY(p.int8_dot && p.quantized_act && p.wide_norm);
      QCOMPARE(p.down_shape(DType::Q4_0), p.qin_shape(false));
      QCOMPARE(p.attention_keys_per_split, 32u);  // with barriers too (H100, portable plan)
      QCOMPARE(p.summary().family, std::string("amd"));
      QCOMPARE(p.summary().prefill, std::string("int_dot"));  // no tensor cores listed: int8 tiles
      QCOMPARE(p.summary().subgroup_size, 64);
    }
    const KernelPlan intel = plan_for(device(0x8086, VK_DRIVER_ID_INTEL_OPEN_SOURCE_MESA, 32, true));
    QCOMPARE(intel.family, DeviceFamily::Intel);
    expect_barriers(intel);
    // NVK is another implementation of the memory model than the one the tricks were measured on.
    const KernelPlan nvk = plan_for(device(0x10DE, VK_DRIVER_ID_MESA_NVK, 32, true));
    QCOMPARE(nvk.family, DeviceFamily::Other);
    expect_barriers(nvk);
    const KernelPlan cpu = plan_for(lavapipe());
    QCOMPARE(cpu.family, DeviceFamily::Cpu);
    expect_barriers(cpu);
    QVERIFY(!cpu.int8_dot);  // emulated: only when asked for
    QCOMPARE(cpu.summary().decode, std::string("fp32"));
    QCOMPARE(cpu.stage_spin_rounds, 1000u);  // within lavapipe's loop limit, should flags be forced
  }

  // Overrides go over the family's row, and what builds on another switch follows it: no early
  // part without stage flags, no wide norm or int8 activations without int8 dots.
  void overrides_switch_coherently() {
    const KernelPlan portable = plan_for(h100(), parse_tuning({{"family", "other"}}));
    expect_barriers(portable);
    QVERIFY(portable.coop_matmul && portable.quantized_act);  // what the device reports stays
    QVERIFY(!plan_for(h100(), parse_tuning({{"family", "other"}, {"wide_norm", "0"}})).wide_norm);
    const KernelPlan no_flags = plan_for(h100(), parse_tuning({{"stage_flags", "0"}, {"early_part", "0.6"}}));
    QVERIFY(!no_flags.stage_flags);
    QCOMPARE(no_flags.early_part(DType::Q4_0), 0.0);
    QVERIFY(no_flags.run_ahead && no_flags.wide_norm);  // neither is built on stage flags
    const KernelPlan no_int8 = plan_for(h100(), parse_tuning({{"int8_dot", "0"}}));
    QVERIFY(!no_int8.staged_matvec && !no_int8.quantized_act && !no_int8.wide_norm);
    QCOMPARE(no_int8.summary().decode, std::string("fp32"));
    const KernelPlan forced = plan_for(lavapipe(), parse_tuning({{"stage_flags", "1"}, {"int8_dot", "1"}, {"wide_norm", "1"}}));
    QVERIFY(forced.stage_flags && forced.wide_norm && !forced.run_ahead);
    QCOMPARE(forced.early_part(DType::Q4_0), 0.0);  // lavapipe's family row: no part unless asked
    const KernelPlan part = plan_for(radeon_780m(VK_DRIVER_ID_MESA_RADV), parse_tuning({{"stage_flags", "1"}, {"early_part", "0.85"}}));
    QCOMPARE(part.early_part(DType::Q4_0), 0.85);
    QCOMPARE(part.early_part(DType::Q8_0), 0.85);
    // A capability cannot be forced.
    PhysicalDeviceInfo no_dot = radeon_780m(VK_DRIVER_ID_MESA_RADV);
    no_dot.int8_dot = no_dot.int8_dot_fast = false;
    QVERIFY(!plan_for(no_dot, parse_tuning({{"int8_dot", "1"}})).int8_dot);
    QVERIFY(!plan_for(no_dot, parse_tuning({{"coopmat", "1"}})).coop_matmul);
    // Shapes and measurement switches.
    const KernelPlan shaped = plan_for(h100(), parse_tuning({{"matvec_down", "128,4,64"},
                                                             {"matvec_glu", "128,8,64"},
                                                             {"attention_split", "16"},
                                                             {"down_groups_96", "0"},
                                                             {"warmup", "0"},
                                                             {"fence_poll", "0"},
                                                             {"stage_backoff", "0"}}));
    QCOMPARE(shaped.down_shape(DType::Q4_0), (MatvecShape{128, 4, 64}));
    QCOMPARE(shaped.qin_shape(true), (MatvecShape{128, 8, 64}));
    QCOMPARE(shaped.attention_keys_per_split, 16u);
    QCOMPARE(shaped.warmup_tokens, 0);
    QVERIFY(!shaped.fence_poll);
    QCOMPARE(shaped.stage_backoff, 0u);
    QCOMPARE(plan_for(h100(), parse_tuning({{"down_groups_96", "0"}})).down_shape(DType::Q4_0),
             plan_for(h100()).qin_shape(false));
  }

  // Prefill on tensor cores from the shapes the device lists: a 780M under RADV (VK_KHR_cooperative_matrix
  // with fp16 16x16x16, no NV extension, wave64 asked down to 32) gets khr_coopmat where this build
  // has the KHR kernels; no shapes, or only fp16-accumulating ones, give fp32 tiles.
  void prefill_follows_the_reported_shapes() {
    PhysicalDeviceInfo radv = radeon_780m(VK_DRIVER_ID_MESA_RADV);
    radv.coop_khr_f16 = true;
    radv.coop_khr_subgroup_size = 32;
    const KernelPlan p = plan_for(radv);
    if (khr_coopmat_built()) {
      QCOMPARE(p.prefill, Prefill::KhrCoopmat);
      QVERIFY(p.coop_matmul && p.coop_for(DType::Q4_0) && !p.coop_for(DType::F32));
      QCOMPARE(p.summary().prefill, std::string("khr_coopmat"));
      QCOMPARE(p.matmul_tile(DType::Q8_0), kCoopTile);
      // Attention on the tensor cores too, unless the key turns it off.
      QVERIFY(p.coop_attention);
      QVERIFY(!plan_for(radv, parse_tuning({{"coop_attention", "0"}})).coop_attention);
    } else {  // a Debian 12 build without Debian 13's glslc: the kernels are absent, never selected
      QCOMPARE(p.summary().prefill, std::string("int_dot"));  // and int8 tiles instead
      QVERIFY(!p.coop_attention);
    }
    // Its kernel is KHR's: NV's prefill and the fp32 tiles keep the tiled attention.
    QVERIFY(!plan_for(h100(), parse_tuning({{"prefill", "nv_coopmat"}})).coop_attention);
    QVERIFY(!plan_for(radv, parse_tuning({{"prefill", "fp32"}})).coop_attention);
    QCOMPARE(plan_for(radv, parse_tuning({{"prefill", "fp32"}})).prefill, Prefill::Fp32);
    QCOMPARE(plan_for(radv, parse_tuning({{"coopmat", "0"}})).prefill, Prefill::Fp32);
    QCOMPARE(plan_for(radv, parse_tuning({{"prefill", "nv_coopmat"}})).prefill, Prefill::Fp32);  // not forced
    PhysicalDeviceInfo no_shapes = radeon_780m(VK_DRIVER_ID_MESA_RADV);
    QCOMPARE(plan_for(no_shapes).prefill, Prefill::IntDot);  // integer dots instead (int_dot_prefill_*)
    QCOMPARE(plan_for(no_shapes, parse_tuning({{"prefill", "khr_coopmat"}})).summary().prefill, std::string("fp32"));
    no_shapes.coop_khr_f16_acc_only = true;
    QCOMPARE(plan_for(no_shapes).summary().prefill, std::string("int_dot"));
    // NVIDIA lists both: KHR's kernel measured faster there and is the default where built; the key
    // picks NV's for measurement, and NV's is what a build without the KHR kernels runs.
    QCOMPARE(plan_for(h100()).summary().prefill, std::string(khr_coopmat_built() ? "khr_coopmat" : "nv_coopmat"));
    QCOMPARE(plan_for(h100(), parse_tuning({{"prefill", "nv_coopmat"}})).summary().prefill, std::string("nv_coopmat"));
    QCOMPARE(plan_for(h100(), parse_tuning({{"prefill", "khr_coopmat"}})).summary().prefill,
             std::string(khr_coopmat_built() ? "khr_coopmat" : "fp32"));
    QVERIFY_THROWS_EXCEPTION(Error, parse_tuning({{"prefill", "int8"}}));
  }

  // fp16 sums in the tiles only when asked, and only on KHR tiles with fp16 input on a device that
  // lists an fp16-accumulating shape; the kernel name says which.
  void fp16_sums_only_when_asked_and_offered() {
    PhysicalDeviceInfo d = h100();
    d.coop_khr_f16_sums = true;
    const TuningOverrides f16 = parse_tuning({{"coop_sums", "f16"}});
    QVERIFY(!plan_for(d).coop_half_sums);  // fp32 sums by default
    QCOMPARE(plan_for(d, f16).coop_half_sums, khr_coopmat_built());
    QVERIFY(!plan_for(d, parse_tuning({{"coop_sums", "f16"}, {"coop_input", "f32"}})).coop_half_sums);
    QVERIFY(!plan_for(d, parse_tuning({{"coop_sums", "f16"}, {"prefill", "nv_coopmat"}})).coop_half_sums);
    d.coop_khr_f16_sums = false;  // a device listing only fp32-accumulating shapes
    QVERIFY(!plan_for(d, f16).coop_half_sums);
    QVERIFY(!plan_for(lavapipe(), f16).coop_half_sums);
    QVERIFY_THROWS_EXCEPTION(Error, parse_tuning({{"coop_sums", "f8"}}));
    QCOMPARE(matmul_kernel_name(DType::Q4_0, true, kCoopTile, true, true, true), std::string("matmul_coop_khr_xh_s16_glu_q4_0"));
    QCOMPARE(matmul_kernel_name(DType::Q4_0, false, kCoopTile, true, true), std::string("matmul_coop_khr_xh_q4_0"));
    QVERIFY_THROWS_EXCEPTION(Error, matmul_kernel_name(DType::Q4_0, false, kCoopTile, false, true, true));
    if (khr_coopmat_built())  // every format the tiles take has its fp16-sum kernels
      for (DType t : {DType::F16, DType::Q8_0, DType::Q4_0, DType::Q4_K, DType::Q6_K, DType::IQ4_XS})
        for (bool glu : {false, true})
          QVERIFY(kernel_built(matmul_kernel_name(t, glu, kCoopTile, true, true, true)));
  }

  // Without tensor cores, int8 tiles for Q8_0/Q4_0 batches where the device has integer dot
  // products in hardware (with the int8 decode kernels); F16/F32 keep fp32 tiles. Lavapipe's
  // emulated dots take them when asked (what CI tests). The key forces them on a GPU with tensor
  // cores (measurement) but not onto a device without the dots.
  void int_dot_prefill_without_tensor_cores() {
    const KernelPlan cpu = plan_for(lavapipe());
    QCOMPARE(cpu.prefill, Prefill::Fp32);
    QVERIFY(!cpu.int8_dot);
    QCOMPARE(plan_for(lavapipe(), parse_tuning({{"int8_dot", "1"}})).prefill, Prefill::IntDot);
    for (const PhysicalDeviceInfo& d : {radeon_780m(VK_DRIVER_ID_MESA_RADV),
                                        device(0x8086, VK_DRIVER_ID_INTEL_OPEN_SOURCE_MESA, 32, true)}) {
      const KernelPlan p = plan_for(d);
      QCOMPARE(p.prefill, Prefill::IntDot);
      QVERIFY(!p.coop_matmul);
      QVERIFY(p.int_dot_for(DType::Q8_0) && p.int_dot_for(DType::Q4_0));
      QVERIFY(!p.int_dot_for(DType::F16) && !p.int_dot_for(DType::F32));
      QCOMPARE(p.matmul_tile(DType::Q4_0), kMatmulTile);
      QCOMPARE(p.summary().prefill, std::string("int_dot"));
      QCOMPARE(plan_for(d, parse_tuning({{"prefill", "fp32"}})).prefill, Prefill::Fp32);
      QCOMPARE(plan_for(d, parse_tuning({{"int8_dot", "0"}})).prefill, Prefill::Fp32);  // no int8 at all
    }
    const KernelPlan on_cpu = plan_for(lavapipe(), parse_tuning({{"prefill", "int_dot"}}));
    QCOMPARE(on_cpu.summary().prefill, std::string("int_dot"));
    QVERIFY(!on_cpu.int8_dot);  // decode stays fp32
    const KernelPlan forced = plan_for(h100(), parse_tuning({{"prefill", "int_dot"}}));
    QCOMPARE(forced.prefill, Prefill::IntDot);
    QVERIFY(!forced.coop_matmul && !forced.coop_for(DType::Q4_0));
    QCOMPARE(forced.summary().prefill, std::string("int_dot"));
    QCOMPARE(plan_for(h100(), parse_tuning({{"coopmat", "0"}})).prefill, Prefill::Fp32);  // as before
    PhysicalDeviceInfo no_dot = radeon_780m(VK_DRIVER_ID_MESA_RADV);
    no_dot.int8_dot = no_dot.int8_dot_fast = false;
    QCOMPARE(plan_for(no_dot).prefill, Prefill::Fp32);
    QCOMPARE(plan_for(no_dot, parse_tuning({{"prefill", "int_dot"}})).prefill, Prefill::Fp32);
  }

  // Unknown keys and bad values are errors that name them; the message lists the valid keys.
  void bad_keys_are_errors() {
    try {
      parse_tuning({{"KILN_VK_STAGE_FLAGS", "0"}});
      QFAIL("an unknown key was accepted");
    } catch (const Error& e) {
      const std::string m = e.what();
      QVERIFY2(m.find("unknown key 'KILN_VK_STAGE_FLAGS'") != std::string::npos, m.c_str());
      for (const char* key : {"family=", "stage_flags=0|1", "int8_dot=0|1", "matvec=wg,rows,tpr", "attention_split=N",
                              "early_part=0..1", "max_chunk_bytes=N", "force_staging=0|1"})
        QVERIFY2(m.find(key) != std::string::npos, key);
    }
    QVERIFY_THROWS_EXCEPTION(Error, parse_tuning({{"stage_skip_waits", "attention"}}));  // deleted: wrong results
    QVERIFY_THROWS_EXCEPTION(Error, parse_tuning({{"wide_norm_wg", "3"}}));
    QVERIFY_THROWS_EXCEPTION(Error, parse_tuning({{"coop_split", "5"}}));
    QVERIFY_THROWS_EXCEPTION(Error, parse_tuning({{"matvec", "128,8,64,1"}}));
    QVERIFY_THROWS_EXCEPTION(Error, parse_tuning({{"stage_flags", ""}}));
    QCOMPARE(parse_tuning({}).stage_flags, std::optional<bool>());
    // Repeated keys: the last one counts, as on a command line.
    QCOMPARE(parse_tuning({{"stage_flags", "1"}, {"stage_flags", "0"}}).stage_flags, std::optional<bool>(false));
  }
};

QTEST_GUILESS_MAIN(KernelPlanTest)
#include "test_kernel_plan.moc"
