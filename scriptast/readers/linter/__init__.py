"""`scriptast verify`: any bash/Slurm script a person or another tool wrote, checked as sbatch,
srun and pyxis read it (and against a cluster's slurm_env.json)."""
