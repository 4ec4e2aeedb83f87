"""Screenshot observations: an env that launches its own browser for screenshots (frames drawn
on demand, FAST_FRAME_FLAGS) sees exactly the pixels of a default browser, at every step, and a
step's screenshot (the whole viewport, cropped by the env) equals a fresh capture of the settled
page that Chromium itself clips to the task area."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

from adaroll.envs.base import TaskSpec
from adaroll.envs.web import WebEnv
from adaroll.envs.web.browser import FAST_FRAME_FLAGS
from adaroll.envs.web.env import SCREEN
from adaroll.envs.web.experts import EXPERTS, Page
from tests.components import require_chromium

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
            assert np.array_equal(b.screenshot, clipped_capture(fast))  # the settled page
            done = terminated or truncated
        for a, b in shots:
            assert a.screenshot.shape == (210, 160, 3) and a.screenshot.dtype == np.uint8
            assert np.array_equal(a.screenshot, b.screenshot) and a.elements == b.elements
        assert not np.array_equal(shots[0][0].screenshot, shots[-2][0].screenshot)  # ticked boxes
    finally:
        default.close()
        fast.close()


def clipped_capture(env: WebEnv) -> np.ndarray:
    """The task area as Chromium clips it (a second, independent capture path)."""
    data = env.cdp.call("Page.captureScreenshot", {
        "format": "png", "clip": {"x": 0, "y": 0, "width": SCREEN[0], "height": SCREEN[1], "scale": 1},
    })["data"]  # fmt: skip
    with Image.open(io.BytesIO(base64.b64decode(data))) as img:
        return np.asarray(img.convert("RGB"))


def test_a_viewport_smaller_than_the_task_area_is_refused() -> None:
    from adaroll.envs.web.browser import BrowserConfig
    from adaroll.envs.web.env import WebEnvConfig

    require_chromium()
    config = WebEnvConfig(screenshot=True, browser=BrowserConfig(window_size=(500, 200)))
    with WebEnv(config) as env, pytest.raises(ValueError, match="smaller than the task area"):
        env.reset(options={"task": TaskSpec("web", "click-button", 0)})
