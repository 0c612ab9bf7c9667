#!/usr/bin/env python3
"""Runs a command RUNS times and prints "min median peak_rss_kb": the CPU
seconds (user + sys, from wait4, to the microsecond) of the fastest and the
median run, and the peak RSS (KB) of one more run. Its output goes to OUT; a failing
run stops everything.

    cputime.py RUNS OUT -- CMD [ARGS...]
"""
import os
import sys


def run(cmd, out):
    actions = [(os.POSIX_SPAWN_OPEN, 1, out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)]
    pid = os.posix_spawn(cmd[0], cmd, os.environ, file_actions=actions)
    _, status, usage = os.wait4(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed ({os.waitstatus_to_exitcode(status)})")
    return usage.ru_utime + usage.ru_stime, usage


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        sys.exit("usage: cputime.py RUNS OUT -- CMD [ARGS...]")
    runs, out, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[4:]
    times = []
    for _ in range(runs):
        # posix_spawn (vfork and exec): no copy of this interpreter is charged
        # to the command. CPU time from wait4, to the microsecond.
        times.append(run(cmd, out)[0])
    # The peak RSS from one more run under /usr/bin/time, a small parent: a
    # child of this interpreter reports the interpreter's RSS when larger.
    rss_file = out + ".rss"
    run(["/usr/bin/time", "-f", "%M", "-o", rss_file] + cmd, out)
    with open(rss_file) as f:
        peak = int(f.read().split()[-1])
    os.remove(rss_file)
    times.sort()
    print(f"{times[0]:.4f} {times[(len(times) - 1) // 2]:.4f} {peak}")


if __name__ == "__main__":
    main()
