#!/usr/bin/env bash
# Soak under faults (issue 13), bounded in time: on a local cluster
# (`sched cluster up`), submit N short jobs and keep SIGKILLing and restarting
# schedd at random intervals (phase "schedd"); then the same with node agents
# SIGKILLed and restarted, jobs requeued on node failure (phase "agents").
# Each job records what it really did (bench/soak/job.sh); at the end of a
# phase the records are compared with `sched acct`:
#   lost   an acknowledged submission that is in neither acct nor the queue
#   twice  a job whose script ran while an earlier run of it was still alive
#   wrong  acct's state/exit differs from what the job's last run did
#   unfinished  still queued or running when the phase's time ran out
# A benchmark, not a test: prints one line per phase and exits 1 if any of
# lost/twice/wrong is not zero.
#
# usage: bench/soak/run.sh [--minutes M] [--jobs N] [--nodes K] [--build DIR]
#                          [--port P] [--phases schedd,agents] [--keep]
set -uo pipefail

minutes=4
jobs=1000
nodes=8
build=build
port=7300
phases=schedd,agents
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --phases) phases=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n 2,17p "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$build" && pwd) || { echo "no build folder $build" >&2; exit 2; }
sched=$build/cli/sched
schedd_bin=$build/schedd/schedd
agent_bin=$build/nodeagent/nodeagent
for b in "$sched" "$schedd_bin" "$agent_bin"; do
  [ -x "$b" ] || { echo "missing $b (build the sched, schedd and nodeagent targets)" >&2; exit 2; }
done

nphases=$(echo "$phases" | tr ',' '\n' | grep -c .)
phase_s=$(( minutes * 60 / nphases ))
root=$(mktemp -d /tmp/sched-soak-XXXXXX)
status=0
state=
schedd_pid=
declare -A agent_pids

client=tcp://127.0.0.1:$port
agents_ep=tcp://127.0.0.1:$((port + 1))
events_ep=tcp://127.0.0.1:$((port + 2))
export SCHED_ENDPOINT=$client

