"""GUI mechanics and episode semantics: hit-testing, scrolling, typing, keys, apps, errors."""

from __future__ import annotations

import pytest

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import ELEMENT_FLAGS, InvalidActionError
from adaroll.envs.mobile import MobileEnv

from .conftest import spec


def element(env: MobileEnv, text: str, role: str | None = None):  # type: ignore[no-untyped-def]
    return next(
        e for e in env.observe().elements if e.text == text and (role is None or e.role == role)
    )


def tap(env: MobileEnv, text: str, role: str | None = None):  # type: ignore[no-untyped-def]
    return env.step(Action.tap(*element(env, text, role).center))


def test_observation_shape(env: MobileEnv) -> None:
    obs, info = env.reset(options={"task": spec("notes.create", 1)})
    assert obs.screen_size == (1080, 2400)
    assert info["instruction"].startswith('Create a note titled "')
    assert info["max_steps"] > info["expert_steps"] >= 2
    assert [e.id for e in obs.elements] == list(range(len(obs.elements)))
    for e in obs.elements:
        left, top, right, bottom = e.bounds
        assert 0 <= left < right <= 1 and 0 <= top < bottom <= 1
        assert e.flags <= set(ELEMENT_FLAGS)
    assert obs.elements[0].role == "status_bar"
    assert {e.text for e in obs.elements if e.role == "icon"} >= {"Settings", "Notes", "Shop"}


def test_tap_on_nothing_is_a_noop_that_costs_a_step(env: MobileEnv) -> None:
    env.reset(options={"task": spec("notes.create", 1)})
    before = env.get_state()
    obs, reward, terminated, truncated, info = env.step(Action.tap(0.5, 0.95))
    assert env.get_state().phone == before.phone and env.steps_taken == 1
    assert (reward, terminated, truncated, info["success"]) == (0.0, False, False, False)


def test_launcher_open_app_back_and_home(env: MobileEnv) -> None:
    env.reset(options={"task": spec("notes.create", 1)})
    tap(env, "Notes")
    assert env.phone.top.app == "Notes"
    tap(env, "New note")
    assert env.phone.top.screen == "editor"
    env.step(Action.press("back"))
    assert env.phone.top.screen == "list"
    env.step(Action(ActionKind.OPEN_APP, app="  contacts "))
    assert env.phone.top.app == "Contacts" and len(env.phone.stack) == 1
    env.step(Action.press("home"))
    assert env.phone.stack == ()
    env.step(Action.press("back"))  # back at home does nothing
    assert env.phone.stack == ()


def test_typing_needs_a_focused_field_and_keyboard_hides_lower_widgets(env: MobileEnv) -> None:
    env.reset(options={"task": spec("notes.create", 1)})
    env.step(Action(ActionKind.OPEN_APP, app="Notes"))
    tap(env, "New note")
    unfocused = env.get_state().phone
    env.step(Action.type_text("lost"))
    assert env.phone == unfocused
    tap(env, "Title", "text_field")
    obs, *_ = env.step(Action.type_text("Hello"))
    field = element(env, "Hello", "text_field")
    assert "focused" in field.flags and "editable" in field.flags
    assert any(e.role == "keyboard" for e in obs.elements)
    env.step(Action.press("backspace"))
    env.step(Action.press("space"))
    assert env.phone.top.field("title") == "Hell "
    env.step(Action.press("back"))  # hides the keyboard, keeps the screen and the text
    assert env.phone.top.focus is None and env.phone.top.field("title") == "Hell "
    assert not any(e.role == "keyboard" for e in env.observe().elements)


def test_swipes_scroll_lists(env: MobileEnv) -> None:
    env.reset(options={"task": spec("settings.language", 0)})
    tap(env, "Settings")
    lst = next(e for e in env.observe().elements if e.role == "list")
    assert "scrollable" in lst.flags
    assert all(e.text != "About phone" for e in env.observe().elements)
    env.step(Action.swipe("up"))  # finger up: content moves up, later rows appear
    assert any(e.text == "About phone" for e in env.observe().elements)
    scrolled = env.phone.top.scroll
    env.step(Action(ActionKind.SWIPE, x=0.5, y=0.5, x2=0.5, y2=0.6))  # drag down 10% of screen
    assert env.phone.top.scroll == scrolled - 240
    env.step(Action(ActionKind.SWIPE, x=0.5, y=0.01, x2=0.5, y2=0.5))  # starts outside the list
    assert env.phone.top.scroll == scrolled - 240
    env.step(Action.swipe("left"))  # horizontal swipes do nothing
    env.step(Action.swipe("down"))
    env.step(Action.swipe("down"))
    assert env.phone.top.scroll == 0


