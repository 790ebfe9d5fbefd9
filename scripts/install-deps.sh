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
