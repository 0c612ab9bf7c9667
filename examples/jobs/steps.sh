#!/bin/sh
#SCHED --job-name=steps
#SCHED --nodes=3
#SCHED --ntasks-per-node=2
#SCHED --time=2:00
# A multi-node job whose steps run on every node of its allocation, as srun
# runs them under Slurm: one process per task, told its rank.
echo "job $SCHED_JOB_ID has nodes $SCHED_JOB_NODELIST"
sched run sh -c 'echo "task $SCHED_PROCID of $SCHED_NTASKS on node $SCHED_NODEID"' | sort
sched run -N 1 sh -c 'echo "one task alone: $SCHED_PROCID"'
sleep 2
