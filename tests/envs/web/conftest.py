"""Shared fixtures for the web-environment tests: one browser per session, reused by the env.

When Chromium (or the ``miniwob`` package) is missing the tests fail under CI (``CI=true``)
and are skipped elsewhere with the install hint.
"""

from __future__ import annotations

import pytest

from adaroll.envs.web.browser import BrowserProcess
from tests.components import require_chromium


@pytest.fixture(scope="session")
def browser():
    require_chromium()
    proc = BrowserProcess.launch()
    yield proc
    proc.kill()


@pytest.fixture(scope="session")
def web_env(browser):
    from adaroll.envs.web import WebEnv

    env = WebEnv(browser=browser)
    yield env
    env.close()
