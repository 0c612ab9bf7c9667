#!/usr/bin/env bash
# Time per adaptation step on the live system (Figure 5 of Chadha et al.):
# builds what it needs, then runs build/bench/adapt_bench (a local cluster of
# 32 virtual nodes on loopback; one malleable job grown 1 → 32 and shrunk
# back, one node per step) and writes the table to bench/adapt/results.md
# and the figure to bench/adapt/figure5.svg (or to the folder given as the
# first argument). Extra arguments go to the program (e.g. --nodes 8).
# The daemons' and the job's logs go to $build/adapt-bench-logs.txt.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SCHED_BUILD_DIR:-$root/build}"
out="${1:-$root/bench/adapt}"
shift || true
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target adapt_bench >/dev/null
mkdir -p "$out"
{
  echo "# Time per adaptation step"
  echo
  echo "A local cluster on loopback ($(nproc) cores); produced by \`bench/adapt/run.sh\` on $(date -u +%Y-%m-%d)."
  echo "The paper (Chadha et al., Figure 5) measured at most 3.1 s per expand and 1.8 s per shrink"
  echo "step on 32 nodes of 48 processes each; the goal here is < 100 ms per step on loopback."
  echo
  "$build/bench/adapt_bench" --out-svg "$out/figure5.svg" --logs "$build/adapt-bench-logs.txt" "$@"
} | tee "$out/results.md"
