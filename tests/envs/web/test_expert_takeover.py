"""Experts take over from what a policy leaves behind, with the actions a person has: a wrong
text of any length is cleared by ``key(ctrl+a)``, a slider's ends take one tap, nested menus
open on ``hover``."""

from __future__ import annotations

import re

import pytest

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import InvalidActionError, TaskSpec, run_expert
from adaroll.envs.web import MiniWoBSuite
from adaroll.envs.web.experts import EXPERTS, Page

pytestmark = pytest.mark.web

SUITE = MiniWoBSuite()
GARBAGE = "the quick brown fox jumps over the lazy dog 0123456789 " * 2


def _finish(env, task: TaskSpec) -> tuple[list[Action], bool]:
    """Follow the task's expert from the env's current state to the end of the episode."""
    actions = []
    while True:
        action = EXPERTS[task.template](Page(env))
        actions.append(action)
        *_, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return actions, bool(info["success"])


@pytest.mark.parametrize("seed", [23, 26, 35])  # targets: the slider's min, max, max
def test_slider_target_at_either_end_takes_one_tap(web_env, seed: int) -> None:
    task = TaskSpec("web", "form-sequence", seed)
    web_env.reset(options={"task": task})
    target = int(re.search(r"Select (-?\d+)", web_env.instruction).group(1))  # type: ignore[union-attr]
    ends = web_env.evaluate(
        "[$('#slider').slider('option', 'min'), $('#slider').slider('option', 'max')]"
    )
    assert target in ends  # the seed still tests what it claims
    actions, success = run_expert(web_env, SUITE, task)
    # slider, checkbox, submit: a tap that missed the slider would leave arrow presses to do
    assert success and len(actions) == 3, [a.to_text() for a in actions]


def test_ctrl_a_is_a_chord_the_page_sees_and_type_replaces_the_selection(web_env) -> None:
    web_env.reset(options={"task": TaskSpec("web", "enter-text", 0)})
    web_env.evaluate(
        "window.__keys = []; document.addEventListener('keydown', e => __keys.push("
        "[e.key, e.ctrlKey, e.shiftKey]), true)"
    )
    web_env.step(Page(web_env).act_on("X.q('#tt')"))
    web_env.step(Action.type_text(GARBAGE))
    web_env.step(Action.press("ctrl+a"))
    field = "document.getElementById('tt')"
    assert web_env.evaluate(f"[{field}.selectionStart, {field}.selectionEnd]") == [0, len(GARBAGE)]
    assert web_env.evaluate("__keys") == [["Control", True, False], ["a", True, False]]
    web_env.step(Action.type_text("new"))
    assert web_env.evaluate(f"{field}.value") == "new"
    web_env.step(Action.press("shift+left"))  # shift chords extend the selection
    assert web_env.evaluate(f"[{field}.selectionStart, {field}.selectionEnd]") == [2, 3]
    with pytest.raises(InvalidActionError, match="key 'ctrl\\+back' has no meaning in a web page"):
        web_env.step(Action.press("ctrl+back"))


@pytest.mark.parametrize(
    ("template", "field"), [("enter-text", "#tt"), ("login-user", "#username")]
)
def test_expert_takes_over_after_a_long_wrong_text(web_env, template: str, field: str) -> None:
    task = TaskSpec("web", template, 3)
    web_env.reset(options={"task": task})
    web_env.step(Page(web_env).act_on(f"X.q('{field}')"))
    web_env.step(Action.type_text(GARBAGE))
    actions, success = _finish(web_env, task)
    assert success, [a.to_text() for a in actions]
    assert actions[0] == Action.press("ctrl+a") and actions[1].kind is ActionKind.TYPE


def test_right_prefix_with_the_caret_inside_is_retyped(web_env) -> None:
    task = TaskSpec("web", "enter-text", 4)
    web_env.reset(options={"task": task})
    text = re.search(r'"([^"]*)"', web_env.instruction).group(1)  # type: ignore[union-attr]
    web_env.step(Page(web_env).act_on("X.q('#tt')"))
    web_env.step(Action.type_text(text[:-1]))
    web_env.step(Action.press("left"))  # typing the missing tail now would land mid-word
    actions, success = _finish(web_env, task)
    assert success and actions[0] == Action.press("ctrl+a"), [a.to_text() for a in actions]


def test_hover_opens_nested_menus_where_a_tap_would_fail(web_env) -> None:
    task = TaskSpec("web", "click-menu", 1)  # "Select Alvera>Terza>Ludovika"
    web_env.reset(options={"task": task})
    assert web_env.instruction.count(">") == 2
    first = EXPERTS["click-menu"](Page(web_env))
    assert first.kind is ActionKind.HOVER
    obs, *_ = web_env.step(first)
    assert any(e.text == "Terza" for e in obs.elements)  # the submenu shows, the pointer stays
    actions, success = _finish(web_env, task)
    assert success and [a.kind for a in actions] == [ActionKind.HOVER, ActionKind.TAP]
    # a tap on an item that has a submenu selects it: the task's wrong answer
    web_env.reset(options={"task": task})
    parent = Page(web_env).act_on("X.all('#menu > li > div').find(d => X.text(d) === 'Alvera')")
    *_, terminated, _, info = web_env.step(parent)
    assert terminated and not info["success"]
