#!/bin/sh
#SCHED --job-name=moldable
#SCHED --nodes=1-4
#SCHED --time=1:00
# A moldable job: the scheduler picks its size between 1 and 4 nodes when it
# starts (then the size stays).
echo "started on $SCHED_JOB_NUM_NODES nodes: $SCHED_JOB_NODELIST"
sleep 3
