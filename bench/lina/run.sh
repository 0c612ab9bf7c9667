#!/usr/bin/env bash
# Lina et al.'s elastic experiment (docs/experiments.md, "Lina et al."):
# builds lina_experiment, then runs the `elastic` policy under all 18 gate ×
# victim combinations on the first 2,000 jobs of
# ../shared/workloads/lublin_256.swf, 10%-100% elastic, seeds 1-10, and
# writes the tables and figures to bench/lina/results/ (or to the folder
# given as the first argument):
#   lina/        Lina's setup: half malleable, half evolving, costs per
#                processor; all 18 combinations
# and, to explain the differences, the gate `default` with every victim order
# at 10%, 50% and 100% elastic:
#   malleable/   the all-malleable mode, Lina's costs
#   ours/        Lina's mix with the simulator's per-node costs (the
#                issue-21 setting)
#   small_requests/  Lina's setup with evolving requests of at most 25% of
#                the requested size
# Extra arguments go to every run (e.g. --seeds 1 2, --jobs 500; not
# --gates or --fractions, which the comparison runs set). About 9 min of CPU
# (0.37 s a run); 64 min of wall time on the shared, loaded 2-core machine
# (docs/experiments.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SCHED_BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" --target lina_experiment >/dev/null
out="${1:-$root/bench/lina/results}"
shift || true
program="$build/bench/lina_experiment"
"$program" --out "$out/lina" "$@" >/dev/null
"$program" --out "$out/malleable" --gates default --fractions 0.1 0.5 1 --mode all-malleable "$@" >/dev/null
"$program" --out "$out/ours" --gates default --fractions 0.1 0.5 1 --costs ours "$@" >/dev/null
"$program" --out "$out/small_requests" --gates default --fractions 0.1 0.5 1 --request-max 0.25 "$@" >/dev/null
echo "written to $out/{lina,malleable,ours,small_requests}/"
