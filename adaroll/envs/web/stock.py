"""Replay AdaRoll actions in stock MiniWoB++: the ``miniwob`` package's own Selenium env.

The reference for fidelity: an action sequence that solves a task in :class:`WebEnv` should
solve it in the environment the MiniWoB++ authors ship (``gymnasium.make("miniwob/<task>-v1")``)
and vice versa. Used by the fidelity test (``tests/envs/web/test_stock_fidelity.py``).

Actions map one to one, in CSS pixels of the 160 x 210 task area:

* ``tap`` -> ``CLICK_COORDS``; ``double_tap`` -> ``DBLCLICK_COORDS``; ``hover`` ->
  ``MOVE_COORDS``;
* ``type`` -> ``TYPE_TEXT``; ``key(k)`` -> ``PRESS_KEY`` of the matching WebDriver key, a chord
  ``ctrl+a`` -> ``C-a`` (the package writes modifiers as ``C-``, ``A-``, ``S-``, ``M-``);
* ``swipe(up)``/``swipe(down)`` -> ``SCROLL_DOWN_COORDS``/``SCROLL_UP_COORDS`` at the task
  area's centre, by WebEnv's scroll distance (half the task height);
* anything else (``long_press``, drags, ``wait``) -> ``NONE``.

Selenium needs Debian's chromedriver (``MINIWOB_CHROMEDRIVER``, default
``/usr/bin/chromedriver``) and is told not to send usage statistics (``SE_AVOID_STATS``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from adaroll.actions import MODIFIERS, Action, ActionKind

WEBDRIVER_KEYS = {
    "enter": "<Enter>",
    "backspace": "<Backspace>",
    "tab": "<Tab>",
    "escape": "<Escape>",
    "delete": "<Delete>",
    "space": "<Space>",
    "up": "<ArrowUp>",
    "down": "<ArrowDown>",
    "left": "<ArrowLeft>",
    "right": "<ArrowRight>",
    "page_up": "<PageUp>",
    "page_down": "<PageDown>",
}
"""AdaRoll key name -> the ``miniwob`` package's key name."""
_MODIFIER_PREFIX = {"ctrl": "C-", "alt": "A-", "shift": "S-", "meta": "M-"}
assert set(_MODIFIER_PREFIX) == set(MODIFIERS)
SCROLL_PX = 105
"""WebEnv's ``swipe(up/down)`` distance: half the 210 px task height."""


def stock_key(key: str) -> str:
    """The ``miniwob`` package's name of a key or chord (``ctrl+a`` -> ``C-a``)."""
    *mods, base = key.split("+")
    name = WEBDRIVER_KEYS.get(base, base)
    return "".join(_MODIFIER_PREFIX[m] for m in mods) + name


def configure_stock_browser() -> None:
    """Point the ``miniwob`` package's Selenium env at Debian's Chromium and chromedriver, with
    Selenium's usage statistics off. A ``TMPDIR`` chromedriver cannot use is refused here:
    chromedriver makes the browser profile there, and fails with an opaque "cannot create temp
    dir for user data dir" otherwise."""
    from adaroll.envs.web.browser import BrowserUnavailableError, find_chromium

    tmp = os.environ.get("TMPDIR")
    if tmp and not (os.path.isdir(tmp) and os.access(tmp, os.W_OK | os.X_OK)):
        raise BrowserUnavailableError(
            f"TMPDIR={tmp} is not a writable directory; chromedriver "
            "makes the stock env's browser profile there"
        )
    os.environ.setdefault("SE_AVOID_STATS", "true")  # Selenium must not phone home
    os.environ.setdefault("MINIWOB_CHROME_BINARY", find_chromium())
    os.environ.setdefault("MINIWOB_CHROMEDRIVER", "/usr/bin/chromedriver")


def make_stock_env(task: str, keys: Sequence[str] = (), *, wait_ms: float = 0.0) -> Any:
    """``gymnasium.make("miniwob/<task>-v1")`` with every action type and the default keys plus
    ``keys`` (AdaRoll names), driven through Debian's Chromium and chromedriver.

    ``wait_ms``: the stock env's own pause after every action. It does not wait for the page's
    timers as WebEnv's settle policy does, so a page that reacts after a delay (click-menu
    opens a submenu 300 ms after a hover) needs one for a replay to see what WebEnv saw."""
    configure_stock_browser()
    import gymnasium
    import miniwob  # noqa: F401  (registers the gymnasium envs)
    from miniwob.action import ActionSpaceConfig
    from miniwob.constants import DEFAULT_ALLOWED_KEYS

    cfg = ActionSpaceConfig.get_preset("all_supported")
    extra = [stock_key(k) for k in ("escape", *keys)]
    cfg.allowed_keys = tuple(DEFAULT_ALLOWED_KEYS) + tuple(
        k for k in extra if k not in DEFAULT_ALLOWED_KEYS
    )
    cfg.scroll_amount = SCROLL_PX
    return gymnasium.make(f"miniwob/{task}-v1", action_space_config=cfg, wait_ms=wait_ms)


def stock_action(env: Any, action: Action) -> Any:
    """The stock env's action for an AdaRoll action (see the module docstring)."""
    import numpy as np
    from miniwob.action import ActionTypes

    u = env.unwrapped
    cfg = u.action_space_config
    point = {
        ActionKind.TAP: ActionTypes.CLICK_COORDS,
        ActionKind.DOUBLE_TAP: ActionTypes.DBLCLICK_COORDS,
        ActionKind.HOVER: ActionTypes.MOVE_COORDS,
    }
    if action.kind in point:
        assert action.x is not None and action.y is not None
        coords = np.array([action.x * cfg.screen_width, action.y * cfg.screen_height])
        return u.create_action(point[action.kind], coords=coords)
    if action.kind is ActionKind.TYPE:
        return u.create_action(ActionTypes.TYPE_TEXT, text=action.text)
    if action.kind is ActionKind.KEY:
        assert action.key is not None
        name = stock_key(action.key)
        keys = list(cfg.allowed_keys)
        if name not in keys:
            raise ValueError(
                f"key {action.key!r} ({name}) is not in the stock env's keys; pass it "
                "to make_stock_env(keys=...)"
            )
        return u.create_action(ActionTypes.PRESS_KEY, key=keys.index(name))
    if action.kind is ActionKind.SWIPE and action.direction in ("up", "down"):
        kind = (
            ActionTypes.SCROLL_DOWN_COORDS
            if action.direction == "up"
            else ActionTypes.SCROLL_UP_COORDS
        )
        return u.create_action(kind, coords=np.array([cfg.screen_width / 2, cfg.screen_height / 2]))
    return u.create_action(ActionTypes.NONE)


def replay_in_stock(env: Any, seed: int, actions: Sequence[Action]) -> float:
    """Reset the stock ``env`` to ``seed``, replay ``actions`` (stopping when the episode ends);
    the last reward (> 0: the task accepted the episode)."""
    env.reset(seed=seed, options={"record_screenshots": False})
    reward = 0.0
    for action in actions:
        _, reward, terminated, truncated, _ = env.step(stock_action(env, action))
        if terminated or truncated:
            break
    return float(reward)
