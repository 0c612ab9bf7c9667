#!/usr/bin/env bash
# One negotiation round live over TCP loopback (issue 20): builds
# nego_live_round, runs it and writes its table to
# bench/negotiation/live_results.md (or $OUT); the arguments go to the
# program (--iterations N). Figures only: nothing is asserted.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SCHED_BUILD_DIR:-$root/build}"
cmake --build "$build" --target nego_live_round >/dev/null
out="${OUT:-$root/bench/negotiation/live_results.md}"
{
  echo "# One negotiation round, live over TCP loopback"
  echo
  echo "Produced by \`bench/negotiation/live.sh $*\` on $(date -u +%Y-%m-%d) at $(git -C "$root" rev-parse --short HEAD)"
  echo "($(nproc) cores, load average before the run $(cut -d' ' -f1-3 /proc/loadavg))."
  echo "The iHypervisor component with socket_pack.lua on a ROUTER (its own thread), the iScheduler"
  echo "component with wait_first.lua on a DEALER; time from REQUEST_RESOURCE_OFFER to the agreement"
  echo "(one 2-core job); messages per iteration include the declined offer that follows."
  echo
  "$build/bench/nego_live_round" "$@"
} | tee "$out"
