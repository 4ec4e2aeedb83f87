"""Screenshot observations. A screenshot env launches its own browser (frames drawn on demand,
FAST_FRAME_FLAGS) and keeps the capture's viewport emulation in place; at every step its
screenshot must show exactly the pixels a default browser without that emulation shows for the
settled page (captured afresh after the step), and its element list must be the same."""

from __future__ import annotations

import numpy as np
import pytest

from adaroll.envs.base import TaskSpec
from adaroll.envs.web import WebEnv
from adaroll.envs.web.browser import FAST_FRAME_FLAGS, BrowserConfig
from adaroll.envs.web.env import WebEnvConfig
from adaroll.envs.web.experts import EXPERTS, Page
from tests.components import require_chromium

pytestmark = pytest.mark.web


def test_screenshots_equal_fresh_captures_of_the_settled_page_in_a_default_browser(browser) -> None:
    # the reference takes no screenshot per observation: no emulation, no fast frames; its
    # screenshot() is a fresh capture after the step has settled
    default, fast = WebEnv(browser=browser), WebEnv(screenshot=True)
    try:
        assert all(
            flag in " ".join(open(f"/proc/{fast.browser.pid}/cmdline").read().split("\0"))
            for flag in FAST_FRAME_FLAGS
        )
        task = TaskSpec("web", "click-checkboxes", 5)
        default.reset(options={"task": task})
        shots = [(default.screenshot(), fast.reset(options={"task": task})[0].screenshot)]
        done = False
        while not done:
            action = EXPERTS[task.template](Page(default))
            a, *_ = default.step(action)
            b, _, terminated, truncated, _ = fast.step(action)
            assert a.elements == b.elements
            shots.append((default.screenshot(), b.screenshot))
            done = terminated or truncated
        for a, b in shots:
            assert b.shape == (210, 160, 3) and b.dtype == np.uint8
            assert np.array_equal(a, b)
        assert not np.array_equal(shots[0][0], shots[-2][0])  # ticked boxes
    finally:
        default.close()
        fast.close()


def test_a_viewport_smaller_than_the_task_area_is_refused() -> None:
    require_chromium()
    config = WebEnvConfig(screenshot=True, browser=BrowserConfig(window_size=(500, 200)))
    with pytest.raises(ValueError, match="smaller than the task area"):
        WebEnv(config)
