#!/usr/bin/env bash
# Figures of the live system: builds, then runs build/bench/live_bench (a
# local cluster of real daemons on loopback) and writes the table to
# bench/live/results.md (or the file given as the first argument).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
"$root/scripts/build.sh" >/dev/null
build="${SCHED_BUILD_DIR:-$root/build}"
out="${1:-$root/bench/live/results.md}"
shift || true
{
  echo "# Live system figures"
  echo
  echo "A local cluster on loopback ($(nproc) cores); produced by \`bench/live/run.sh\` on $(date -u +%Y-%m-%d)."
  echo
  "$build/bench/live_bench" "$@"
} | tee "$out"
