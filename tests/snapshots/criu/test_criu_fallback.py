"""Snapshot verification with replay fallback, for real (issue 10): a Suffix group restored
from a CRIU snapshot whose recorded hash was tampered with, whose image file was damaged in
place, or whose restored browser died, still comes back complete - the bad restore is replaced
by replaying the checkpoint's prefix, counted in ``Cost.restore_fallbacks``, and the snapshot
is rebuilt so the group's other restores use a good image again.

Under CI (``CI=true``) missing CRIU/Chromium/root FAIL these tests (``tests.components.require_criu_stack``)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from adaroll.envs.base import TaskSpec
from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Job
from tests.components import require_criu_stack
from tests.fakes import TapPolicy
from tests.processes import kill_and_wait

pytestmark = [pytest.mark.criu, pytest.mark.web]

TASK = TaskSpec("web", "login-user", 3)
STEP = 2  # the checkpoint after two expert steps (username typed)


@pytest.fixture(scope="module")
def rig():
    """(collector, checkpoint) over a CRIU backend with the expert's checkpoints of TASK."""
    require_criu_stack()
    from adaroll.envs.base import SUITES
    from adaroll.envs.web import WebEnv
    from adaroll.experts import collect_experts
    from adaroll.snapshots.criu import CriuSnapshots

    store = collect_experts(WebEnv, SUITES.get("web")(), [TASK], progress=False).store
    backend = CriuSnapshots(max_branches=4, verify_screenshot=True)
    collector = Collector(TapPolicy(), WebEnv, store, backend, history_window=2)
    try:
        yield collector, store.for_task(TASK.id)[STEP]
    finally:
        collector.close()
        backend.close()


def _collect_after(collector, checkpoint, damage) -> tuple:
    """Build the checkpoint's snapshot, ``damage`` it, collect a 2-sample Suffix group."""
    collector.cache.forget(checkpoint.id)
    ref = collector.cache.ref(checkpoint)
    setup_before = collector.builds.overhead_steps
    damage(collector, ref)
    (group,) = collector.collect([Job("suffix", TASK, 2, checkpoint_id=checkpoint.id)], seed=4)
    rebuilt = collector.builds.overhead_steps - setup_before
    return group, rebuilt


def _assert_fell_back_once(group, rebuilt: int, checkpoint) -> None:
    c = group.cost
    assert len(group.decisions) == len(group.rewards) == 2
    assert c.restores == 2 and c.restore_fallbacks == 1 and c.faults == 0
    assert c.replayed_steps == len(checkpoint.history)  # the fallback's replay
    assert rebuilt == len(checkpoint.history)  # the snapshot was rebuilt for the 2nd restore


def test_a_tampered_recorded_hash_falls_back_to_replay(rig):
    collector, checkpoint = rig

    def tamper(_, ref):
        ref.meta["screenshot_hash"] = "0" * 16

    group, rebuilt = _collect_after(collector, checkpoint, tamper)
    _assert_fell_back_once(group, rebuilt, checkpoint)


def test_an_image_damaged_in_place_is_named_and_replaced_by_replay(rig, caplog):
    collector, checkpoint = rig
    damaged: list[Path] = []

    def damage(_, ref):
        pages = max(
            Path(ref.meta["image_dir"], "img").glob("pages-*.img"), key=lambda p: p.stat().st_size
        )
        with open(pages, "r+b") as f:  # same size, different bytes
            f.seek(pages.stat().st_size // 2)
            f.write(b"\xa5" * 4096)
        damaged.append(pages)

    with caplog.at_level(logging.WARNING, logger="adaroll"):
        group, rebuilt = _collect_after(collector, checkpoint, damage)
    _assert_fell_back_once(group, rebuilt, checkpoint)
    assert f"image file {damaged[0]} is corrupt" in caplog.text


def test_a_restored_browser_that_dies_is_replaced_by_replay(rig, monkeypatch):
    collector, checkpoint = rig
    backend = collector.snapshots
    restore_branch = backend._restore
    killed: list[int] = []

    def restore_then_die(ref, image):  # the first branch dies before it is verified
        env = restore_branch(ref, image)
        if not killed:
            kill_and_wait(env.browser.pid)  # dead before the verification asks it
            killed.append(env.browser.pid)
        return env

    monkeypatch.setattr(backend, "_restore", restore_then_die)
    group, rebuilt = _collect_after(collector, checkpoint, lambda *_: None)
    assert killed
    c = group.cost
    assert len(group.decisions) == 2 and c.restore_fallbacks == 1 and c.faults == 0
    assert rebuilt == len(checkpoint.history)
    assert backend.live_branches() == 0
