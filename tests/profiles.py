"""Hypothesis profiles: "default" is derandomized (the same examples on every machine, so a red
run is reproduced by running it again) and keeps no example database; "quick" is a smaller
derandomized run; "slow" is the randomized, ten times larger run the README documents
(SCRIPTAST_HYPOTHESIS_PROFILE=slow). Tests that set their own example count use `scaled`."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("SCRIPTAST_HYPOTHESIS_PROFILE", "default")
_COMMON: dict[str, Any] = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
_FIXED: dict[str, Any] = {"derandomize": True, "database": None}

settings.register_profile("default", max_examples=500, print_blob=True, **_COMMON, **_FIXED)
settings.register_profile("quick", max_examples=60, **_COMMON, **_FIXED)
settings.register_profile("slow", max_examples=5000, print_blob=True, **_COMMON)
settings.load_profile(PROFILE)


def scaled(examples: int) -> int:
    """A test's own example count, ten times larger in the slow profile."""
    return examples * 10 if PROFILE == "slow" else examples
