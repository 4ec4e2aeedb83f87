"""A component a test is meant to exercise (Chromium, CRIU, root isolation) that is missing is
a failure under CI and a skip on a developer's machine without it.

CI is on when the ``CI`` variable holds a true-like value (``1``, ``true``, ``yes``, ``on``, any
case): ``.ci/run`` sets ``CI=true``, and ``CI=false``/``CI=0``/an empty value mean "not CI"."""

from __future__ import annotations

import os
from collections.abc import Mapping

import pytest

TRUE_VALUES = frozenset({"1", "true", "yes", "on"})


def is_ci(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether ``environ`` says that the tests run under CI."""
    return environ.get("CI", "").strip().lower() in TRUE_VALUES


def require(ok: bool, why: str) -> None:
    if ok:
        return
    if is_ci():
        pytest.fail(why)
    pytest.skip(why)
