"""A component a test is meant to exercise (Chromium, CRIU, root isolation) that is missing is
a failure under CI (``CI`` set) and a skip on a developer's machine without it."""

from __future__ import annotations

import os

import pytest


def require(ok: bool, why: str) -> None:
    if ok:
        return
    if os.environ.get("CI"):
        pytest.fail(why)
    pytest.skip(why)
