"""Forked worker processes for a sweep's parallel parts, each killed by the kernel when its
parent dies (even by SIGKILL), so no worker outlives the command that started it."""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

SERIAL_BELOW = 32
"""Fewer items than this are done one after another: a pool's start costs more."""


def worker_pool(workers: int) -> ProcessPoolExecutor:
    """Forked workers that die with this process."""
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_die_with_parent,
        initargs=(os.getpid(),),
    )


def _die_with_parent(parent: int) -> None:
    """Pool initializer: the kernel kills this worker when its parent dies (even by SIGKILL)."""
    import ctypes
    import signal

    with_prctl = ctypes.CDLL(None, use_errno=True)
    pr_set_pdeathsig = 1
    with_prctl.prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the call took effect
        os._exit(1)
