#!/usr/bin/env python3
"""A synthetic SWF trace for bench/sim_speed: N rigid jobs on 256 nodes.

    gen_swf.py N [SEED] > trace.swf

Sizes are powers of two from 1 to 256, run times log-uniform in
[10 s, 20,000 s], estimates 1-3 times the run time, arrivals exponential
with a mean gap that keeps the offered load near 0.85, so the queue stays
the same size however long the trace is (cost per job must stay flat).
The generator is its own (a 64-bit LCG), so a seed gives the same trace on
every Python version.
"""
import math
import sys

NODES = 256
LOAD = 0.85


class Lcg:
    def __init__(self, seed):
        self.state = (seed * 6364136223846793005 + 1442695040888963407) % 2**64

    def uniform(self):
        """A float in (0, 1)."""
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % 2**64
        return ((self.state >> 11) + 0.5) / 2**53


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: gen_swf.py N [SEED]")
    count = int(sys.argv[1])
    rng = Lcg(int(sys.argv[2]) if len(sys.argv) == 3 else 1)
    lo, hi = 10.0, 20000.0
    mean_size = sum(2**k for k in range(9)) / 9
    mean_runtime = (hi - lo) / math.log(hi / lo)
    mean_gap = mean_size * mean_runtime / (NODES * LOAD)
    out = [f"; Version: 2\n; MaxJobs: {count}\n; MaxRecords: {count}\n; MaxNodes: {NODES}\n"]
    submit = 0
    for job in range(1, count + 1):
        submit += int(-mean_gap * math.log(rng.uniform()))
        size = 2 ** min(8, int(rng.uniform() * 9))
        runtime = int(lo * (hi / lo) ** rng.uniform())
        estimate = int(runtime * (1 + 2 * rng.uniform()))
        out.append(f"{job} {submit} -1 {runtime} {size} -1 -1 {size} {estimate} -1 1 -1 -1 -1 0 -1 -1 -1\n")
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
