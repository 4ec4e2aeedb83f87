"""Screenshots of the task area, and the viewport emulation that makes them cheap.

One job: capture the ``160 x 210`` CSS-pixel task area at the page's top-left as an
H x W x 3 uint8 array. :class:`~adaroll.envs.web.env.WebEnv` runs the capture under its time
bound (:meth:`~adaroll.envs.web.env.WebEnv.screenshot`) and, for screenshot envs, puts the
emulation in place on every (re)connect.
"""

from __future__ import annotations

import base64
import io
from typing import Any, Protocol

from adaroll.envs.web.cdp import CDPSession
from adaroll.envs.web.dom import SCREEN


class CapturedPage(Protocol):
    """A page screenshots are taken of (:class:`~adaroll.envs.web.env.WebEnv` is one)."""

    @property
    def cdp(self) -> CDPSession: ...


CAPTURE_CLIP = {"x": 0, "y": 0, "width": SCREEN[0], "height": SCREEN[1], "scale": 1}
"""What a screenshot captures: the task area at the page's top-left, in CSS pixels."""


def capture_png(env: CapturedPage) -> Any:
    """The task area as a base64 PNG, straight from Chromium."""
    return env.cdp.call(
        "Page.captureScreenshot",
        {
            "format": "png",
            "optimizeForSpeed": True,  # lossless, cheaper to encode
            "clip": CAPTURE_CLIP,
        },
    )["data"]


def decode_png(data: str) -> Any:
    """A base64 PNG as an H x W x 3 uint8 numpy array."""
    import numpy as np
    from PIL import Image

    with Image.open(io.BytesIO(base64.b64decode(data))) as img:
        return np.asarray(img.convert("RGB"))


def emulate_capture_viewport(env: CapturedPage) -> None:
    """Put in place, for good, the emulation a screenshot's clip asks for. Chromium captures
    a clip by emulating a visual viewport at the clip's offset and scale, drawing a frame,
    and restoring the emulation afterwards; when that emulation is already in place (offset
    0, scale 1: the page's own view at its own size, same layout and pixels, tested) a
    capture draws one frame and reads back and encodes only the task area: about 3 instead
    of 16-21 ms (docs/web.md, "Speed"). The override lasts as long as the DevTools session,
    so :meth:`~adaroll.envs.web.env.WebEnv.reconnect` sets it again."""
    width, height, ratio = env.cdp.evaluate("[innerWidth, innerHeight, devicePixelRatio]")
    if width < SCREEN[0] or height < SCREEN[1]:
        raise ValueError(
            f"web env: the viewport ({width} x {height}) is smaller than the task "
            f"area {SCREEN[0]} x {SCREEN[1]}; enlarge browser.window_size"
        )
    env.cdp.call(
        "Emulation.setDeviceMetricsOverride",
        {
            "width": width,
            "height": height,
            "deviceScaleFactor": ratio,
            "mobile": False,
            "viewport": CAPTURE_CLIP,
        },
    )
