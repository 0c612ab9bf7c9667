#!/bin/sh
#SCHED --job-name=failing
#SCHED --time=1:00
# Ends with exit status 3: the job is FAILED, and `sched acct` says 3:0.
echo "about to fail" >&2
exit 3
