"""A run directory's identity: settings the configuration never reads do not change it."""

from __future__ import annotations

import json
from pathlib import Path

from adaroll.config import dump_config, load_config
from adaroll.training import run_identity
from adaroll.training.run_identity import (
    experiment_changes,
    machine,
    record_machine,
    settings_changes,
)


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


def test_each_start_records_its_machine_and_another_cpu_is_a_note_not_an_error(
    tmp_path: Path, monkeypatch
) -> None:
    path = tmp_path / "machines.jsonl"
    here = machine()
    assert here["cpu"] and here["python"] and here["torch"]
    assert record_machine(path) is None  # the first start compares with nothing
    assert record_machine(path) is None  # a resume on the same machine
    monkeypatch.setattr(run_identity, "cpu_model", lambda: "Another CPU")
    monkeypatch.setattr(run_identity.os, "cpu_count", lambda: 999)
    note = record_machine(path)
    assert note is not None and f"cpu: {here['cpu']} -> Another CPU" in note
    assert "cores" not in note  # the core count changes nothing a run computes
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["cpu"] for line in lines] == [here["cpu"], here["cpu"], "Another CPU"]
    assert all(line["ts"] > 0 for line in lines)


def test_an_unreadable_machine_record_is_no_comparison(tmp_path: Path) -> None:
    path = tmp_path / "machines.jsonl"
    path.write_text("not json\n")
    assert record_machine(path) is None
    assert json.loads(path.read_text().splitlines()[1])["cpu"] == machine()["cpu"]
