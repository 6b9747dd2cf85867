"""The executor: `scriptast run`, `watch`, `cancel` and `alloc` submit, follow and judge what emit
wrote, from job_spec.json alone. Imports builders, readers, the model, the cluster facts and
the work_dir lock; never the emit pipeline or the CLI."""
