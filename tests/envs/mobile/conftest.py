"""Shared helpers for the mobile env tests."""

from __future__ import annotations

import pytest

from adaroll.envs.base import TaskSpec
from adaroll.envs.mobile import MobileEnv, MobileTaskSuite


@pytest.fixture
def env() -> MobileEnv:
    return MobileEnv()


@pytest.fixture(scope="session")
def suite() -> MobileTaskSuite:
    return MobileTaskSuite()


def spec(template: str, seed: int = 0) -> TaskSpec:
    return TaskSpec("mobile", template, seed)
