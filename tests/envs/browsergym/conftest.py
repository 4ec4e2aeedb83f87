"""Shared fixtures for the browsergym-environment tests: one env for the session (BrowserGym
launches its browsers on every reset, the Playwright driver is shared by the process).

Under CI a missing Chromium, miniwob or BrowserGym package fails these tests
(tests/components.py)."""

from __future__ import annotations

import pytest

from tests.components import require_browsergym

FAST = {"slow_mo": 0, "pre_observation_delay": 0.0}
"""Tests skip MiniWoB's 100 ms per Playwright call and BrowserGym's settle delay."""


@pytest.fixture(scope="session")
def bg_env():
    require_browsergym()
    from adaroll.envs.browsergym import BrowserGymEnv

    env = BrowserGymEnv(**FAST)
    yield env
    env.close()
