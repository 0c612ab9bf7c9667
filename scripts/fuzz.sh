#!/usr/bin/env bash
# Builds the fuzz targets with clang, libFuzzer, ASan and UBSan (in
# <build dir>-fuzz, or $SCHED_FUZZ_BUILD_DIR) and runs each for a while from its
# corpus. A crash, a sanitizer report, a leak or a timeout fails the run and
# leaves the input that caused it in <build>/fuzz-findings/<target>/.
#   scripts/fuzz.sh                  # 10 s per target (the test suite's run)
#   scripts/fuzz.sh --seconds 600    # the long run
#   scripts/fuzz.sh --seconds 60 swf # one target
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${SCHED_FUZZ_BUILD_DIR:-${SCHED_BUILD_DIR:-$root/build}-fuzz}"
seconds=10
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [ ${#targets[@]} -eq 0 ]; then targets=(message job_script swf native pmi negotiation); fi

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSCHED_FUZZ=ON -DSCHED_BUILD_TESTS=OFF -DSCHED_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target sched_fuzz_targets

status=0
for t in "${targets[@]}"; do
  seeds="$root/fuzz/corpus/$t"
  # Two targets' seeds are written by the build from the protocols' encoders.
  case "$t" in message|negotiation) seeds="$build/fuzz/corpus/$t" ;; esac
  # libFuzzer adds what it finds to its first corpus folder: a scratch copy
  # keeps the checked-in seeds as they are.
  work="$build/fuzz-corpus/$t"
  findings="$build/fuzz-findings/$t"
  mkdir -p "$work" "$findings"
  cp -n "$seeds"/* "$work"/
  echo "== fuzzing $t for ${seconds} s"
  if ! "$build/fuzz/sched_fuzz_$t" "$work" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$findings/" 2>"$build/fuzz-$t.log"; then
    echo "fuzz.sh: $t FAILED; input and log: $findings/, $build/fuzz-$t.log" >&2
    tail -n 40 "$build/fuzz-$t.log" >&2
    status=1
  fi
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+.*DONE)" \
    "$build/fuzz-$t.log" | sed "s/^/  /" || true
done
exit $status
