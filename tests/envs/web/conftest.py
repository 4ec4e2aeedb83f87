"""Shared fixtures for the web-environment tests: one browser per session, reused by the env.

When Chromium (or the ``miniwob`` package) is missing the tests fail under CI (``CI=true``)
and are skipped elsewhere with the install hint.
"""

from __future__ import annotations

import pytest

from adaroll.envs.web.browser import BrowserProcess, BrowserUnavailableError, find_chromium
from tests.components import require


def _require_chromium() -> None:
    try:
        find_chromium()
        import miniwob  # noqa: F401
    except (BrowserUnavailableError, ImportError) as exc:
        require(False, f"web tests need Chromium and the miniwob package: {exc}")


@pytest.fixture(scope="session")
def browser():
    _require_chromium()
    proc = BrowserProcess.launch()
    yield proc
    proc.kill()


@pytest.fixture(scope="session")
def web_env(browser):
    from adaroll.envs.web import WebEnv

    env = WebEnv(browser=browser)
    yield env
    env.close()
