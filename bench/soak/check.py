#!/usr/bin/env python3
"""The soak's bookkeeping (bench/soak/run.sh).

check.py wait ACKED DEADLINE SCHED   until every acknowledged job has ended
check.py count ACKED REC SCHED       prints "lost L, twice T, wrong W, unfinished U"
"""
import json
import os
import subprocess
import sys
import time

TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"}


def call(sched, *args):
    try:
        out = subprocess.run([sched, *args, "--json"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        return None
    try:
        return json.loads(out.stdout)["jobs"]
    except (ValueError, KeyError):
        return None


def acked(path):
    with open(path) as f:
        return {int(line) for line in f if line.strip()}


def ended(sched):
    jobs = call(sched, "acct", "--limit", "1000000")
    return None if jobs is None else {j["id"]: j for j in jobs}


def queued(sched):
    jobs = call(sched, "queue")
    return None if jobs is None else {j["id"]: j for j in jobs}


def wait(ids_path, deadline, sched):
    ids = acked(ids_path)
    while time.time() < deadline:
        done = ended(sched)
        if done is not None and ids <= set(done):
            return
        time.sleep(2)


def expected(rec, job_id):
    """What the job's last run did: ("end", code), ("killed",) or ("never",)."""
    path = os.path.join(rec, f"{job_id}.log")
    if not os.path.exists(path):
        return ("never",)
    with open(path) as f:
        lines = [line.split() for line in f if line.strip()]
    if not lines:
        return ("never",)
    last = lines[-1]
    if last[0] == "end":
        return ("end", int(last[1]))
    return ("killed",)


def exit_of(job):
    """The exit status `sched acct --json` gives (None while it has none)."""
    status = job.get("exit_status")
    return None if status is None else int(status)


def count(ids_path, rec, sched):
    ids = acked(ids_path)
    done = queue = None
    for _ in range(15):  # schedd may be restarting
        done = ended(sched)
        queue = queued(sched)
        if done is not None and queue is not None:
            break
        time.sleep(1)
    done = done or {}
    queue = queue or {}
    lost = sorted(i for i in ids if i not in done and i not in queue)
    unfinished = [i for i in ids if i not in done and i in queue]
    twice = sorted(i for i in ids if os.path.exists(os.path.join(rec, f"{i}.twice")))
    wrong = []
    for i in ids:
        job = done.get(i)
        if job is None:
            continue
        what = expected(rec, i)
        state, code = job.get("state"), exit_of(job)
        if what[0] == "end":
            ok = (state == "COMPLETED" and code == 0) if what[1] == 0 else (
                state == "FAILED" and code == what[1])
        else:  # killed, or never ran: anything but a success
            ok = state != "COMPLETED"
        if not ok:
            wrong.append((i, state, code, what))
    print(f"lost {len(lost)}, twice {len(twice)}, wrong {len(wrong)}, unfinished {len(unfinished)}")
    for name, items in (("lost", lost), ("twice", twice), ("wrong", wrong)):
        if items:
            print(f"  {name}: {items[:10]}", file=sys.stderr)


if __name__ == "__main__":
    if sys.argv[1] == "wait":
        wait(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "count":
        count(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
