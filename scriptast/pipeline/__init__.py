"""The emit pipeline: resolve -> build -> emit -> verify -> write. Imports builders, emitters,
readers, the model, the cluster facts and the work_dir writes; never the executor or the CLI.
`generate`, `write_outputs` and `Output` load from here on first use, as they did before the
pipeline was a package."""

from __future__ import annotations

_NAMES = {"generate": "emit_job", "write_outputs": "emit_job", "Output": "file_set"}


def __getattr__(name: str) -> object:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'scriptast.pipeline' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"scriptast.pipeline.{module}"), name)
