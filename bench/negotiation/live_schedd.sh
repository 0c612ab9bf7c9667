#!/usr/bin/env bash
# The negotiation live in schedd (issue 20 items 3, 5): time from a job's
# submission to its start through the negotiation, inside schedd. A local
# cluster (`sched cluster up`: schedd and 2 agents on loopback) with a rigid
# partition (n1) and a negotiated cores partition (n2, 4 cores, schedd's
# iHypervisor and iScheduler over an ipc socket); jobs of 1 core are
# submitted one at a time, each after the last ended, and timed from its
# job.submitted event to its job.starting event (schedd's clock; the
# negotiation and the engine's pass between them). Writes its table to
# bench/negotiation/live_schedd_results.md (or $OUT). Figures only.
#
#   bench/negotiation/live_schedd.sh [JOBS]      # default 50
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(realpath -m "${SCHED_BUILD_DIR:-$root/build}")"
jobs="${1:-50}"
cmake --build "$build" --target sched schedd nodeagent >/dev/null
export PATH="$build/cli:$PATH"
dir="$(mktemp -d /tmp/sched-nego-bench.XXXXXX)"
state="$dir/state"
mkdir -p "$dir/work"
cat > "$dir/sched.toml" <<TOML
[scheduler]
policy = "fcfs"
tick_s = 1
[jobs]
allow_root_jobs = true
[partitions.rigid]
nodes = "n1"
default = true
[partitions.inv]
nodes = "n2"
kind = "cores"
[partitions.inv.negotiation]
status_interval_s = 0
TOML
cleanup() { sched cluster down --state-dir "$state" >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
load="$(cut -d' ' -f1-3 /proc/loadavg)"
sched cluster up --nodes 2 --cores 4 --config "$dir/sched.toml" --state-dir "$state" >/dev/null
SCHED_ENDPOINT="$(sed -n 's/.*"client_endpoint": "\(.*\)".*/\1/p' "$state/cluster.json")"
export SCHED_ENDPOINT
munge_socket="$(sed -n 's/.*"munge_socket": "\(.*\)".*/\1/p' "$state/cluster.json")"
if [ -n "$munge_socket" ]; then export SCHED_MUNGE_SOCKET="$munge_socket"; fi
out="${OUT:-$root/bench/negotiation/live_schedd_results.md}"
/usr/bin/python3 - "$jobs" "$dir/work" "$load" "$(git -C "$root" rev-parse --short HEAD)" <<'PY' | tee "$out"
import json, subprocess, sys, time

jobs, work, load, commit = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
events = subprocess.Popen(["sched", "events", "--topic", "job.", "--topic", "nego."],
                          stdout=subprocess.PIPE, text=True)
time.sleep(1)  # the subscription takes hold (the warm-up jobs are not counted either)

def sched(*args):
    return subprocess.run(["sched", *args], check=True, capture_output=True, text=True).stdout

def negotiation():
    return json.loads(sched("negotiation", "--json", "-p", "inv"))["partitions"][0]

deadline = time.time() + 60
while negotiation()["peer"] != "ready":
    if time.time() > deadline:
        sys.exit("the negotiation session did not start")
    time.sleep(0.1)
before = negotiation()
submitted, starting, nego_steps = {}, {}, 0
for i in range(jobs + 3):  # the first 3 warm up
    job = int(sched("submit", "--parsable", "-p", "inv", "--cores=1", "-D", work, "-o",
                    "/dev/null", "--wrap", "true").split(";")[0])
    while True:
        line = events.stdout.readline()
        if not line:
            sys.exit("the event stream ended")
        e = json.loads(line)
        if e.get("job") == job and e["topic"] == "job.submitted":
            submitted[job] = e["time"]
        elif e.get("job") == job and e["topic"] == "job.starting":
            starting[job] = e["time"]
        elif e["topic"].startswith("nego.") and i >= 3:
            nego_steps += 1
        elif e.get("job") == job and e["topic"] == "job.completed":
            break
    if i == 2:
        before = negotiation()
after = negotiation()
events.terminate()
ms = sorted((starting[j] - submitted[j]) * 1000 for j in list(submitted)[3:])
def pct(p):
    return ms[min(len(ms) - 1, int(len(ms) * p))]
messages = sum(after["messages"].values()) - sum(before["messages"].values())
agreed = after["agreed"] - before["agreed"]
offers = after["messages"].get("nego.offer", 0) - before["messages"].get("nego.offer", 0)
print("# The negotiation live in schedd: submission to start")
print()
print("Produced by `bench/negotiation/live_schedd.sh %d` at %s (load average before the run %s)."
      % (jobs, commit, load))
print("`sched cluster up`: schedd and 2 agents on loopback; partition `inv` (n2, 4 cores) negotiated")
print("by schedd's iHypervisor (socket_pack.lua) and iScheduler (wait_first.lua) over an ipc socket.")
print("One 1-core job at a time, each after the last ended; time from its job.submitted event to its")
print("job.starting event (schedd's clock: the pass that queues it, the negotiation over the socket,")
print("the pass that starts it on the agreed core).")
print()
print("| jobs | median ms | 95th percentile ms | max ms | negotiation messages per job | offers per job | agreements | nego.* events per job |")
print("|---|---|---|---|---|---|---|---|")
print("| %d | %.2f | %.2f | %.2f | %.1f | %.2f | %d | %.1f |"
      % (len(ms), pct(0.5), pct(0.95), ms[-1], messages / len(ms), offers / len(ms), agreed,
         nego_steps / len(ms)))
PY
