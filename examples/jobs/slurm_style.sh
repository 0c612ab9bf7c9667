#!/bin/bash
#SBATCH --job-name=from-slurm
#SBATCH -N 2
#SBATCH --time=00:01:00
#SBATCH --partition=batch
# A Slurm script as it is: #SBATCH directives are understood (options that
# mean nothing here, like --partition, are ignored with a warning) and the
# SLURM_ variables are set.
echo "SLURM_JOB_ID=$SLURM_JOB_ID SLURM_NNODES=$SLURM_NNODES"
srun_like() { sched run "$@"; }
srun_like hostname
