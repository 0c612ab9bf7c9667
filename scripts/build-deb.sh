#!/usr/bin/env bash
# Builds the Debian package (docs/admin.md "Installing"): a build configured
# for /usr in DIR (default build-deb), then `cpack -G DEB` there.
#   scripts/build-deb.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-deb}
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
  -DSCHED_BUILD_TESTS=OFF -DSCHED_BUILD_BENCH=OFF "${launcher[@]}"
cmake --build "$dir" -j"$(nproc)"
(cd "$dir" && cpack -G DEB)
ls "$dir"/sched_*.deb
