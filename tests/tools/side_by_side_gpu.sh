#!/usr/bin/env bash
# Kiln and llama.cpp on the same GGUF files, same GPU, same run (the NVIDIA machine; PERFORMANCE.md,
# "How to measure"). Run from the repository root, in two steps so each fits one device call:
#   bash tests/tools/side_by_side_gpu.sh prepare   # llama.cpp built, random 27B GGUFs written
#   bash tests/tools/side_by_side_gpu.sh run       # both engines on every file, a table last
# Needs, in ignored folders of the checkout: .gl/ (the Vulkan loader debs), $BIN (default .vkbench/:
# kiln and its .so files in lib/), .device/llama.tar.gz (llama.cpp's source: git archive HEAD
# CMakeLists.txt cmake ggml src include common tools vendor gguf-py) and .device/debs/ (Debian 13's
# glslc, libshaderc1, libvulkan-dev, libvulkan1 and spirv-headers). Work goes to $WORK (default
# build-device/, kept between calls on a warm machine). FILES: "shape:quant ..." (default
# "27b:q4_k_m 27b:q4_0"); KILN_VARIANTS: "tag:key=value+key=value ..." (`kiln bench --tune` keys;
# default: the device's plan, the portable plan, and the portable plan with int8 prefill tiles);
# LLAMA_MODES: any of "default khr none" (llama.cpp's coopmat2, KHR cooperative matrix, no matrix
# cores). Results stay in $WORK as kiln-*.json and llama-*.csv; side_by_side_table.py prints them.
# --help prints this and exits.
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ] || [ $# -ne 1 ]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
  [ $# -eq 1 ]; exit $?
fi
set -uo pipefail
HERE=$(dirname "${BASH_SOURCE[0]}")
WORK=${WORK:-build-device}
BIN=${BIN:-.vkbench}
FILES=${FILES:-27b:q4_k_m 27b:q4_0}
KILN_VARIANTS=${KILN_VARIANTS:-plan: portable:family=other intdot:family=other+prefill=int_dot}
mkdir -p "$WORK"
for f in .gl/*.deb .device/debs/*.deb; do dpkg -x "$f" /; done
ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
export XDG_CACHE_HOME=/tmp/kiln-cache

if [ "$1" = prepare ]; then
  rm -rf "$WORK/llama" && mkdir -p "$WORK/llama"
  tar -xzf .device/llama.tar.gz -C "$WORK/llama"
  (cd "$WORK/llama" && cmake -S . -B b -DGGML_VULKAN=ON -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF \
      -DLLAMA_BUILD_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
      -DCMAKE_BUILD_TYPE=Release > cmake.log 2>&1 &&
   cmake --build b --target llama-bench -j14 > build.log 2>&1; echo "llama-bench build: exit $?") &
  for spec in $FILES; do
    IFS=: read -r shape quant <<< "$spec"
    [ -s "$WORK/$shape-$quant.gguf" ] || python3 "$HERE"/random_gguf.py "$WORK/$shape-$quant.gguf" "$shape" "$quant" "$WORK/llama/gguf-py" &
  done
  wait
  ls -la "$WORK"/*.gguf "$WORK"/llama/b/bin/llama-bench
  exit 0
fi

export LD_LIBRARY_PATH=$PWD/$BIN/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
date -u +%FT%TZ
for spec in $FILES; do
  IFS=: read -r shape quant <<< "$spec"
  file="$WORK/$shape-$quant.gguf"
  for v in $KILN_VARIANTS; do
    IFS=: read -r tag tunes <<< "$v"
    args=()
    IFS=+ read -ra pairs <<< "$tunes"
    for t in ${pairs[@]+"${pairs[@]}"}; do args+=(--tune "$t"); done
    "$BIN"/kiln bench --model "$file" --backend vulkan --prompt 512 --gen 128 --json ${args[@]+"${args[@]}"} \
      > "$WORK/kiln-$shape-$quant-$tag.json" 2>> "$WORK/kiln.err"
  done
  for mode in ${LLAMA_MODES:-default khr none}; do
    env=()
    [ $mode = khr ] && env=(GGML_VK_DISABLE_COOPMAT2=1)
    [ $mode = none ] && env=(GGML_VK_DISABLE_COOPMAT2=1 GGML_VK_DISABLE_COOPMAT=1)
    # Twice: its first prefill can be cold.
    env ${env[@]+"${env[@]}"} "$WORK"/llama/b/bin/llama-bench -m "$file" -ngl 99 -fa 1 -p 512 -n 0 -r 1 > /dev/null 2>&1
    env ${env[@]+"${env[@]}"} "$WORK"/llama/b/bin/llama-bench -m "$file" -ngl 99 -fa 1 -p 512 -n 128 -r 3 -o csv \
      > "$WORK/llama-$shape-$quant-$mode.csv" 2>> "$WORK/llama.err"
  done
done
tail -3 "$WORK/kiln.err"
python3 "$HERE"/side_by_side_table.py "$WORK"
