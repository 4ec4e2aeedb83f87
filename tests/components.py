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


def require_chromium() -> None:
    """Chromium, its headless shell (what the web env runs) and the ``miniwob`` package."""
    from adaroll.envs.web.browser import BrowserUnavailableError, find_chromium

    try:
        find_chromium()
        find_chromium(headless_shell=True)
        import miniwob  # noqa: F401
    except (BrowserUnavailableError, ImportError) as exc:
        require(False, f"web tests need Chromium and the miniwob package: {exc}")


def require_criu_stack() -> None:
    """What CRIU snapshots of live browsers need: root, Chromium + miniwob, a working CRIU."""
    from adaroll.snapshots.criu.tool import CriuUnavailableError, check_criu

    require(os.geteuid() == 0, "CRIU snapshots need root")
    try:
        from adaroll.envs.web.browser import find_chromium

        find_chromium(headless_shell=True)
        import miniwob  # noqa: F401
    except Exception as exc:  # noqa: BLE001
        require(False, f"needs Chromium and miniwob ({exc}); run scripts/install_system.sh")
    try:
        check_criu()
    except CriuUnavailableError as exc:
        require(False, f"needs CRIU: {exc}")


def require_browsergym() -> None:
    """Chromium, miniwob and BrowserGym (``browsergym-core`` + ``browsergym-miniwob``, the
    ``browsergym`` extra), which the browsergym env drives."""
    require_chromium()
    try:
        import browsergym.core  # noqa: F401
        import browsergym.miniwob  # noqa: F401
    except ImportError as exc:
        require(
            False,
            f"browsergym tests need the browsergym extra (pip install -e '.[browsergym]'): {exc}",
        )
