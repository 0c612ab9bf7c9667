#!/usr/bin/env bash
# Builds and runs the benchmarks; prints the figures. Never part of the tests.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
# Absolute: the scripts change folder, and a relative SCHED_BUILD_DIR means
# the one under the folder they were started from.
build="$(realpath -m "${SCHED_BUILD_DIR:-$root/build}")"
"$build/bench/bench_pass" --benchmark_min_time=1
"$build/bench/bench_replay" --benchmark_min_time=2
"$build/bench/bench_lp" --benchmark_min_time=0.5
echo
echo "ESP experiment (Figure 3): bench/esp/run.sh"
