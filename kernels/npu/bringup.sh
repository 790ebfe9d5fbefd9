#!/usr/bin/env bash
# Checks, step by step, that a Phoenix / Hawk Point laptop can run Kiln's NPU attention, and says
# what to do next at the first step that fails. The steps are kernels/npu/README.md's "Bring-up on
# a Phoenix laptop"; run from anywhere:
#
#   kernels/npu/bringup.sh [--build-dir DIR] [--mlir-aie-src DIR] [--skip-smoke] [--skip-build]
#
#   --build-dir DIR     Kiln's CMake build folder (default: build), for ctest and `kiln bench`
#   --mlir-aie-src DIR  a checkout of mlir-aie at the pinned tag, for the whole-array smoke test
#   --skip-smoke        do not run mlir-aie's whole-array GEMM example
#   --skip-build        do not (re)build the kernels with make
#
# Nothing here was run on an NPU by Kiln's developers: it is the list a person with the hardware
# works through. Exit status: 0 when every step passed, 1 at the first failure.
set -u

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BUILD_DIR="$ROOT/build"
MLIR_AIE_SRC=""
SKIP_SMOKE=0
SKIP_BUILD=0
# The pins of README.md ("Toolchain"); the smoke test and the kernels were written against these.
PIN_MLIR_AIE="1.4.2"
# Buffers Kiln maps at head_dim 256: the unsplit variant's launch (Q 0.5, K/V 8, out 1 MiB) and the
# split variant's (Q 0.5, K/V 4, out 1 MiB), plus the instruction streams: ~15 MiB.
MEMLOCK_NEED_KIB=24576

while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) BUILD_DIR="$(cd "$2" && pwd)"; shift 2 ;;
    --mlir-aie-src) MLIR_AIE_SRC="$(cd "$2" && pwd)"; shift 2 ;;
    --skip-smoke) SKIP_SMOKE=1; shift ;;
    --skip-build) SKIP_BUILD=1; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "unknown option $1 (see --help)"; exit 2 ;;
  esac
done

STEP=0
pass() { echo "  PASS  $STEP. $1"; }
skip() { echo "  SKIP  $STEP. $1"; }
fail() {
  echo "  FAIL  $STEP. $1"
  echo "        next: $2"
  echo "Stopped at step $STEP. Fix it and run kernels/npu/bringup.sh again."
  exit 1
}
step() { STEP=$((STEP + 1)); echo "[$STEP] $1"; }

