"""A run directory's identity: settings the configuration never reads do not change it."""

from __future__ import annotations

from adaroll.config import dump_config, load_config
from adaroll.training.pipeline import experiment_changes


def test_bandit_settings_are_no_change_while_the_thresholds_route() -> None:
    saved = dump_config(load_config(None, ["rl.scheduler.bandit_exploration=0.25"]))
    assert experiment_changes(saved, load_config(None)) == []
    bandit = ["rl.scheduler.routing=bandit"]
    saved = dump_config(load_config(None, [*bandit, "rl.scheduler.bandit_exploration=0.25"]))
    assert experiment_changes(saved, load_config(None, bandit)) == [
        "rl.scheduler.bandit_exploration: 0.25 -> 0.05"
    ]
    assert experiment_changes(saved, load_config(None)) != []  # the router itself changed
