"""Fixtures of the experiment tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.experiments.quick_runs import run_all_quick


@pytest.fixture(scope="session")
def quick_experiments(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`adaroll experiment all --quick --seeds 0`, trained once for every test that reads it:
    the quick experiments' outputs, and seed 0 of the quick Table 2."""
    return run_all_quick(tmp_path_factory.mktemp("experiments"))
