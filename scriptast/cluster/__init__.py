"""The cluster facts: slurm_env.json as types, and the probe that writes it. Imports the model
(option names) and scriptast.common."""
