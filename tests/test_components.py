"""The CI switch of tests/components.py: only a true-like ``CI`` makes a missing component fail."""

from __future__ import annotations

import pytest

from tests.components import is_ci, require


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "True", "yes", "Yes", "on", "ON", " true "])
def test_true_like_values_are_ci(value: str) -> None:
    assert is_ci({"CI": value})


@pytest.mark.parametrize("value", ["", "0", "false", "False", "no", "off", "2", "ci", "truthy"])
def test_other_values_are_not_ci(value: str) -> None:
    assert not is_ci({"CI": value})


def test_an_unset_variable_is_not_ci() -> None:
    assert not is_ci({})


def test_require_fails_under_ci_and_skips_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    require(True, "never raised")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="needs chromium"):
        require(False, "needs chromium")
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match="needs chromium"):
        require(False, "needs chromium")
