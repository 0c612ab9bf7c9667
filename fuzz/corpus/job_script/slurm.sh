#!/bin/bash
#SBATCH --job-name="my job"
#SBATCH -N 4 --ntasks-per-node=2
#SBATCH --time=1-02:03:04
#SBATCH --export=ALL,OMP_NUM_THREADS=4
# a comment
srun ./app
#SBATCH --late-directive
