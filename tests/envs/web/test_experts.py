"""Every curated task's scripted expert solves it through the env, by the task's own reward, on
instances of no split (seeds from ``EXPERT_CHECK_SEED_BASE``: nothing was developed, trained or
selected on them). CI runs one such seed per template (two for the web profiles' templates);
the sweep over more seeds is ``python -m adaroll.envs.web.experts --first-seed 400000 --seeds 20``.

The same episodes check representability (issue 29): per curated template, whether the
observation grounds what the expert acts on and whether the small web policy's action space
holds every expert action (:mod:`adaroll.envs.web.grounding`); a failure names the template and
the step. Every template of every web experiment profile must pass."""

from __future__ import annotations

import pytest

from adaroll.actions import Action
from adaroll.envs.base import TaskSpec
from adaroll.envs.web import MiniWoBSuite
from adaroll.envs.web.experts import EXPERTS, verify
from adaroll.envs.web.grounding import UNREPRESENTABLE, grounding_gap
from adaroll.envs.web.miniwob import all_tasks, curated_tasks
from adaroll.envs.web.suite import EXPERT_CHECK_SEED_BASE, POLICY_KEYS, POLICY_KINDS
from adaroll.policies.coverage import expert_coverage
from adaroll.policies.small import SmallPolicy

pytestmark = pytest.mark.web

LONG = (
    "book-flight",
    "choose-date",
    "social-media-some",
    "email-inbox-forward-nl",
    "use-autocomplete",
    "search-engine",
    "login-user-popup",
)


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


def _profile_templates() -> set[str]:
    """Every template some web experiment profile trains or evaluates on."""
    from adaroll.config import load_config
    from adaroll.experiments.profiles import PROFILES
    from adaroll.experiments.runner import Unit, overrides_for

    out: set[str] = set()
    for profile in PROFILES.values():
        if profile.env == "web":
            for quick in (False, True):
                cfg = load_config(
                    None, overrides_for(profile, quick, Unit("default", 0, ("base",)))
                )
                out |= set(cfg.env.suite_options["templates"])
    return out


PROFILE_TEMPLATES = _profile_templates()


@pytest.fixture(scope="module")
def web_policy():
    """The small policy as web runs build it (the suite's hints): its action space, not its
    weights, is what the coverage check reads."""
    return SmallPolicy(**MiniWoBSuite().policy_hints())


@pytest.mark.parametrize("name", curated_tasks())
def test_expert_succeeds_on_a_fresh_seed_inside_the_policy_space(web_env, web_policy, name):
    """The expert solves the task; and the template is representable - the observation grounds
    every element the expert acts on and the web policy's sampler can produce every expert action
    - exactly when :data:`UNREPRESENTABLE` does not list it. Templates of the web experiment
    profiles are checked on a second seed too."""
    seeds = 2 if name in PROFILE_TEMPLATES or name in UNREPRESENTABLE else 1
    runs = [
        expert_coverage(
            web_env,
            MiniWoBSuite(),
            TaskSpec("web", name, EXPERT_CHECK_SEED_BASE + i),
            web_policy,
            grounding=grounding_gap,
        )
        for i in range(seeds)
    ]
    for run in runs:
        actions = run.actions
        assert run.success, f"{run.task.id}: expert failed after {[a.to_text() for a in actions]}"
        assert all(isinstance(a, Action) for a in actions)
        assert len(actions) <= all_tasks()[name].max_steps
        assert {a.kind.value for a in actions} <= set(POLICY_KINDS), [a.to_text() for a in actions]
        assert {a.key for a in actions if a.key is not None} <= set(POLICY_KEYS)
    if name in UNREPRESENTABLE:
        assert not all(run.ok for run in runs), (
            f"{name} is representable now: drop it from UNREPRESENTABLE"
        )
    else:
        assert all(run.ok for run in runs), [run.summary() for run in runs]


def test_every_web_profile_template_is_recorded_representable():
    assert PROFILE_TEMPLATES and PROFILE_TEMPLATES <= set(curated_tasks())
    assert not PROFILE_TEMPLATES & set(UNREPRESENTABLE)


def test_verify_reports_rates(web_env):
    results = verify(["click-button", "enter-text"], range(2), env=web_env)
    assert results["click-button"]["rate"] == 1.0 and results["enter-text"]["episodes"] == 2
    assert results["enter-text"]["mean_steps"] == 3.0 and results["enter-text"]["longest"] == 3
