#!/bin/sh
#SCHED --job-name=amr --nodes=2 --time=5:00
#SCHED --min-power=100 --max-power=220
# The AMR-like program (examples/amr/amr_phases.c), one process per node: its
# share of communication changes from phase to phase, and so does the MTCT
# that `sched show` reports for the job. It never probes for adaptations, so
# the job is rigid. AMR_ARGS replaces ITERATIONS ITERATION_MS PHASES.
set -eu
# The programs: $EXAMPLES_DIR, else examples/ of the build tree whose
# `sched` is on PATH (scripts/quickstart.sh puts <build>/cli there).
bin="${EXAMPLES_DIR:-$(dirname "$(command -v sched)")/../examples}"
# No SCHED_MALL_RENDEZVOUS_DIR: the processes only report to their agents
# and never send each other data.
# shellcheck disable=SC2086  # AMR_ARGS is a list of arguments
sched run -n "$SCHED_JOB_NUM_NODES" "$bin/amr_phases" ${AMR_ARGS:-40 50 4}
