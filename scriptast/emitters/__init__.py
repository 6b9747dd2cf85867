"""Emitters: the model as text (bash, job_spec.json, docker command per shell, summary)."""
