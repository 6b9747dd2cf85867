"""Resolution: the shared rules of SPEC §2 (image, arch, mounts, Slurm parameters, names) and
the resolved job they make, with the trail of where each value came from."""
