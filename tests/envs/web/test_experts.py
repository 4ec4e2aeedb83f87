"""Every curated task's scripted expert solves it through the env, by the task's own reward."""

from __future__ import annotations

import pytest

from adaroll.actions import Action
from adaroll.envs.base import TaskSpec, run_expert
from adaroll.envs.web import MiniWoBSuite
from adaroll.envs.web.experts import EXPERTS, verify
from adaroll.envs.web.miniwob import all_tasks, curated_tasks

pytestmark = pytest.mark.web

SEEDS = (0, 1, 2)
SLOW = {"book-flight": (0, 1)}  # ~15 steps each


def test_every_curated_task_has_an_expert():
    assert set(curated_tasks()) <= set(EXPERTS)


@pytest.mark.parametrize("name", curated_tasks())
def test_expert_succeeds(web_env, name):
    suite = MiniWoBSuite()
    for seed in SLOW.get(name, SEEDS):
        actions, success = run_expert(web_env, suite, TaskSpec("web", name, seed))
        assert success, f"{name}#{seed}: expert failed after {[a.to_text() for a in actions]}"
        assert all(isinstance(a, Action) for a in actions)
        assert len(actions) <= all_tasks()[name].max_steps


def test_verify_reports_rates(web_env):
    results = verify(["click-button", "enter-text"], range(2), env=web_env)
    assert results["click-button"]["rate"] == 1.0 and results["enter-text"]["episodes"] == 2
    assert results["enter-text"]["mean_steps"] == 3.0
