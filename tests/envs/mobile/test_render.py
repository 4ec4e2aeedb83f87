"""Screenshots: deterministic, configurable, only when asked."""

from __future__ import annotations

import numpy as np
import pytest

from adaroll.actions import Action
from adaroll.envs.mobile import MobileEnv

from .conftest import spec


def test_same_state_same_pixels(suite) -> None:  # type: ignore[no-untyped-def]
    a, b = MobileEnv(), MobileEnv()
    for env in (a, b):
        env.reset(options={"task": spec("notes.create_with_text", 3)})
    for _ in range(4):
        action = suite.expert_action(a)
        a.step(action)
        b.step(action)
        pa, pb = a.render(), b.render()
        assert pa.dtype == np.uint8 and pa.shape == (1200, 540, 3)
        assert np.array_equal(pa, pb)
        assert np.array_equal(pa, a.branch(a.get_state()).render())


def test_different_screens_differ_and_text_is_drawn() -> None:
    env = MobileEnv(screenshot_size=(270, 600))
    env.reset(options={"task": spec("settings.wifi", 0)})
    home = env.render()
    assert home.shape == (600, 270, 3)
    env.step(Action.tap(*env.observe().elements[2].center))  # Settings icon
    settings = env.render()
    assert not np.array_equal(home, settings)
    # text is drawn: the title element's box holds dark glyph pixels on the light background
    title = next(e for e in env.observe().elements if e.role == "text" and e.text == "Settings")
    left, top, right, bottom = (
        round(v * n) for v, n in zip(title.bounds, (270, 600, 270, 600), strict=True)
    )
    assert (settings[top:bottom, left:right].min(axis=2) < 100).sum() > 30


def test_screenshot_only_when_asked() -> None:
    plain = MobileEnv()
    obs, _ = plain.reset(options={"task": spec("settings.wifi", 0)})
    assert obs.screenshot is None
    shot = MobileEnv(screenshot=True, screenshot_size=(108, 240))
    obs, _ = shot.reset(options={"task": spec("settings.wifi", 0)})
    assert obs.screenshot.shape == (240, 108, 3)
    obs2, *_ = shot.step(Action.press("home"))
    assert obs2.screenshot is not None and obs2 == obs  # screenshots do not enter equality


def test_bad_screenshot_size() -> None:
    with pytest.raises(ValueError, match="screenshot_size"):
        MobileEnv(screenshot_size=(0, 10))
