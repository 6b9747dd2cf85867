"""Shared test set-up: hypothesis profiles and the fixture site."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.site import Site, lay_out
from tests.slurm_cluster import cluster

__all__ = ["cluster", "site"]

# The default profile is derandomized (the same examples on every machine, so a red run is
# reproduced by running it again) and keeps no example database. "slow" is the randomized, larger
# run: SCRIPTAST_HYPOTHESIS_PROFILE=slow python -m pytest -q tests (see README).
settings.register_profile(
    "default",
    max_examples=500,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "quick",
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "slow",
    max_examples=5000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("SCRIPTAST_HYPOTHESIS_PROFILE", "default"))


@pytest.fixture
def site(tmp_path: Path) -> Site:
    """A fresh site under pytest's temporary directory."""
    return lay_out(tmp_path / "site")
