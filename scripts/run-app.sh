#!/usr/bin/env bash
# Installs dependencies, builds Kiln and launches the desktop app on the bundled model.
# The README's "run" command. Extra arguments go to the app.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
BUILD=${KILN_BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j"$(nproc)" --target kiln $( [ -d gui ] && echo kiln-desktop )
if [ -x "$BUILD/gui/kiln-desktop" ]; then
  exec "$BUILD/gui/kiln-desktop" "$@"
fi
# Without the app (no Qt), the CLI chats with the bundled model.
exec "$BUILD/core/cli/kiln" chat "$@"
