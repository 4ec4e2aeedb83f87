"""Every apps template's scripted expert solves it through the env - judged on the databases -
on an instance of no split (seeds from ``EXPERT_CHECK_SEED_BASE``), inside the small policy's
action space and grounded by the observation (the web's representability checks, issue 29:
:func:`adaroll.policies.coverage.expert_coverage` with
:func:`adaroll.envs.web.grounding.grounding_gap`). CI runs one unseen seed per template; more:
``adaroll envs list apps --lengths`` (three other seeds) or this test with ``APPS_EXPERT_SEEDS``.
"""

from __future__ import annotations

import os

import pytest

from adaroll.envs.apps.suite import AppsSuite
from adaroll.envs.apps.tasks.catalog import all_templates
from adaroll.envs.apps.tasks.lengths import EXPERT_STEPS
from adaroll.envs.base import TaskSpec
from adaroll.envs.web.grounding import grounding_gap
from adaroll.envs.web.suite import EXPERT_CHECK_SEED_BASE
from adaroll.policies.coverage import expert_coverage
from adaroll.policies.small import SmallPolicy

pytestmark = pytest.mark.web

SEEDS = int(os.environ.get("APPS_EXPERT_SEEDS", "1"))
TEMPLATES = sorted(all_templates())


def test_the_suite_holds_forty_templates_over_six_apps_half_of_them_long():
    templates = all_templates()
    assert len(templates) >= 40
    apps = {app for t in templates.values() for app in t.apps}
    assert apps == {"mail", "shop", "calendar", "tracker", "notes", "admin"}
    assert sum(len(t.apps) > 1 for t in templates.values()) >= 5  # crossing apps
    assert set(EXPERT_STEPS) == set(templates)
    assert sum(steps >= 8 for steps in EXPERT_STEPS.values()) >= 20
    for name, tpl in templates.items():  # room for a policy to err: 1.4 x the expert's mean
        assert tpl.max_steps >= 1.4 * EXPERT_STEPS[name], name


@pytest.fixture(scope="module")
def apps_policy():
    return SmallPolicy(**AppsSuite().policy_hints())


@pytest.mark.parametrize("name", TEMPLATES)
def test_expert_succeeds_on_unseen_seeds_inside_the_policy_space(apps_env, apps_policy, name):
    suite = AppsSuite()
    hints = suite.policy_hints()
    for i in range(SEEDS):
        task = TaskSpec("apps", name, EXPERT_CHECK_SEED_BASE + i)
        run = expert_coverage(apps_env, suite, task, apps_policy, grounding=grounding_gap)
        actions = run.actions
        assert run.success, (
            f"{task.id}: expert failed ({apps_env.last_verdict}) after {[a.to_text() for a in actions]}"
        )
        assert len(actions) <= all_templates()[name].max_steps
        assert {a.kind.value for a in actions} <= set(hints["kinds"])
        assert {a.key for a in actions if a.key is not None} <= set(hints["keys"])
        assert run.ok, run.summary()
