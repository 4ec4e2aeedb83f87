"""Page reuse (``WebEnvConfig.reuse_page``): a reset to the template the page already holds
starts the episode in that page - and is then indistinguishable from a reset that reloads it,
even after a messy episode; a page the last episode changed outside the task area is reloaded.
A collection of Root groups with page reuse, threads and parallel jobs equals one without."""

from __future__ import annotations

import random

import pytest

from adaroll.actions import Action
from adaroll.envs.base import TaskSpec
from adaroll.envs.web import WebEnv
from adaroll.envs.web.experts import run_expert_episode

pytestmark = pytest.mark.web

# a scrolled task area, a date picker, autocomplete menus appended to the body, a dialog
TEMPLATES = ("email-inbox", "choose-date", "use-autocomplete", "click-dialog")


def messy_episode(env: WebEnv, task: TaskSpec, rng: random.Random) -> None:
    """Random taps, text, keys and scrolls: leaves focus, scroll offsets, open widgets."""
    env.reset(options={"task": task})
    for _ in range(6):
        action = rng.choice(
            [
                Action.tap(rng.random(), rng.random()),
                Action.type_text("abc"),
                Action.press("tab"),
                Action.swipe("up"),
                Action.press("down"),
            ]
        )
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            return


@pytest.fixture(scope="module")
def envs(browser):
    from adaroll.envs.web.browser import BrowserProcess

    other = BrowserProcess.launch()
    fresh, reused = WebEnv(browser=browser, reuse_page=False), WebEnv(browser=other)
    yield fresh, reused
    fresh.close()
    reused.close()
    other.kill()


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_reused_page_starts_the_episode_a_reloaded_page_starts(envs, template) -> None:
    fresh, reused = envs
    rng = random.Random(template)
    for seed in (4,):
        messy_episode(reused, TaskSpec("web", template, seed + 50), rng)
        task = TaskSpec("web", template, seed)
        before = dict(reused.reset_counts)
        obs_fresh, info_fresh = fresh.reset(options={"task": task})
        obs_reused, info_reused = reused.reset(options={"task": task})
        assert (
            reused.reset_counts["reused"] + reused.reset_counts["reuse_refused"]
            > before["reused"] + before["reuse_refused"]
        )
        assert obs_reused.elements == obs_fresh.elements
        assert info_reused == info_fresh
        assert reused.evaluate("Date.now()") - fresh.evaluate("Date.now()") < 1000  # same clock
        # and the episodes play out alike
        assert run_expert_episode(reused, task) == run_expert_episode(fresh, task)
    assert reused.reset_counts["reused"] > 0  # reuse does happen on these pages


def test_a_trace_outside_the_task_area_makes_the_reset_reload(envs) -> None:
    fresh, reused = envs
    task = TaskSpec("web", "click-button", 3)
    reused.reset(options={"task": TaskSpec("web", "click-button", 2)})
    reused.evaluate(
        "document.body.appendChild(document.createElement('p')).textContent = 'left over'"
    )
    before = dict(reused.reset_counts)
    obs = reused.reset(options={"task": task})[0]
    assert reused.reset_counts["reuse_refused"] == before["reuse_refused"] + 1
    assert reused.reset_counts["loaded"] == before["loaded"] + 1
    assert obs.elements == fresh.reset(options={"task": task})[0].elements
    assert "left over" not in [e.text for e in obs.elements]
    # the reloaded page is reused again by the next reset
    reused.reset(options={"task": task})
    assert reused.reset_counts["reused"] == before["reused"] + 1


def test_screenshots_and_other_templates_reload(browser) -> None:
    env = WebEnv(browser=browser, screenshot=True)
    try:
        task = TaskSpec("web", "click-button", 0)
        env.reset(options={"task": task})
        assert not env.warm_for(task)  # screenshots: pixels at scroller edges could differ
        env.reset(options={"task": task})
        assert env.reset_counts == {"loaded": 2, "reused": 0, "reuse_refused": 0}
    finally:
        env.close()
    env = WebEnv(browser=browser)
    try:
        env.reset(options={"task": task})
        assert env.warm_for(task) and not env.warm_for(TaskSpec("web", "click-link", 0))
        env.reset(options={"task": TaskSpec("web", "click-link", 0)})
        assert env.reset_counts["loaded"] == 2
    finally:
        env.close()
