"""A run directory's identity: settings the configuration never reads do not change it."""

from __future__ import annotations

from adaroll.config import dump_config, load_config
from adaroll.training.run_identity import experiment_changes, settings_changes


def test_bandit_settings_are_no_change_while_the_thresholds_route() -> None:
    saved = dump_config(load_config(None, ["rl.scheduler.bandit_exploration=0.25"]))
    assert experiment_changes(saved, load_config(None)) == []
    bandit = ["rl.scheduler.routing=bandit"]
    saved = dump_config(load_config(None, [*bandit, "rl.scheduler.bandit_exploration=0.25"]))
    assert experiment_changes(saved, load_config(None, bandit)) == [
        "rl.scheduler.bandit_exploration: 0.25 -> 0.05"
    ]
    assert experiment_changes(saved, load_config(None)) != []  # the router itself changed


def test_env_settings_changes_name_each_setting_and_the_flags_a_command_line_gained() -> None:
    then = {
        "screenshot": False,
        "browser": {"window_size": [800, 600]},
        "command": ["c", "--a", "--b"],
    }
    assert settings_changes(then, then) == []
    now = {
        "screenshot": True,
        "browser": {"window_size": [800, 600]},
        "command": ["c", "--b", "--x"],
        "reuse_page": True,
    }
    assert settings_changes(then, now) == [
        "command: ---a +--x",
        "reuse_page: None -> True",
        "screenshot: False -> True",
    ]
    assert settings_changes({"command": ["a", "b"]}, {"command": ["b", "a"]}) == [
        "command: reordered"
    ]
