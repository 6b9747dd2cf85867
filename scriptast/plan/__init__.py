"""What a scheduler backend lowers, below both the builders that make it and the backends that
read it: a job's launch plan (its name, folders, image, mounts, Slurm parameters, install and
models root) and the neutral steps a category says it runs."""
