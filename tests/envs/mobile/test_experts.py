"""Every template's scripted expert solves its task (several seeds), through coordinates only,
within 2..25 steps, and can take over from any state of its own trajectory."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from adaroll.actions import ActionKind
from adaroll.envs.base import run_expert
from adaroll.envs.mobile import TEMPLATES, MobileEnv
from adaroll.envs.mobile.tasks import instantiate

from .conftest import spec

SEEDS = (0, 1, 2, 3)
ALL = sorted(TEMPLATES)


def test_at_least_60_templates_over_8_apps() -> None:
    apps = Counter(name.split(".")[0] for name in TEMPLATES)
    assert len(TEMPLATES) >= 60 and len(apps) >= 8, apps
    tags = Counter(tag for t in TEMPLATES.values() for tag in t.tags)
    for skill in ("scroll", "text", "dialog", "cross_app", "answer", "long_press"):
        assert tags[skill] >= 3, (skill, tags)


@pytest.mark.parametrize("template", ALL)
def test_expert_passes_verifier(template: str, env: MobileEnv, suite) -> None:  # type: ignore[no-untyped-def]
    for seed in SEEDS:
        actions, success = run_expert(env, suite, spec(template, seed))
        assert success, f"{template}#{seed}: expert failed after {[a.to_text() for a in actions]}"
        assert 2 <= len(actions) <= 25, (template, seed, len(actions))
        assert env.get_state().success and env.get_state().terminated
        assert len(actions) == instantiate(spec(template, seed)).expert_steps


@pytest.mark.parametrize("template", ALL)
def test_not_solved_at_reset_and_done_fails(template: str, env: MobileEnv) -> None:
    env.reset(options={"task": spec(template, 5)})
    inst = env.task_instance
    assert not inst.verify(env.phone.apps, None)
    _, reward, terminated, truncated, info = env.step(
        __import__("adaroll.actions").actions.Action.done()
    )
    assert terminated and not truncated and reward == 0.0 and info["success"] is False


def test_expert_takes_over_from_its_own_states(env: MobileEnv, suite) -> None:  # type: ignore[no-untyped-def]
    """Checkpoints restore mid-trajectory states; the expert must finish from each of them."""
    for template in (
        "shop.buy",
        "messages.share_phone",
        "clock.new_alarm_label",
        "files.rename",
        "calendar.add_event_other_month",
        "contacts.clear_favorites",
    ):
        task = spec(template, 11)
        actions, ok = run_expert(env, suite, task)
        assert ok
        env.reset(options={"task": task})
        for k, action in enumerate(actions):
            branch = env.branch(env.get_state())
            remaining = 0
            while True:
                _, _, terminated, truncated, info = branch.step(suite.expert_action(branch))
                remaining += 1
                if terminated or truncated:
                    break
            assert info["success"] and remaining == len(actions) - k, (template, k)
            env.step(action)


def test_expert_acts_through_public_coordinates(env: MobileEnv, suite) -> None:  # type: ignore[no-untyped-def]
    kinds: Counter[str] = Counter()
    for template in ALL:
        actions, _ = run_expert(env, suite, spec(template, 1))
        kinds.update(a.kind.value for a in actions)
        for a in actions:
            if a.kind in (ActionKind.TAP, ActionKind.LONG_PRESS):
                assert 0 <= a.x <= 1 and 0 <= a.y <= 1  # type: ignore[operator]
    assert (
        kinds["tap"] and kinds["swipe"] and kinds["type"] and kinds["long_press"] and kinds["done"]
    )


def test_typed_values_are_quoted_in_the_instruction(env: MobileEnv, suite) -> None:  # type: ignore[no-untyped-def]
    """A policy copies what it types from the instruction: typed text appears in quotes
    (except values read off another app's screen in cross-app tasks)."""
    for template in ALL:
        if "cross_app" in TEMPLATES[template].tags:
            continue
        for seed in (0, 1):
            task = spec(template, seed)
            actions, _ = run_expert(env, suite, task)
            quoted = re.findall(r'"([^"]*)"', instantiate(task).instruction)
            for a in actions:
                if a.kind is ActionKind.TYPE:
                    text = a.text.strip(", ")  # type: ignore[union-attr]
                    assert any(text in q for q in quoted), (template, seed, a.text, quoted)


def test_screens_stay_small(env: MobileEnv, suite) -> None:  # type: ignore[no-untyped-def]
    """A small policy attends over the element list: expert-visited screens keep <= 40."""
    worst = 0
    for template in ALL:
        env.reset(options={"task": spec(template, 2)})
        while True:
            worst = max(worst, len(env.observe().elements))
            _, _, terminated, truncated, _ = env.step(suite.expert_action(env))
            if terminated or truncated:
                break
    assert worst <= 40


def test_expert_taps_are_unambiguous(env: MobileEnv, suite) -> None:  # type: ignore[no-untyped-def]
    """The env's hit-test (top-most reactive element) and the rule a policy can apply to the
    element list alone (smallest clickable element containing the point) agree on every tap
    the experts make, so imitation targets are well defined."""

    def area(e):  # type: ignore[no-untyped-def]
        return (e.bounds[2] - e.bounds[0]) * (e.bounds[3] - e.bounds[1])

    for template in ALL:
        env.reset(options={"task": spec(template, 3)})
        while True:
            action = suite.expert_action(env)
            if action.kind in (ActionKind.TAP, ActionKind.LONG_PRESS):
                inside = [
                    e
                    for e in env.observe().elements
                    if e.bounds[0] <= action.x <= e.bounds[2]
                    and e.bounds[1] <= action.y <= e.bounds[3]
                ]
                clickable = [e for e in inside if "clickable" in e.flags]
                chosen = min(clickable, key=lambda e: (area(e), e.id))
                assert chosen.id == env.view.hit(action.x, action.y), (template, action.to_text())  # type: ignore[arg-type]
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
