"""The names of the files a work dir holds by contract: what emit writes and run reads and
writes beside it."""

JOB_SPEC = "job_spec.json"
"""The manifest emit writes (contract/job_spec.py's JobSpec)."""
RUN_FILE = "run.json"
"""The record run writes and watch, results import and a later run read (RunRecord)."""
EXIT_FILE = "run.exit"
"""A process job's exit code, written when it ends, so that `watch` from another process
reads it too."""
ARRAYS_MANIFEST = "arrays.json"
"""The manifest `emit --requests FILE --array` writes beside a sweep's array scripts: each
array's script, shape, limit and work dirs, and the files written."""
