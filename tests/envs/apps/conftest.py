"""Shared fixtures for the apps-env tests: one env (browser + six app servers) per module.

The apps run inside an isolated browser's namespaces, which needs root; without root or
Chromium the browser tests fail under CI and are skipped elsewhere with the reason."""

from __future__ import annotations

import os

import pytest

from tests.components import require, require_chromium


def require_apps_stack() -> None:
    require_chromium()
    require(
        os.geteuid() == 0, "the apps env runs its servers in the browser's namespaces: needs root"
    )


@pytest.fixture(scope="module")
def apps_env():
    require_apps_stack()
    from adaroll.envs.apps import AppsEnv

    env = AppsEnv()
    yield env
    env.close()
