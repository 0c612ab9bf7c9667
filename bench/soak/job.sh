#!/bin/sh
# A soak job (bench/soak/run.sh): records what it really does in $1/<job id>.*
# — its pid while it runs, "start" and "end <code>" lines, and a ".twice"
# file when an earlier run of the same job is still alive as it starts.
rec=$1/$SCHED_JOB_ID
if [ -f "$rec.pid" ]; then
  old=$(cat "$rec.pid")
  # Alive and still a run of this job (not a reused pid).
  if [ -n "$old" ] && [ -r "/proc/$old/environ" ] &&
     tr '\0' '\n' <"/proc/$old/environ" | grep -qx "SCHED_JOB_ID=$SCHED_JOB_ID" &&
     [ "$(cut -d')' -f2 "/proc/$old/stat" 2>/dev/null | cut -c2)" != Z ]; then
    echo "$old $$" >>"$rec.twice"
  fi
fi
echo $$ >"$rec.pid"
echo start >>"$rec.log"
sleep "0.$((SCHED_JOB_ID % 5))"
# One job in ten fails with its own code: acct must say so.
code=0
[ $((SCHED_JOB_ID % 10)) -eq 3 ] && code=3
echo "end $code" >>"$rec.log"
exit $code
