"""Builders: the request and slurm_env types, the resolution rules, and one builder per category."""
