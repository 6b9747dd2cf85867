"""The cluster facts: slurm_env.json read and checked (its types are the contract's), and the
probe that writes it. Imports the contract, the model (option names) and scriptast.common."""