step "driver: amdxdna bound to a Phoenix NPU (PCI 1022:1502), /dev/accel usable"
phoenix=""
for dev in /sys/bus/pci/devices/*; do
  if [ "$(cat "$dev/vendor" 2>/dev/null)" = "0x1022" ] && [ "$(cat "$dev/device" 2>/dev/null)" = "0x1502" ]; then
    phoenix="$dev"
  fi
done
[ -n "$phoenix" ] || fail "no PCI device 1022:1502" \
  "enable the NPU (IPU) in the firmware setup; Strix (17f0) is XDNA2, which this kernel does not target"
driver="$(basename "$(readlink -f "$phoenix/driver" 2>/dev/null)" 2>/dev/null)"
[ "$driver" = "amdxdna" ] || fail "the NPU at $phoenix is bound to '${driver:-nothing}', not amdxdna" \
  "use Linux 6.14+ (amdxdna in-tree) or build and install amd/xdna-driver's DKMS module, then reboot"
accel="$(ls /dev/accel/accel* 2>/dev/null | head -n1)"
[ -n "$accel" ] || fail "no /dev/accel/accel* node" "check 'dmesg | grep -i amdxdna' for a probe error"
[ -r "$accel" ] && [ -w "$accel" ] || fail "$accel is not readable and writable by $(id -un)" \
  "add yourself to its group: sudo usermod -aG $(stat -c %G "$accel") $(id -un); log in again"
pass "amdxdna on $(basename "$phoenix"), $accel"

step "firmware: the NPU firmware loaded"
if dmesg 2>/dev/null | grep -i amdxdna | grep -qi -e "fail" -e "error"; then
  fail "dmesg has amdxdna errors: $(dmesg | grep -i amdxdna | grep -i -e fail -e error | tail -n1)" \
    "install the firmware matching the driver (linux-firmware's amdnpu/1502_00, or xdna-driver's), reboot"
fi
if ls /lib/firmware/amdnpu/1502_00/ >/dev/null 2>&1; then
  pass "$(ls /lib/firmware/amdnpu/1502_00/ | tr '\n' ' ')"
else
  skip "no /lib/firmware/amdnpu/1502_00 (xdna-driver may install it elsewhere); step 4 checks it works"
fi

step "XRT: from amd/xdna-driver, with xrt::hw_context"
[ -n "${XILINX_XRT:-}" ] || fail "XILINX_XRT is not set" "source /opt/xilinx/xrt/setup.sh (XRT built by xdna-driver's build.sh)"
[ -f "$XILINX_XRT/include/xrt/xrt_hw_context.h" ] || fail "$XILINX_XRT has no xrt/xrt_hw_context.h" \
  "Debian's XRT 2.13 is too old: build XRT and the plugin from https://github.com/amd/xdna-driver"
command -v xrt-smi >/dev/null || fail "xrt-smi is not on PATH" "source /opt/xilinx/xrt/setup.sh"
xrt-smi examine 2>&1 | grep -qi -e npu -e phoenix || fail "xrt-smi examine lists no NPU" \
  "the XRT plugin (xrt_plugin*-amdxdna) is missing or does not match the driver: reinstall both from one xdna-driver build"
pass "XRT at $XILINX_XRT"

step "memlock: room to map both variants' launch buffers (~15 MiB at head_dim 256)"
limit="$(ulimit -l)"
if [ "$limit" != "unlimited" ] && [ "$limit" -lt "$MEMLOCK_NEED_KIB" ]; then
  fail "ulimit -l is $limit KiB" \
    "raise it: '* soft memlock unlimited' and '* hard memlock unlimited' in /etc/security/limits.conf, log in again"
fi
pass "ulimit -l = $limit"

step "xrt-smi validate: the driver's own NPU tests"
out="$(xrt-smi validate 2>&1)"
echo "$out" | grep -qi "fail" && fail "xrt-smi validate failed: $(echo "$out" | grep -i fail | head -n1)" \
  "read 'dmesg | tail -n 50'; a hung NPU recovers with: sudo modprobe -r amdxdna && sudo modprobe amdxdna"
pass "xrt-smi validate"

step "toolchain: mlir-aie $PIN_MLIR_AIE and its Peano, set up by mlir-aie's utils/env_setup.sh"
[ -n "${MLIR_AIE_INSTALL_DIR:-}" ] && [ -n "${PEANO_INSTALL_DIR:-}" ] || fail "MLIR_AIE_INSTALL_DIR / PEANO_INSTALL_DIR not set" \
  "in a Python venv: pip install mlir_aie==$PIN_MLIR_AIE -f https://github.com/Xilinx/mlir-aie/releases/expanded_assets/v$PIN_MLIR_AIE, pip install -r utils/peano-requirements.txt of that tag, then source utils/env_setup.sh"
have="$(python3 -m pip show mlir_aie 2>/dev/null | sed -n 's/^Version: //p')"
[ "$have" = "$PIN_MLIR_AIE" ] || fail "mlir_aie is '${have:-not installed}', Kiln pins $PIN_MLIR_AIE" \
  "install the pinned wheel (README.md, Toolchain); other versions may have moved the IRON API"
[ -x "$PEANO_INSTALL_DIR/bin/clang++" ] || fail "no Peano clang++ under $PEANO_INSTALL_DIR" "reinstall llvm-aie"
pass "mlir_aie $have, Peano $("$PEANO_INSTALL_DIR/bin/clang++" --version | head -n1)"

step "smoke test: mlir-aie's whole-array GEMM example on this NPU"
if [ "$SKIP_SMOKE" = 1 ]; then
  skip "--skip-smoke"
elif [ -z "$MLIR_AIE_SRC" ]; then
  fail "no mlir-aie source checkout given" \
    "git clone -b v$PIN_MLIR_AIE https://github.com/Xilinx/mlir-aie and pass --mlir-aie-src DIR (or --skip-smoke)"
else
  (cd "$MLIR_AIE_SRC/programming_examples/basic/matrix_multiplication/whole_array" && make run) \
    || fail "the whole-array example failed: the stack below Kiln is not working" \
      "check dmesg; 'DRM_IOCTL_AMDXDNA_CREATE_HWCTX IOCTL failed (err=2)' means a pre-April-2024 driver that only loads xclbins installed as firmware: see README.md, 'Unsigned xclbins on older stacks'"
  pass "whole_array make run"
fi

step "build: Kiln's attention kernels (make in kernels/npu)"
if [ "$SKIP_BUILD" = 1 ]; then
  skip "--skip-build"
else
  make -C "$HERE" >/tmp/kiln-npu-make.log 2>&1 || fail "make failed (log: /tmp/kiln-npu-make.log)" \
    "README.md, 'First-compile risks', lists what to suspect first"
  built=""
  for f in "$HERE"/build/attention_d*.xclbin; do built="$built $(basename "$f")"; done
  pass "built:$built"
fi
export KILN_NPU_KERNELS="$HERE/build"

step "Kiln built with XRT: ctest -R npu_test_npu_hardware (kernel against the emulator)"
KILN="$BUILD_DIR/core/cli/kiln"
[ -x "$KILN" ] || fail "no kiln at $KILN" \
  "configure with the XRT environment set (CMake prints 'NPU dispatch built'), build, or pass --build-dir"
"$KILN" info --hardware 2>&1 | grep -i npu
(cd "$BUILD_DIR" && ctest -R npu_test_npu_hardware --output-on-failure) >/tmp/kiln-npu-ctest.log 2>&1 \
  || fail "the hardware test failed (log: /tmp/kiln-npu-ctest.log)" \
    "a difference above 1e-2 is a kernel/emulator mismatch: DESIGN.md, 'What only hardware can settle'"
grep -q "SKIP" /tmp/kiln-npu-ctest.log && fail "the hardware test skipped: $(grep SKIP /tmp/kiln-npu-ctest.log | head -n1)" \
  "the skip reason names the missing piece (XRT dispatch not built, kernels not installed, no usable NPU)"
pass "$(grep -o 'head_dim [0-9]*: largest difference[^)]*)' /tmp/kiln-npu-ctest.log | tr '\n' ';')"

step "speed: kiln bench --attention npu against npu-emulator (synthetic Gemma 3 1B, head_dim 256)"
for placement in npu npu-emulator; do
  "$KILN" bench --synthetic gemma3-1b --backend cpu --attention "$placement" --json \
    >"/tmp/kiln-npu-bench-$placement.json" 2>&1 || fail "kiln bench --attention $placement failed" \
    "see /tmp/kiln-npu-bench-$placement.json"
done
grep -q '"attention_npu_fallbacks": *0' /tmp/kiln-npu-bench-npu.json 2>/dev/null \
  || echo "        note: the NPU run fell back to the CPU at least once; read its notes in /tmp/kiln-npu-bench-npu.json"
pass "results in /tmp/kiln-npu-bench-npu.json and /tmp/kiln-npu-bench-npu-emulator.json"

echo "All steps passed. Next: put the measured rates into DeviceRates (core/runtime/npu/attention_scheduler.h)"
echo "and DESIGN.md, marked measured, with this laptop's model, firmware and XRT versions."
