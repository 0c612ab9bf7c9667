#!/usr/bin/env bash
# Urgent job submit → start on a local cluster (issue 17 item 3): builds,
# then runs build/bench/urgent_bench and writes the table to
# bench/urgent/results.md (or the file given as the first argument).
# Figures only: nothing is asserted.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
"$root/scripts/build.sh" >/dev/null
build="${SCHED_BUILD_DIR:-$root/build}"
out="${1:-$root/bench/urgent/results.md}"
shift || true
{
  echo "# Urgent job submit → start"
  echo
  echo "A local cluster on loopback ($(nproc) cores); produced by \`bench/urgent/run.sh\` on $(date -u +%Y-%m-%d)."
  echo "Time from the submission of a one-node urgent job to its script's first command."
  echo
  "$build/bench/urgent_bench" "$@"
} | tee "$out"
