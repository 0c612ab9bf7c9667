#!/usr/bin/env bash
# A 10,000-task job array (issue 18 item 1): runs the integration test that
# submits `--array=0-9999%5 --hold` in one request to a local cluster on
# loopback and prints how long the `sched submit` process took (schedd's
# loop handles the request, creates the 10,000 jobs and journals them in
# one transaction meanwhile: the longest it stalls) and how long `sched
# queue` took to list them as one line. Figures only: the test asserts
# what was submitted and listed, not the time.
#
#   bench/array/run.sh        (after building sched_integration_tests and sched)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SCHED_BUILD_DIR:-$root/build}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$build/tests/sched_integration_tests" \
  --gtest_filter='JobArrays.TenThousandTasksGoInOneRequestListAsOneLineAndOutliveARestart' \
  --gtest_output="json:$out/result.json" >"$out/log" || { cat "$out/log"; exit 1; }
submit="$(sed -n 's/.*"array_10k_submit_s": "\([0-9.]*\)".*/\1/p' "$out/result.json")"
queue="$(sed -n 's/.*"array_10k_queue_s": "\([0-9.]*\)".*/\1/p' "$out/result.json")"
echo "10000-task array, $(nproc) cores: sched submit ${submit} s (one request, one transaction); sched queue ${queue} s"
