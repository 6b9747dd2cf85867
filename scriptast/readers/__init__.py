"""Readers: everything that reads shell text back (bash words, #SBATCH, srun argv, verify, lint)."""
