"""The pipeline refuses a config it could only fail on later, before any expert or browser runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaroll.config import ConfigError, load_config
from adaroll.training.pipeline import Pipeline


def _pipeline(tmp_path: Path, *overrides: str) -> Pipeline:
    return Pipeline(load_config(None, list(overrides)), tmp_path, progress=False, say=lambda _: None)


def test_memory_snapshots_of_an_env_that_cannot_copy_its_state_are_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"env.snapshot_backend: the web env cannot copy its state"):
        _pipeline(tmp_path, "env.name=web").check_names()
    assert not any(tmp_path.iterdir())  # nothing was started or written


def test_memory_snapshots_of_the_phone_and_replay_of_the_web_pass_the_check(tmp_path: Path) -> None:
    _pipeline(tmp_path).check_names()
    _pipeline(tmp_path, "env.name=web", "env.snapshot_backend=replay").check_names()


def test_episodes_per_env_unset_takes_the_env_kinds_choice(tmp_path: Path) -> None:
    assert _pipeline(tmp_path).episodes_per_env() == 1  # the phone: a reset is cheap anyway
    assert _pipeline(tmp_path, "env.name=web").episodes_per_env() == 8  # a page reused, not reloaded
    assert _pipeline(tmp_path, "env.name=web", "rollout.episodes_per_env=2").episodes_per_env() == 2
    with pytest.raises(ConfigError, match="episodes_per_env"):
        _pipeline(tmp_path, "rollout.episodes_per_env=0")
