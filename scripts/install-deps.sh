#!/usr/bin/env bash
# Installs every build, test and packaging dependency from Debian 12's archive.
# Nothing else is downloaded: the build and the tests work offline after this.
set -euo pipefail
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
PKGS=(
  build-essential cmake ninja-build pkg-config git
  qt6-base-dev qt6-declarative-dev qml6-module-qtquick qml6-module-qtquick-controls
  qml6-module-qtquick-layouts qml6-module-qtquick-window qml6-module-qtquick-templates
  qml6-module-qtqml-workerscript qml6-module-qtqml qml6-module-qtqml-models qml6-module-qttest
  qml6-module-qtquick-dialogs qml6-module-qt-labs-platform qml6-module-qt-labs-settings
  qml6-module-qt-labs-folderlistmodel qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools
  qt6-charts-dev qml6-module-qtcharts qt6-svg-dev libqt6svg6
  libvulkan-dev glslc spirv-tools mesa-vulkan-drivers vulkan-tools
  libsentencepiece-dev sentencepiece libxrt-dev
  libcpp-httplib-dev nlohmann-json3-dev libcli11-dev libcurl4-openssl-dev libssl-dev
  libpng-dev libjpeg62-turbo-dev libwebp-dev python3-pil
  xvfb xauth x11-apps imagemagick
  python3 lintian appstream desktop-file-utils dpkg-dev fakeroot file
)
missing=()
for p in "${PKGS[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "install-deps: all ${#PKGS[@]} packages present"

# Debian 12's glslc (shaderc 2023.2) rejects GL_KHR_cooperative_matrix, which the prefill kernels
# for AMD's RDNA3 (and any KHR driver) need. Debian 13's glslc 2025.2 compiles it; its binary needs
# glibc 2.38, so it is unpacked with trixie's own libc into a private folder (the system stays
# bookworm) and run through that folder's loader by a wrapper (kernels/vulkan/CMakeLists.txt finds
# it). Best effort: without it the build leaves the KHR kernels out and everything else works.
TRIXIE=${KILN_TRIXIE_DIR:-/opt/kiln-toolchain/trixie}
if [ -x "$TRIXIE/glslc" ] && "$TRIXIE/glslc" --version >/dev/null 2>&1; then
  echo "install-deps: trixie glslc present ($TRIXIE/glslc)"
elif ! ( set -e
  work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/lists/partial" "$work/debs"
  echo "deb http://deb.debian.org/debian trixie main" > "$work/sources.list"
  apt_opts=(-qq -oDir::Etc::SourceList="$work/sources.list" -oDir::Etc::SourceParts=/dev/null
            -oDir::State::Lists="$work/lists" -oDir::Cache="$work/cache" -oDir::Cache::archives="$work/debs"
            -oAPT::Architecture=amd64)
  [ "$(id -u)" -ne 0 ] || apt_opts+=(-oAPT::Sandbox::User=root)  # _apt cannot enter mktemp's folder
  apt-get "${apt_opts[@]}" update
  # glslc and the libraries its binary links (ldd), from trixie.
  (cd "$work/debs" && apt-get "${apt_opts[@]}" download glslc libshaderc1 libc6 libstdc++6 libgcc-s1)
  $SUDO mkdir -p "$TRIXIE"
  for f in "$work"/debs/*.deb; do $SUDO dpkg -x "$f" "$TRIXIE/root"; done
  lib="$TRIXIE/root/usr/lib/x86_64-linux-gnu"
  printf '#!/bin/sh\n# Debian 13 glslc through its own loader and libc (scripts/install-deps.sh).\nexec "%s/ld-linux-x86-64.so.2" --library-path "%s" "%s/root/usr/bin/glslc" "$@"\n' \
    "$lib" "$lib" "$TRIXIE" | $SUDO tee "$TRIXIE/glslc" >/dev/null
  $SUDO chmod +x "$TRIXIE/glslc"
  echo "install-deps: trixie glslc in $TRIXIE: $("$TRIXIE/glslc" --version | sed -n 1p)"
); then
  echo "install-deps: no trixie glslc (offline?): the KHR cooperative-matrix kernels will not be built" >&2
fi
