"""The pipeline refuses a config it could only fail on later, before any expert or browser runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adaroll.config import ConfigError, load_config
from adaroll.training.pipeline import Pipeline


def _pipeline(tmp_path: Path, *overrides: str) -> Pipeline:
    return Pipeline(
        load_config(None, list(overrides)), tmp_path, progress=False, say=lambda _: None
    )


def test_memory_snapshots_of_an_env_that_cannot_copy_its_state_are_a_config_error(
    tmp_path: Path,
) -> None:
    with pytest.raises(
        ConfigError, match=r"env.snapshot_backend: the web env cannot copy its state"
    ):
        _pipeline(tmp_path, "env.name=web").check_names()
    assert not any(tmp_path.iterdir())  # nothing was started or written


def test_memory_snapshots_of_the_phone_and_replay_of_the_web_pass_the_check(tmp_path: Path) -> None:
    _pipeline(tmp_path).check_names()
    _pipeline(tmp_path, "env.name=web", "env.snapshot_backend=replay").check_names()


def test_episodes_per_env_unset_takes_the_env_kinds_choice(tmp_path: Path) -> None:
    assert _pipeline(tmp_path).episodes_per_env() == 1  # the phone: a reset is cheap anyway
    assert (
        _pipeline(tmp_path, "env.name=web").episodes_per_env() == 8
    )  # a page reused, not reloaded
    assert _pipeline(tmp_path, "env.name=web", "rollout.episodes_per_env=2").episodes_per_env() == 2
    with pytest.raises(ConfigError, match="episodes_per_env"):
        _pipeline(tmp_path, "rollout.episodes_per_env=0")


def test_env_settings_are_recorded_when_a_run_starts_and_only_then(tmp_path: Path) -> None:
    fresh = _pipeline(tmp_path / "fresh")
    (tmp_path / "fresh").mkdir()
    fresh._record_env_settings(started=False)
    assert json.loads((tmp_path / "fresh" / "env.json").read_text())["device"]["name"] == "noisy"
    older = _pipeline(tmp_path / "older")  # a run from before settings were recorded
    (tmp_path / "older").mkdir()
    older._record_env_settings(started=True)
    assert not (tmp_path / "older" / "env.json").exists()  # unknown stays unknown


def test_an_unreadable_env_record_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "env.json").write_text('{"device": ')  # torn, as by a full disk
    with pytest.raises(ConfigError, match=r"env.json is not readable .*--fresh"):
        _pipeline(tmp_path)._record_env_settings(started=True)
    assert (tmp_path / "env.json").read_text() == '{"device": '  # left for the user to restore
