"""Whether a process of this machine still exists (one of another user's counts as existing)."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Process `pid` exists (signal 0 reaches it, or it belongs to someone else)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
