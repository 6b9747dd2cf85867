"""The one exception family of scriptast: every user-facing failure is a ScriptastError."""

from __future__ import annotations


class ScriptastError(Exception):
    """A failure the user can act on; the CLI prints `error: <message>` and exits 1."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def __str__(self) -> str:
        return self.message


class ModelError(ScriptastError, ValueError):
    """A script model value that breaks an invariant (raised where the value is made).

    It is also a ValueError so that msgspec reports it as a ValidationError when decoding.
    """


class QuoteError(ScriptastError):
    """A value that a quoting context cannot represent."""

    def __init__(self, value: str, context: str, reason: str, offset: int | None = None) -> None:
        where = f" at offset {offset}" if offset is not None else ""
        super().__init__(f"cannot write {value!r} as {context}: {reason}{where}")
        self.value = value
        self.context = context
        self.reason = reason
        self.offset = offset


class UnsupportedError(ScriptastError):
    """A known model node that the chosen target cannot express."""


class VerifyError(ScriptastError):
    """Emitted text that does not read back as the model it came from (a bug, never output)."""


class InputError(ScriptastError):
    """A bad request, slurm_env or input file: the message names the field and the fix."""


class ResolveError(ScriptastError):
    """A request whose values cannot be resolved into a job (the seed's "stop and report")."""


class RunError(ScriptastError):
    """A job that `scriptast run` cannot submit or follow (no or foreign job_spec.json, a torn
    set, sbatch refusing it, no Slurm): the CLI prints one line and exits 2."""


class StoreError(ScriptastError):
    """A results store that cannot be used: unreachable, locked, full, another program's or a
    newer scriptast's. A run's verdict never depends on it: run.json keeps the record."""
