"""Every curated task's scripted expert solves it through the env, by the task's own reward, on
instances of no split (seeds from ``EXPERT_CHECK_SEED_BASE``: nothing was developed, trained or
selected on them). CI runs one such seed per template; the sweep over more seeds is
``python -m adaroll.envs.web.experts --first-seed 400000 --seeds 20``."""

from __future__ import annotations

import pytest

from adaroll.actions import Action
from adaroll.envs.base import TaskSpec, run_expert
from adaroll.envs.web import MiniWoBSuite
from adaroll.envs.web.experts import EXPERTS, verify
from adaroll.envs.web.miniwob import all_tasks, curated_tasks
from adaroll.envs.web.suite import EXPERT_CHECK_SEED_BASE, POLICY_KEYS, POLICY_KINDS

pytestmark = pytest.mark.web

LONG = ("book-flight", "choose-date", "social-media-some", "email-inbox-forward-nl",
        "use-autocomplete", "search-engine", "login-user-popup")  # fmt: skip


def test_every_curated_task_has_an_expert():
    assert set(curated_tasks()) <= set(EXPERTS)


def test_curated_set_holds_sixty_templates_with_the_long_ones_and_some_held_out():
    curated = curated_tasks()
    assert len(curated) >= 60 and set(LONG) <= set(curated)
    held = curated_tasks(heldout_template=True)
    assert 5 <= len(held) <= len(curated) // 4
    tasks = all_tasks()
    assert sum(tasks[n].expert_steps >= 5 for n in curated) >= 10
    for name in curated:  # room for a policy to err: at least the expert's mean solution x 1.4
        assert tasks[name].max_steps >= max(5, 1.4 * tasks[name].expert_steps), name


@pytest.mark.parametrize("name", curated_tasks())
def test_expert_succeeds_on_a_fresh_seed(web_env, name):
    task = TaskSpec("web", name, EXPERT_CHECK_SEED_BASE)
    actions, success = run_expert(web_env, MiniWoBSuite(), task)
    assert success, f"{task.id}: expert failed after {[a.to_text() for a in actions]}"
    assert all(isinstance(a, Action) for a in actions)
    assert len(actions) <= all_tasks()[name].max_steps
    # the web policy's action heads (the suite's hints) can express every expert action
    assert {a.kind.value for a in actions} <= set(POLICY_KINDS), [a.to_text() for a in actions]
    assert {a.key for a in actions if a.key is not None} <= set(POLICY_KEYS)


def test_verify_reports_rates(web_env):
    results = verify(["click-button", "enter-text"], range(2), env=web_env)
    assert results["click-button"]["rate"] == 1.0 and results["enter-text"]["episodes"] == 2
    assert results["enter-text"]["mean_steps"] == 3.0 and results["enter-text"]["longest"] == 3
