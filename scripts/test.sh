#!/usr/bin/env bash
# Installs dependencies, builds everything and runs every test. The README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
BUILD=${KILN_BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD" -j"$(nproc)"
# A failed test runs once more, so a timing flake under a loaded CI machine cannot block a submission
# (one was found in gui_test_engine_controller and fixed); a second failure still fails the run,
# and ctest's output names every rerun.
cd "$BUILD" && ctest --output-on-failure -j"$(nproc)" --timeout 600 --repeat until-pass:2
