#!/usr/bin/env bash
# `sched queue` on a queue of 100,000 pending jobs (issue 13): runs the
# integration test that submits them (pipelined through the client
# protocol) to a local cluster on loopback and times the `sched queue`
# process, which follows the jobs.query cursor page by page. Prints the
# seconds it took (a figure: the test asserts the paging, not the time);
# the target is under 1 s.
#
#   bench/queue/run.sh        (after building sched_integration_tests)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SCHED_BUILD_DIR:-$root/build}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$build/tests/sched_integration_tests" \
  --gtest_filter='Records.QueueListsAHundredThousandPendingJobsInPages' \
  --gtest_output="json:$out/result.json" >"$out/log" || { cat "$out/log"; exit 1; }
seconds="$(sed -n 's/.*"queue_100k_s": "\([0-9.]*\)".*/\1/p' "$out/result.json")"
pass="$(sed -n 's/.*"mean_pass_s": "\([0-9.]*\)".*/\1/p' "$out/result.json")"
echo "sched queue, 100000 pending jobs, $(nproc) cores: ${seconds} s (mean scheduling pass ${pass} s)"
