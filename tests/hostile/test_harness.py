"""Every attack class of the hostile-input harness: every case tried is handled."""

from __future__ import annotations

import pytest

from tests.hostile.harness import ATTACKS, run_all


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.__name__ for a in ATTACKS])
def test_every_case_of_the_class_is_handled(
    attack: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tests.hostile.harness.ATTACKS", (attack,))
    (tally,) = run_all(scale=1)
    assert tally.tried > 0
    assert tally.failures == [] and tally.handled == tally.tried, tally
