#!/usr/bin/env bash
# One expand step and one shrink step of the MPI heat solver under sched
# (issue 16): a local cluster of 4 virtual nodes (`sched cluster up`), the
# Open MPI heat_mpi_malleable started on 2 of them by `sched run --mpi=pmix
# --mall-spawn=mpi -n 2`, grown 2→4 (it spawns its new ranks on the added
# nodes) and shrunk 4→2 by a policy that does one of each
# (bench/mpi/expand_policy.lua). Per step, the six steps of the adaptation
# (docs/protocol.md §8) from the job.adapting event to job.resized, by the
# events' timestamps (schedd's clock), and rank 0's own time from the probe
# that saw it to its commit ("app"). RUNS jobs one after the other; prints
# the median and range of each. Figures only, nothing is asserted.
#
#   bench/mpi/expand.sh [RUNS=5]
# after building sched, schedd, nodeagent and heat_mpi_malleable_openmpi.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SCHED_BUILD_DIR:-$root/build}"
runs="${1:-5}"
sched="$build/cli/sched"
app="$build/examples/heat_mpi_malleable_openmpi"
state="$(mktemp -d /tmp/sched-expand-bench.XXXXXX)"
port=$((20000 + RANDOM % 20000))
export SCHED_ENDPOINT="tcp://127.0.0.1:$port"
events_pid=""
cleanup() {
  [ -n "$events_pid" ] && kill "$events_pid" 2>/dev/null || true
  "$sched" cluster down --state-dir "$state" >/dev/null 2>&1 || true
  rm -rf "$state"
}
trap cleanup EXIT
"$sched" cluster up --nodes 4 --cores 1 --policy "$root/bench/mpi/expand_policy.lua" \
  --port "$port" --state-dir "$state" >/dev/null
[ -S "$state/munge/munge.socket" ] && export SCHED_MUNGE_SOCKET="$state/munge/munge.socket"
"$sched" events --topic job.adapting --topic job.resized >"$state/events" &
events_pid=$!
sleep 1  # the subscription is up before the first job
script="$state/heat.sh"
cat >"$script" <<EOF
#!/bin/sh
export OMPI_MCA_btl=self,tcp
export SCHED_MALL_RENDEZVOUS_DIR=$state/rendezvous-\$SCHED_JOB_ID
$sched run --mpi=pmix --mall-spawn=mpi -n 2 $app --nx 256 --ny 256 --iters 200 \
  --probe-every 5 --hold 20:2
echo "step status \$?"
EOF
ids=()
for run in $(seq "$runs"); do
  id="$("$sched" submit -N 2 --kind malleable --min-nodes 1 --max-nodes 4 \
    -o "$state/out.$run" --parsable "$script")"
  while "$sched" show "$id" --json | grep -Eq '"state": *"(PENDING|STARTING|RUNNING|ADAPTING|COMPLETING)"'; do
    sleep 0.5
  done
  if ! grep -q "step status 0" "$state/out.$run"; then
    echo "run $run failed:" >&2
    cat "$state/out.$run" >&2
    exit 1
  fi
  ids+=("$id")
done
sleep 1
kill "$events_pid" 2>/dev/null || true
events_pid=""
# A step's time: its job.resized's time minus the job.adapting's before it.
python3 - "$state" "$runs" "${ids[@]}" <<'EOF'
import json, re, statistics, sys
state, runs, ids = sys.argv[1], int(sys.argv[2]), [int(i) for i in sys.argv[3:]]
# The policy grows each job once, then shrinks it once: its first step is
# the expansion, its second the shrink.
steps = {"expand": [], "shrink": []}
begun, done = {}, {}
for line in open(f"{state}/events"):
    e = json.loads(line)
    job = e.get("job")
    if job not in ids:
        continue
    if e["topic"] == "job.adapting":
        begun[job] = e["time"]
    elif e["topic"] == "job.resized" and job in begun:
        op = "expand" if done.get(job, 0) == 0 else "shrink"
        done[job] = done.get(job, 0) + 1
        steps[op].append(1000 * (e["time"] - begun.pop(job)))
app = {"expand": [], "shrink": []}
for run in range(1, runs + 1):
    for line in open(f"{state}/out.{run}"):
        m = re.search(r"resized (\d+) -> (\d+) after iteration \d+ in ([0-9.]+) s", line)
        if m:
            op = "expand" if int(m.group(2)) > int(m.group(1)) else "shrink"
            app[op].append(1000 * float(m.group(3)))
print("| step | runs | events median ms | min | max | app median ms | min | max |")
print("|---|---|---|---|---|---|---|---|")
for op, label in (("expand", "expand 2 → 4 (spawn)"), ("shrink", "shrink 4 → 2")):
    ev, ap = steps[op], app[op]
    f = lambda v: "%.1f | %.1f | %.1f" % (statistics.median(v), min(v), max(v)) if v else "- | - | -"
    print(f"| {label} | {len(ev)} | {f(ev)} | {f(ap)} |")
EOF
