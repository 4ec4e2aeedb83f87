"""The apps suite without a browser: split sizes and seeds, held-out templates, policy hints,
bad options, and tasks whose content does not load dropped with the reason logged."""

from __future__ import annotations

import logging

import pytest

from adaroll.config import ConfigError
from adaroll.envs import get_suite
from adaroll.envs.apps import suite as suite_module
from adaroll.envs.apps.suite import AppsSuite, content_problem
from adaroll.envs.apps.tasks.catalog import get_template, instance


def test_pools_of_two_hundred_with_disjoint_seeds():
    suite = get_suite("apps")
    splits = {name: suite.split(name) for name in ("train", "val", "heldout", "pretrain")}
    for name in ("train", "val", "heldout"):
        assert len(splits[name]) >= 200, name
    seeds = {name: {t.seed for t in tasks} for name, tasks in splits.items()}
    assert all(seeds[a].isdisjoint(seeds[b]) for a in seeds for b in seeds if a < b)
    held = suite.split("heldout-templates")
    assert held and {t.template for t in held}.isdisjoint({t.template for t in splits["train"]})
    assert all(get_template(t.template).heldout for t in held)


def test_instances_are_deterministic_and_differ_by_seed():
    a, b = instance("shop.buy_clothing", 3), instance("shop.buy_clothing", 3)
    assert a.instruction == b.instruction and a.tables == b.tables
    assert {instance("shop.buy_clothing", s).instruction for s in range(6)} != {a.instruction}


def test_options_are_checked_and_templates_restrict_the_splits():
    with pytest.raises(ConfigError, match="unknown apps task templates: mail.nope"):
        AppsSuite(templates=["mail.nope"])
    with pytest.raises(ConfigError, match="train_seeds"):
        AppsSuite(train_seeds=-1)
    only = AppsSuite(templates=["mail.archive", "notes.pin"], train_seeds=2)
    assert {t.template for t in only.split("train")} == {"mail.archive", "notes.pin"}
    assert AppsSuite().policy_hints()["keys"] == ("enter", "tab", "backspace", "escape", "ctrl+a")


def test_a_task_whose_content_does_not_load_is_dropped_with_the_reason(monkeypatch, caplog):
    real = suite_module.content_problem

    def broken(template, seed):
        return (
            "mail has no table 'nope'"
            if (template, seed) == ("mail.archive", 1)
            else real(template, seed)
        )

    monkeypatch.setattr(suite_module, "content_problem", broken)
    with caplog.at_level(logging.WARNING, logger="adaroll"):
        tasks = AppsSuite(templates=["mail.archive"], train_seeds=3).split("train")
    assert [t.seed for t in tasks] == [0, 2]
    assert "apps task mail.archive#1 dropped from train: mail has no table 'nope'" in caplog.text


def test_content_is_checked_against_the_apps_schemas(monkeypatch):
    assert content_problem("mail.archive", 11) == ""
    inst = instance("notes.pin", 12)
    inst.tables["notes"]["notes"].append({"id": 999, "colour": "red"})
    try:
        assert content_problem.__wrapped__("notes.pin", 12) == "notes.notes has no column(s) colour"
    finally:
        inst.tables["notes"]["notes"].pop()


def test_the_cli_lists_the_apps_templates_and_their_expert_lengths(monkeypatch):
    from typer.testing import CliRunner

    from adaroll.cli import app

    runner = CliRunner()
    result = runner.invoke(app, ["envs", "list", "apps", "--templates"])
    assert result.exit_code == 0, result.output
    assert "apps: 51 task templates" in result.output and "train=225" in result.output
    assert "cross.return_from_mail  steps~13" in result.output
    # --lengths measures the experts in a live env (minutes): here its rows are given
    rows = [
        ("mail.archive", "mail", "mail", 3.0),
        ("cross.role_from_mail", "cross", "mail,admin", 13.67),
    ]
    monkeypatch.setattr(AppsSuite, "expert_lengths", lambda self: rows)
    result = runner.invoke(app, ["envs", "list", "apps", "--lengths"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-2:] == [
        "mail.archive  mail  mail  3.00",
        "cross.role_from_mail  cross  mail,admin  13.67",
    ]
    result = runner.invoke(app, ["envs", "list", "web", "--lengths"])
    assert result.exit_code == 2 and "cannot measure its experts" in result.output
