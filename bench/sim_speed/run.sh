#!/usr/bin/env bash
# How fast `sched sim` is (issue 15), side by side with a floor: prints the
# figures and writes them to bench/sim_speed/results.md. A figure, never a
# pass/fail: nothing here fails on time.
#
#   bench/sim_speed/run.sh      (after building the targets sched and easy_floor)
#   RUNS=3 RESULTS=/tmp/r.md SCHED_BUILD_DIR=other/build bench/sim_speed/run.sh
#
# 1. `sched sim` on lublin_256.swf under easy_backfill, whole process (with
#    --out, as a user runs it), against easy_floor.cpp, a minimal C++ EASY
#    over the same trace. The schedules must be equal (same start time for
#    every job) or the script stops: a faster wrong answer is no figure.
# 2. Replays of synthetic traces of 1k, 10k and 100k jobs (gen_swf.py, seed
#    1): CPU time per job and peak RSS per job, for sched and the floor.
#
# Times are CPU seconds (user + sys, from wait4) because the machine is
# shared: wall time measures the neighbours. Each figure is the minimum (and
# the median) of RUNS runs (default 5); peak RSS from /usr/bin/time.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${SCHED_BUILD_DIR:-$root/build}"
sched="$build/cli/sched"
floor="$build/bench/easy_floor"
runs="${RUNS:-5}"
trace="${SCHED_SHARED_WORKLOADS_DIR:-$root/../shared/workloads}/lublin_256.swf"
for bin in "$sched" "$floor"; do
  [[ -x "$bin" ]] || { echo "missing $bin: cmake --build build --target sched easy_floor" >&2; exit 1; }
done
export SCHED_POLICY_DIR="$root/scripts/policies"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# measure NAME CMD...: runs CMD $runs times (cputime.py); leaves
# "min median peak_rss_kb" in $work/NAME and the output in $work/NAME.out.
measure() {
  local name="$1"
  shift
  python3 "$here/cputime.py" "$runs" "$work/$name.out" -- "$@" >"$work/$name"
}
field() { awk -v f="$2" '{print $f}' "$work/$1"; }

# The schedule of a sched run (jobs.csv: id,submit,start,...) as "id start".
starts() { tail -n +2 "$1" | awk -F, '{print $1 " " $3}'; }

echo "sched sim vs the C++ floor, lublin_256.swf, easy_backfill ($runs runs each, CPU s)"
measure lublin_sched "$sched" sim --workload "$trace" --policy easy_backfill --out "$work/out"
measure lublin_floor "$floor" "$trace"
starts "$work/out/jobs.csv" >"$work/sched_starts"
if ! cmp -s "$work/sched_starts" "$work/lublin_floor.out"; then
  echo "the floor's schedule differs from sched's:" >&2
  diff "$work/sched_starts" "$work/lublin_floor.out" | head >&2
  exit 1
fi
jobs="$(wc -l <"$work/sched_starts")"
ratio="$(awk -v s="$(field lublin_sched 1)" -v f="$(field lublin_floor 1)" \
  'BEGIN {printf "%.1f", (f > 0 ? s / f : 0)}')"
lublin_table="| \`sched sim\` | $(field lublin_sched 1) | $(field lublin_sched 2) | $(field lublin_sched 3) |
| easy_floor | $(field lublin_floor 1) | $(field lublin_floor 2) | $(field lublin_floor 3) |"
echo "  sched: $(field lublin_sched 1) s (median $(field lublin_sched 2)), floor: $(field lublin_floor 1) s (median $(field lublin_floor 2)); ratio $ratio; same schedule for all $jobs jobs"

echo "synthetic replays (gen_swf.py, seed 1), easy_backfill"
synthetic_table=""
for n in 1000 10000 100000; do
  python3 "$here/gen_swf.py" "$n" 1 >"$work/syn_$n.swf"
  measure "syn_sched_$n" "$sched" sim --workload "$work/syn_$n.swf" --policy easy_backfill --out "$work/syn_out"
  measure "syn_floor_$n" "$floor" "$work/syn_$n.swf"
  starts "$work/syn_out/jobs.csv" >"$work/syn_starts"
  same="same schedule"
  cmp -s "$work/syn_starts" "$work/syn_floor_$n.out" || same="SCHEDULES DIFFER"
  row="$(awk -v n="$n" -v s="$(field "syn_sched_$n" 1)" -v m="$(field "syn_sched_$n" 3)" \
    -v f="$(field "syn_floor_$n" 1)" -v fm="$(field "syn_floor_$n" 3)" -v same="$same" 'BEGIN {
      printf "| %d | %.3f | %.2f | %.0f | %.4f | %.2f | %.0f | %s |", n, s, s / n * 1e6,
        m * 1024 / n, f, f / n * 1e6, fm * 1024 / n, same}')"
  synthetic_table+="$row"$'\n'
  echo "  $row"
done
# Memory per job without the fixed cost of the process (Lua state, code):
# the growth of peak RSS from 1k to 100k jobs.
marginal="$(awk -v a="$(field syn_sched_1000 3)" -v b="$(field syn_sched_100000 3)" \
  -v ta="$(field syn_sched_1000 1)" -v tb="$(field syn_sched_100000 1)" 'BEGIN {
    printf "%.0f bytes and %.2f µs per job", (b - a) * 1024 / 99000, (tb - ta) / 99000 * 1e6}')"
echo "  sched, 1k → 100k jobs: $marginal"

results="${RESULTS:-$here/results.md}"
# Changes to the results file itself (an earlier run's) do not count; a
# results file outside the tree is no pathspec git takes.
exclude=()
case "$results" in "$root"/*) exclude=(":(exclude)$results") ;; esac
commit="$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- . "${exclude[@]}" 2>/dev/null || echo " (with uncommitted changes)")"
# The dated sections below the figures (each session's breakdown, written
# by hand) are carried over from the file this run replaces.
history=""
[[ -f "$results" ]] && history="$(awk '/^## Session /{keep=1} keep' "$results")"
cat >"$results" <<EOF
# \`sched sim\` against a C++ floor

Produced by \`bench/sim_speed/run.sh\` on $(date -u +%Y-%m-%d) at commit
$commit,
$(nproc) cores shared with other builds (load average $(cut -d' ' -f1-3 /proc/loadavg)).
CPU seconds (user + sys) of the whole process, the minimum and median of $runs runs.

## lublin_256.swf, easy_backfill ($jobs jobs, 256 nodes)

| program | CPU s (min) | CPU s (median) | peak RSS (KB) |
|---|---|---|---|
$lublin_table

\`sched sim\` takes **$ratio×** the floor (easy_floor.cpp: the same EASY, same
schedule, checked job by job, without engine, Lua or reports).

## Synthetic traces (gen_swf.py, seed 1, 256 nodes, load 0.85)

| jobs | sched CPU s | sched µs/job | sched RSS bytes/job | floor CPU s | floor µs/job | floor RSS bytes/job | check |
|---|---|---|---|---|---|---|---|
${synthetic_table}
From 1k to 100k jobs, sched's peak RSS and CPU time grow by $marginal.
EOF
[[ -z "$history" ]] || printf '\n%s\n' "$history" >>"$results"
echo "wrote $results"
