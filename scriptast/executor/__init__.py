"""The executor: `scriptast run`, `watch`, `cancel` and `alloc` submit, follow and judge what emit
wrote, from job_spec.json alone: one launch kind a way a job runs (launch/), over the job's
scheduler backend and transport. Never imports the emit pipeline or the CLI."""
