"""The Slurm backend: batch scripts whose steps srun launches in pyxis containers, and Slurm's
commands (sbatch, squeue, sacct, scontrol, scancel, salloc) run through a transport."""
