"""AdaRoll actions -> BrowserGym action strings: coordinates scaled to BrowserGym's screenshot
pixels, the finger convention of swipes, keys and chords in Playwright's names, invalid actions
refused; every string emitted is accepted by BrowserGym's own strict action parser."""

from __future__ import annotations

import pytest

from adaroll.actions import Action, ActionKind, parse_action
from adaroll.envs.base import InvalidActionError
from adaroll.envs.browsergym.actions import ACTION_SUBSETS, ActionGeometry, to_browsergym
from tests.components import require_browsergym

MINIWOB = ActionGeometry((160, 210), scale=1.5, scroll_fraction=0.5, wait_ms=500, long_press_ms=300)


def test_taps_are_mouse_actions_at_the_scaled_point() -> None:
    assert to_browsergym(parse_action("tap(0.5, 0.25)"), MINIWOB) == "mouse_click(120.00, 78.75)"
    assert (
        to_browsergym(parse_action("double_tap(0, 1)"), MINIWOB) == "mouse_dblclick(0.00, 315.00)"
    )
    assert to_browsergym(parse_action("long_press(0.5, 0.5)"), MINIWOB) == (
        "mouse_down(120.00, 157.50)\nnoop(300)\nmouse_up(120.00, 157.50)"
    )


def test_swipes_follow_the_finger_convention_and_drags_drag() -> None:
    # swipe(up): the content moves up, i.e. the page scrolls down (positive wheel delta)
    assert (
        to_browsergym(parse_action("swipe(up)"), MINIWOB)
        == "scroll_at(120.00, 157.50, 0.00, 157.50)"
    )
    assert (
        to_browsergym(parse_action("swipe(left)"), MINIWOB)
        == "scroll_at(120.00, 157.50, 120.00, 0.00)"
    )
    assert to_browsergym(parse_action("swipe(0.1, 0.2, 0.3, 0.4)"), MINIWOB) == (
        "mouse_drag_and_drop(24.00, 63.00, 72.00, 126.00)"
    )


def test_text_keys_wait_and_done() -> None:
    assert to_browsergym(parse_action('type("a \\"b\\"")'), MINIWOB) == 'keyboard_type("a \\"b\\"")'
    assert to_browsergym(parse_action("key(enter)"), MINIWOB) == 'keyboard_press("Enter")'
    assert to_browsergym(parse_action("key(page_down)"), MINIWOB) == 'keyboard_press("PageDown")'
    assert (
        to_browsergym(Action(ActionKind.KEY, key="ctrl+a"), MINIWOB)
        == 'keyboard_press("Control+a")'
    )
    assert to_browsergym(parse_action("wait()"), MINIWOB) == "noop(500)"
    assert to_browsergym(parse_action("done()"), MINIWOB) == "noop(0)"
    assert to_browsergym(parse_action('done("42")'), MINIWOB) == 'send_msg_to_user("42")'


@pytest.mark.parametrize("text", ["key(back)", "key(volume_up)", 'open_app("Mail")'])
def test_phone_actions_are_invalid_here(text: str) -> None:
    with pytest.raises(InvalidActionError):
        to_browsergym(parse_action(text), MINIWOB)


def test_browsergym_parses_every_emitted_string() -> None:
    require_browsergym()
    from browsergym.core.action.highlevel import HighLevelActionSet

    actions = HighLevelActionSet(subsets=list(ACTION_SUBSETS), strict=True, multiaction=True)
    texts = [
        "tap(0.5, 0.5)",
        "double_tap(0.1, 0.9)",
        "long_press(0.2, 0.2)",
        "swipe(down)",
        "swipe(0, 0, 1, 1)",
        'type("x\\ny")',
        "key(escape)",
        "wait()",
        "done()",
        'done("ok")',
    ]
    for text in texts:
        code = actions.to_python_code(to_browsergym(parse_action(text), MINIWOB))
        assert "page" in code or "send_message_to_user" in code, text
