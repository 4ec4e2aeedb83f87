"""The order training walks a split in (``interleave_templates``): every round-robin batch mixes
the templates, on the suites that list a split template by template (the web's) and unchanged
on those that already deal them in turn (the phone's), whose reported runs therefore stand."""

from __future__ import annotations

from collections import Counter

import pytest

from adaroll.config import load_config
from adaroll.envs import get_suite
from adaroll.envs.base import TaskSpec
from adaroll.experiments.profiles import PROFILES
from adaroll.training.scheduler_base import RoundRobin, interleave_templates


def _train_split(profile: str) -> tuple[list[TaskSpec], int]:
    """The profile's train split, in its suite's order, and the tasks an RL iteration takes."""
    cfg = load_config(None, list(PROFILES[profile].overrides))
    suite = get_suite(cfg.env.name, dict(cfg.env.options), **cfg.env.suite_options)
    return suite.split("train"), cfg.rl.scheduler.tasks_per_iteration


def test_templates_are_dealt_in_turn_and_no_task_is_lost() -> None:
    tasks = [TaskSpec("web", t, s) for t, n in (("a", 3), ("b", 1), ("c", 2)) for s in range(n)]
    out = interleave_templates(tasks)
    assert [(t.template, t.seed) for t in out] == [
        ("a", 0), ("b", 0), ("c", 0), ("a", 1), ("c", 1), ("a", 2)
    ]  # fmt: skip
    assert Counter(out) == Counter(tasks) and interleave_templates([]) == []


@pytest.mark.parametrize("profile", ["web", "web-long-tasks"])
def test_each_web_batch_mixes_the_templates(profile: str) -> None:
    split, per_iteration = _train_split(profile)
    templates = {t.template for t in split}
    assert [t.template for t in split[:2]] == [split[0].template] * 2  # the suite's own order
    order = RoundRobin(interleave_templates(split))
    for _ in range(2 * len(split) // per_iteration):
        batch = order.take(per_iteration)
        assert len({t.template for t in batch}) == min(per_iteration, len(templates))


@pytest.mark.parametrize("profile", ["mobile", "mobile-h24"])
def test_the_phones_order_is_unchanged(profile: str) -> None:
    split, _ = _train_split(profile)
    assert interleave_templates(split) == split
