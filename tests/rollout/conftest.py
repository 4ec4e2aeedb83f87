"""Shared by the rollout tests: expert checkpoints of the fake line env."""

from __future__ import annotations

import pytest

from adaroll.checkpoints import CheckpointStore
from adaroll.experts import collect_experts
from tests.fakes import LineEnv, LineSuite


@pytest.fixture(scope="module")
def line_store() -> CheckpointStore:
    """The scripted expert's checkpoints on every train task of :class:`LineSuite`."""
    suite = LineSuite()
    return collect_experts(LineEnv, suite, suite.split("train"), progress=False).store
