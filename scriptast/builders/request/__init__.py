"""The request: its shared fields, each category's part, and the values work_dir's job_spec.json
forwards. The lowest room of the builders: imports nothing of resolution or the categories."""
