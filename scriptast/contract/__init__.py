"""The contract between emit and run: job_spec.json, the slurm_env it embeds, run.json, the two
axes a job runs on, and the seam a transport fills. Imports only errors and common."""
