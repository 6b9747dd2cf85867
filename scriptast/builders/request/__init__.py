"""The request: its shared fields and each category's part, read from a file and flags, and the
values work_dir's job_spec.json forwards. Imports nothing of resolution or the categories."""
