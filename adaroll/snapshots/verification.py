"""Is a restored branch the state that was saved? (paper A.1) The branch must be alive, answer,
and show the element-tree hash and, where one was recorded, the screenshot hash of save time.

Screenshots are hashed with the text caret hidden and once the frame has stopped changing
(:func:`stable_screenshot_hash`): a blinking caret or a hover not yet drawn would otherwise make
identical states differ."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any

from adaroll.snapshots.base import SnapshotError, SnapshotRef


class SnapshotVerificationError(SnapshotError):
    """A restored branch does not match the recorded state (``.check`` says how)."""

    def __init__(self, message: str, check: RestoreCheck) -> None:
        super().__init__(message)
        self.check = check


@dataclass(frozen=True)
class RestoreCheck:
    """Result of verifying a restored branch against its snapshot (paper A.1)."""

    alive: bool
    element_tree_match: bool
    screenshot_match: bool | None
    """None when no screenshot hash was recorded or screenshot checks are off."""
    expected_tree: str = ""
    got_tree: str = ""
    expected_screenshot: str = ""
    got_screenshot: str = ""
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.alive and self.element_tree_match and self.screenshot_match is not False

    def describe(self) -> str:
        if self.ok:
            return "ok"
        parts = []
        if not self.alive:
            parts.append(f"branch not alive ({self.error or 'no answer'})")
        if self.alive and not self.element_tree_match:
            parts.append(f"element tree {self.got_tree} != recorded {self.expected_tree}")
        if self.screenshot_match is False:
            parts.append(f"screenshot {self.got_screenshot} != recorded {self.expected_screenshot}")
        return "; ".join(parts)


def array_hash(array: Any) -> str:
    """Hash of a screenshot (H x W x 3 uint8): shape and pixel bytes."""
    import numpy as np

    arr = np.ascontiguousarray(array)
    h = hashlib.sha256(repr((arr.shape, str(arr.dtype))).encode())
    h.update(arr.tobytes())
    return h.hexdigest()[:16]


_HIDE_CARET_JS = """(() => { const s = document.createElement('style'); s.id = '__adaroll_nocaret';
  s.textContent = '* { caret-color: transparent !important; }';
  (document.head || document.documentElement).appendChild(s); return true; })()"""
_SHOW_CARET_JS = """(() => { const s = document.getElementById('__adaroll_nocaret');
  if (s) s.remove(); return true; })()"""


def screenshot_hash(env: Any) -> str:
    """:func:`array_hash` of the env's screenshot taken with the text caret hidden.

    Why: a focused text field's caret blinks every ~500 ms, so two screenshots of one
    unchanged state differ by a 1-pixel line half of the time. For the hash only, a style rule
    makes carets transparent and is removed right after (it lives in ``<head>``, which the
    element tree never lists)."""
    env.evaluate(_HIDE_CARET_JS)
    try:
        return array_hash(env.screenshot())
    finally:
        env.evaluate(_SHOW_CARET_JS)


def stable_screenshot_hash(
    env: Any, want: str | None = None, tries: int = 4, pause_s: float = 0.03
) -> str:
    """A screenshot hash that has stopped changing (or equals ``want``).

    Why: right after an action the compositor may not have drawn its last frame yet (e.g. a
    hover highlight after a click into a date picker): the first screenshot can differ from
    every later one. At save time the hash is taken until two consecutive ones agree; at
    verification until it equals the recorded one or stops changing."""
    last = screenshot_hash(env)
    for _ in range(tries):
        if want is not None and last == want:
            return last
        time.sleep(pause_s)
        cur = screenshot_hash(env)
        if cur == last and want is None:
            return cur
        last = cur
    return last


def verify_branch(env: Any, ref: SnapshotRef, *, screenshots: bool) -> RestoreCheck:
    """Check a restored web branch (``env.browser``, ``observe``, ``screenshot``) against ``ref``;
    ``screenshots``: also its screenshot hash when ``ref`` recorded one. A branch that dies or
    does not answer is a failed check, not an exception."""
    try:
        alive = env.browser.alive()
        tree = env.observe().element_tree_hash() if alive else ""
        want_shot = str(ref.meta.get("screenshot_hash", ""))
        shot = ""
        shot_match: bool | None = None
        if alive and want_shot and screenshots:
            shot = stable_screenshot_hash(env, want_shot)
            shot_match = shot == want_shot
    except Exception as exc:  # noqa: BLE001 - a dead/unresponsive branch is a result
        return RestoreCheck(False, False, None, ref.element_tree_hash, error=str(exc))
    return RestoreCheck(
        alive,
        tree == ref.element_tree_hash,
        shot_match,
        ref.element_tree_hash,
        tree,
        want_shot,
        shot,
    )
