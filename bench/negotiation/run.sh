#!/usr/bin/env bash
# The negotiation experiment (issue 20 item 4): builds nego_experiment, runs
# it and writes its tables to bench/negotiation/results.md (or the file given
# as the first argument; further arguments go to the program). Figures only:
# nothing is asserted. The simulation does not depend on the machine's speed.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SCHED_BUILD_DIR:-$root/build}"
cmake --build "$build" --target nego_experiment >/dev/null
out="${1:-$root/bench/negotiation/results.md}"
shift || true
{
  echo "# Negotiation: with and without"
  echo
  echo "Produced by \`bench/negotiation/run.sh $*\` on $(date -u +%Y-%m-%d) at $(git -C "$root" rev-parse --short HEAD)"
  echo "($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); a simulation: the figures do not depend on it)."
  echo
  "$build/bench/nego_experiment" "$@"
} | tee "$out"
