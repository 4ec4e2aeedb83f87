"""Screenshot observations: an env that launches its own browser for screenshots (frames drawn
on demand, FAST_FRAME_FLAGS) sees exactly the pixels of a default browser, at every step."""

from __future__ import annotations

import numpy as np
import pytest

from adaroll.envs.base import TaskSpec
from adaroll.envs.web import WebEnv
from adaroll.envs.web.browser import FAST_FRAME_FLAGS
from adaroll.envs.web.experts import EXPERTS, Page

pytestmark = pytest.mark.web


def test_screenshots_from_a_fast_frame_browser_equal_the_default_ones(browser) -> None:
    default, fast = WebEnv(browser=browser, screenshot=True), WebEnv(screenshot=True)
    try:
        assert all(flag in " ".join(open(f"/proc/{fast.browser.pid}/cmdline").read().split("\0"))
                   for flag in FAST_FRAME_FLAGS)  # fmt: skip
        task = TaskSpec("web", "click-checkboxes", 5)
        shots = [(default.reset(options={"task": task})[0], fast.reset(options={"task": task})[0])]
        done = False
        while not done:
            action = EXPERTS[task.template](Page(default))
            a, *_ = default.step(action)
            b, _, terminated, truncated, _ = fast.step(action)
            shots.append((a, b))
            done = terminated or truncated
        for a, b in shots:
            assert a.screenshot.shape == (210, 160, 3) and a.screenshot.dtype == np.uint8
            assert np.array_equal(a.screenshot, b.screenshot) and a.elements == b.elements
        assert not np.array_equal(shots[0][0].screenshot, shots[-2][0].screenshot)  # ticked boxes
    finally:
        default.close()
        fast.close()
