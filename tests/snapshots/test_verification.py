"""Verifying a restored branch (paper A.1) against a stand-in branch: a matching one passes, a
changed element tree or screenshot fails with both hashes named, a dead or silent branch is a
failed check rather than an exception, and a blinking caret does not change the hash.

(Real CRIU branches are verified in tests/snapshots/criu/test_criu.py.)"""

from __future__ import annotations

from typing import Any

import numpy as np

from adaroll.envs.base import Observation, TaskSpec, UIElement
from adaroll.snapshots.base import SnapshotRef
from adaroll.snapshots.verification import array_hash, stable_screenshot_hash, verify_branch

TASK = TaskSpec("web", "click-button", 0)


class _Browser:
    def __init__(self, alive: bool) -> None:
        self._alive = alive

    def alive(self) -> bool:
        return self._alive


class _Branch:
    """What verification reads of a branch: its browser, observation and screenshots. The page
    draws a caret (one pixel) unless the hiding style rule is in place."""

    def __init__(
        self, text: str = "OK", pixel: int = 0, alive: bool = True, silent: bool = False
    ) -> None:
        self.browser = _Browser(alive)
        self.text, self.pixel, self.silent = text, pixel, silent
        self.caret_hidden = False

    def observe(self) -> Observation:
        if self.silent:
            raise TimeoutError("no answer over CDP")
        return Observation((UIElement(1, "button", self.text, (0.1, 0.1, 0.5, 0.2)),), (160, 210))

    def evaluate(self, script: str) -> Any:
        self.caret_hidden = "createElement" in script
        return True

    def screenshot(self) -> np.ndarray:
        image = np.full((4, 4, 3), self.pixel, dtype=np.uint8)
        if not self.caret_hidden:
            image[0, 0] = 255
        return image


def _ref(branch: _Branch, screenshot: bool = True) -> SnapshotRef:
    shot = stable_screenshot_hash(branch) if screenshot else ""
    return SnapshotRef(
        "s1", "criu", TASK, (), branch.observe().element_tree_hash(), {"screenshot_hash": shot}
    )


def test_a_branch_in_the_saved_state_passes() -> None:
    saved = _Branch()
    check = verify_branch(_Branch(), _ref(saved), screenshots=True)
    assert check.ok and check.screenshot_match is True and check.describe() == "ok"
    assert not saved.caret_hidden  # the style rule is removed after each hash


def test_the_caret_does_not_change_the_hash() -> None:
    branch = _Branch()
    hidden = array_hash(np.zeros((4, 4, 3), dtype=np.uint8))
    assert stable_screenshot_hash(branch) == hidden != array_hash(branch.screenshot())


def test_another_tree_or_screenshot_fails_naming_both_hashes() -> None:
    ref = _ref(_Branch())
    tree = verify_branch(_Branch(text="Cancel"), ref, screenshots=True)
    assert not tree.ok and not tree.element_tree_match
    assert tree.got_tree in tree.describe() and ref.element_tree_hash in tree.describe()
    pixels = verify_branch(_Branch(pixel=9), ref, screenshots=True)
    assert not pixels.ok and pixels.screenshot_match is False and "screenshot" in pixels.describe()
    assert verify_branch(_Branch(pixel=9), ref, screenshots=False).ok  # pixels not checked
    assert verify_branch(_Branch(pixel=9), _ref(_Branch(), screenshot=False), screenshots=True).ok


def test_a_dead_or_silent_branch_is_a_failed_check() -> None:
    ref = _ref(_Branch())
    dead = verify_branch(_Branch(alive=False), ref, screenshots=True)
    assert not dead.ok and "not alive" in dead.describe()
    silent = verify_branch(_Branch(silent=True), ref, screenshots=True)
    assert not silent.ok and "no answer over CDP" in silent.describe()
