#!/bin/sh
#SCHED --job-name=hello
#SCHED --nodes=1
#SCHED --time=1:00
# A rigid one-node job: says where it runs.
echo "hello from job $SCHED_JOB_ID on $SCHED_JOB_NODELIST"
sleep 2
