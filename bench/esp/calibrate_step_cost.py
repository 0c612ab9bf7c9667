#!/usr/bin/env python3
"""Calibrates the simulator's step adaptation cost (docs/app-model.md) on the
live figures of bench/adapt/results.md: for each direction, a least-squares
line through the time of each one-node step (the event times' column)
against the size of the new process set,

    step time = latency + per_new_node * n_new

(the live application sends a token from rank 0 to every process of the new
set at each step: the part that grows with the size). Prints the fit, its R²
and the values in seconds as the simulator's defaults take them.

    bench/esp/calibrate_step_cost.py [bench/adapt/results.md]
"""
import pathlib
import re
import sys


def rows(path):
    for line in pathlib.Path(path).read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not re.fullmatch(r"\d+", cells[0]):
            continue
        before, after = (int(x) for x in cells[1].split("→"))
        yield cells[2], before, after, float(cells[3])


def fit(points):
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    slope = sxy / sxx
    intercept = my - slope * mx
    ss_tot = sum((y - my) ** 2 for _, y in points)
    ss_res = sum((y - intercept - slope * x) ** 2 for x, y in points)
    return intercept, slope, 1 - ss_res / ss_tot, my


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "bench/adapt/results.md"
    data = list(rows(path))
    if not data:
        sys.exit(f"no step rows in {path}")
    print(f"# fit of {path}: step ms = latency + per_new_node * n_new")
    print("| op | steps | latency (ms) | per new node (ms) | R² | mean step (ms) |")
    print("|---|---:|---:|---:|---:|---:|")
    for op in ("expand", "shrink"):
        points = [(after, ms) for kind, _, after, ms in data if kind == op]
        a, b, r2, mean = fit(points)
        print(f"| {op} | {len(points)} | {a:.2f} | {b:.3f} | {r2:.2f} | {mean:.1f} |")


if __name__ == "__main__":
    main()
