"""A function named by module and name and imported on its first call, typed by the signature
it is given: a category's rules and a backend's run-side code load only when they are used."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class LazyFunction(Generic[P, R]):
    """`module.name`, imported on the first call (or `resolved()`). Typed where it is made
    (`LazyFunction[[A, B], C](module, name)`), so mypy holds it to the field it fills; the
    named function's own signature is checked by the tests of the registry that holds it."""

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name
        self._function: Callable[P, R] | None = None

    def resolved(self) -> Callable[P, R]:
        """The function itself (imported now, if it was not yet)."""
        if self._function is None:
            import importlib

            self._function = getattr(importlib.import_module(self.module), self.name)
        assert self._function is not None
        return self._function

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.resolved()(*args, **kwargs)