cleanup() {
  [ -n "$state" ] && timeout 30 "$sched" cluster down --state-dir "$state" >/dev/null 2>&1
  [ -n "$schedd_pid" ] && kill -9 "$schedd_pid" 2>/dev/null
  for p in "${agent_pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  # Jobs a killed agent left behind write their pid to $rec/*.pid.
  for f in "$root"/*/rec/*.pid; do
    [ -f "$f" ] && kill -9 "-$(cat "$f")" 2>/dev/null
  done
  [ "$keep" = 1 ] || rm -rf "$root"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_gone() {  # pid: until it is gone (or a zombie)
  for _ in $(seq 1 200); do
    st=$(cut -d')' -f2 "/proc/$1/stat" 2>/dev/null | cut -c2)
    [ -z "$st" ] || [ "$st" = Z ] && return
    sleep 0.05
  done
}

start_schedd() {
  # With the munged `cluster up` chose (its own, on a machine without one).
  setsid "$schedd_bin" --config "$state/sched.toml" --state-dir "$state" \
    --client-endpoint "$client" --agent-endpoint "$agents_ep" --event-endpoint "$events_ep" \
    ${munge_socket:+--munge-socket "$munge_socket"} \
    >>"$state/logs/schedd.out" 2>>"$state/logs/schedd.log" </dev/null &
  schedd_pid=$!
}

start_agent() {  # name
  setsid "$agent_bin" --engine "$agents_ep" --node-name "$1" --cores 1 --allow-root-jobs \
    --spool-dir "$state/spool/$1" --secret-key-file "$state/keys/$1.key" \
    --server-public-key-file "$state/keys/schedd.pub" >/dev/null 2>>"$state/logs/agent-$1.log" </dev/null &
  agent_pids[$1]=$!
}

# The processes this script restarted are its own; cluster.json names them
# for `sched cluster down`.
save_pids() {
  python3 - "$state/cluster.json" "$schedd_pid" "$(declare -p agent_pids)" <<'PY'
import json, re, sys
path, schedd, agents = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = json.load(open(path))
data["schedd"] = schedd
for name, pid in re.findall(r'\[([^\]]+)\]="(\d+)"', agents):
    data["agents"][name] = int(pid)
json.dump(data, open(path, "w"))
PY
}

run_phase() {  # name on_failure
  local name=$1 on_failure=$2
  local dir=$root/$name
  state=$dir/state
  local rec=$dir/rec
  mkdir -p "$state/logs" "$rec"
  cat >"$state/sched.toml" <<TOML
[scheduler]
policy = "fcfs"
tick_s = 0.2

[nodes]
heartbeat_s = 0.5
down_after_s = 3.0
kill_grace_s = 1.0
kill_timeout_s = 5.0
on_failure = "$on_failure"
fence_timeout_s = 20.0

[jobs]
# The jobs run as whoever runs this script, root in CI.
allow_root_jobs = true
TOML
  unset SCHED_MUNGE_SOCKET  # the last phase's munged is gone: cluster up picks anew
  if ! "$sched" cluster up --nodes "$nodes" --config "$state/sched.toml" --state-dir "$state" \
      --port "$port" >"$dir/up.out" 2>&1; then
    echo "$name: cluster up failed:"; cat "$dir/up.out"; status=1; return
  fi
  schedd_pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["schedd"])' "$state/cluster.json")
  # The cluster's own munged, when the machine runs none: this script's
  # submissions are signed there (schedd restarts with it: start_schedd).
  munge_socket=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("munge_socket", ""))' "$state/cluster.json")
  if [ -n "$munge_socket" ]; then export SCHED_MUNGE_SOCKET="$munge_socket"; fi
  for i in $(seq 1 "$nodes"); do
    agent_pids[n$i]=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["agents"][sys.argv[2]])' "$state/cluster.json" "n$i")
  done
  local deadline=$(( $(date +%s) + phase_s ))

  # Faults, until the phase ends (the file `stop` ends them early).
  (
    while [ ! -e "$dir/stop" ] && [ "$(date +%s)" -lt "$deadline" ]; do
      sleep "$(python3 -c 'import random; print(round(random.uniform(2, 6), 2))')"
      [ -e "$dir/stop" ] && break
      if [ "$name" = schedd ]; then
        kill -9 "$schedd_pid" 2>/dev/null; wait_gone "$schedd_pid"
        echo kill >>"$dir/faults"
        sleep "$(python3 -c 'import random; print(round(random.uniform(0, 1), 2))')"
        start_schedd
      else
        n=n$(( RANDOM % nodes + 1 ))
        kill -9 "${agent_pids[$n]}" 2>/dev/null; wait_gone "${agent_pids[$n]}"
        echo "kill $n" >>"$dir/faults"
        sleep "$(python3 -c 'import random; print(round(random.uniform(0, 2), 2))')"
        start_agent "$n"
      fi
      save_pids
      echo "$schedd_pid $(declare -p agent_pids)" >"$dir/pids"
    done
  ) &
  local chaos=$!

  # Submissions: an id printed is an acknowledged submission. Jobs run (and
  # write their output) in the phase's folder.
  cd "$dir" || return
  : >"$dir/acked"
  local submitted=0 refused=0
  for i in $(seq 1 "$jobs"); do
    [ "$(date +%s)" -ge "$deadline" ] && break
    if id=$(timeout 15 "$sched" submit --parsable --job-name "soak$i" \
        --wrap "sh $here/job.sh $rec" 2>>"$dir/submit.err"); then
      echo "$id" >>"$dir/acked"; submitted=$((submitted + 1))
    else
      refused=$((refused + 1))
    fi
  done

  cd - >/dev/null || true
  # Wait for every acknowledged job to end, or the deadline.
  python3 "$here/check.py" wait "$dir/acked" "$deadline" "$sched"
  touch "$dir/stop"
  wait "$chaos" 2>/dev/null
  # The last restart's pids.
  if [ -f "$dir/pids" ]; then
    read -r schedd_pid rest <"$dir/pids"
    eval "${rest/declare -A/declare -gA}"
  fi
  # schedd may be between a kill and its restart: let it answer.
  sleep 2
  local faults
  faults=$(wc -l <"$dir/faults" 2>/dev/null || echo 0)
  local line
  line=$(python3 "$here/check.py" count "$dir/acked" "$rec" "$sched")
  echo "$name: $submitted acknowledged, $refused not, $faults kills; $line"
  case "$line" in *"lost 0, twice 0, wrong 0,"*) ;; *) status=1 ;; esac
  timeout 30 "$sched" cluster down --state-dir "$state" >/dev/null 2>&1
  state=
  schedd_pid=
  agent_pids=()
}

for phase in $(echo "$phases" | tr ',' ' '); do
  case "$phase" in
    schedd) run_phase schedd fail ;;
    agents) run_phase agents requeue ;;
    *) echo "unknown phase $phase" >&2; exit 2 ;;
  esac
done
[ "$keep" = 1 ] && echo "kept $root"
exit $status