def test_dialog_outside_tap_dismisses_and_long_press(env: MobileEnv) -> None:
    env.reset(options={"task": spec("notes.pin", 2)})
    env.step(Action(ActionKind.OPEN_APP, app="Notes"))
    row = next(e for e in env.observe().elements if e.role == "list_item")
    env.step(Action(ActionKind.LONG_PRESS, x=row.center[0], y=row.center[1]))
    obs = env.observe()
    assert obs.elements[1].role == "dialog" and any(
        e.text in ("Pin", "Unpin") for e in obs.elements
    )
    env.step(Action.tap(0.5, 0.97))  # outside the dialog box
    assert env.phone.top.dialog is None


def test_slider_sets_value_from_tap_position(env: MobileEnv) -> None:
    env.reset(options={"task": spec("settings.brightness", 0)})
    env.step(Action(ActionKind.OPEN_APP, app="Settings"))
    tap(env, "Display")
    slider = next(e for e in env.observe().elements if e.role == "slider")
    env.step(Action.tap(slider.bounds[2] - 0.001, slider.center[1]))
    assert env.phone.apps.settings.brightness == 100


def test_answer_tasks(env: MobileEnv) -> None:
    env.reset(options={"task": spec("settings.android_version", 0)})
    answer = env.task_instance.expected_answer
    _, reward, terminated, _, info = env.step(Action.done(f"  Android {answer}"))
    assert terminated and reward == 0.0 and not info["success"]
    env.reset(options={"task": spec("settings.android_version", 0)})
    _, reward, terminated, _, info = env.step(Action.done(f" {answer}. "))
    assert terminated and reward == 1.0 and info["success"]


def test_truncation_at_max_steps(env: MobileEnv) -> None:
    _, info = env.reset(options={"task": spec("settings.wifi", 0)})
    for i in range(info["max_steps"]):
        _, reward, terminated, truncated, step_info = env.step(Action(ActionKind.WAIT))
        assert not terminated and truncated == (i == info["max_steps"] - 1)
    assert step_info["success"] is False and reward == 0.0
    with pytest.raises(RuntimeError, match="ended"):
        env.step(Action(ActionKind.WAIT))


def test_bad_actions_give_clear_errors(env: MobileEnv) -> None:
    with pytest.raises(RuntimeError, match="reset"):
        env.step(Action.press("home"))
    env.reset(options={"task": spec("settings.wifi", 0)})
    with pytest.raises(InvalidActionError, match="no app called 'Camera'.*Settings"):
        env.step(Action(ActionKind.OPEN_APP, app="Camera"))
    with pytest.raises(InvalidActionError, match="expects an adaroll.actions.Action"):
        env.step("tap(0.5, 0.5)")  # type: ignore[arg-type]
    with pytest.raises(InvalidActionError, match="hover is web only"):
        env.step(Action.hover(0.5, 0.5))
    with pytest.raises(
        InvalidActionError, match=r"key\(ctrl\+a\): the phone has no keyboard chords"
    ):
        env.step(Action.press("ctrl+a"))
    assert env.steps_taken == 0  # rejected actions cost nothing
    with pytest.raises(KeyError, match="unknown mobile task template 'nope'"):
        env.reset(options={"task": spec("nope", 0)})
    with pytest.raises(ValueError, match="not a mobile task"):
        env.reset(options={"task": "web:click-button#0"})


def test_reset_variants(env: MobileEnv) -> None:
    obs_a, info_a = env.reset(options={"task": "notes.create"}, seed=7)
    assert info_a["task"] == "mobile:notes.create#7"
    obs_b, info_b = env.reset(options={"task": "mobile:notes.create#7"})
    assert obs_a == obs_b and info_a == info_b
    _, info_c = env.reset(seed=3)
    _, info_d = MobileEnv().reset(seed=3)
    assert info_c["task"] == info_d["task"]  # drawn with the env's seeded RNG
