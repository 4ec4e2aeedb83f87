"""Whole-app snapshots that must not be used, for real: a snapshot whose databases do not come
back as dumped (a state checksum taken at dump, checked after every restore) is refused and the
checkpoint's prefix is replayed instead - counted in ``Cost.restore_fallbacks``; the browser-only
``criu`` backend refuses an apps env outright; the replay backend keeps working.

Under CI (``CI=true``) missing CRIU/Chromium/root FAIL these tests (``tests.components``)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from adaroll.envs.base import TaskSpec
from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Job
from adaroll.snapshots.base import SNAPSHOT_BACKENDS, SnapshotError
from adaroll.snapshots.fallback import restore_verified
from adaroll.snapshots.verification import SnapshotVerificationError
from tests.components import require_criu_stack
from tests.fakes import TapPolicy

pytestmark = [pytest.mark.criu, pytest.mark.web]

TASK = TaskSpec("apps", "tracker.assign", 2)
STEP = 2  # the checkpoint before the expert's third action


def damage_state_copy(ref) -> None:
    """Change a dumped database in place, keeping its size and modification time (the image
    manifest's check passes; only the state checksum can tell)."""
    db = Path(ref.meta["image_dir"], "state", "app", "tracker.db")
    st = db.stat()
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(
            "UPDATE issues SET priority = 'Low' WHERE priority != 'Low' AND id = (SELECT MIN(id) FROM issues WHERE priority != 'Low')"
        )
    conn.close()
    os.utime(db, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert db.stat().st_size == st.st_size


@pytest.fixture(scope="module")
def rig():
    """(collector, backend, checkpoint) over app-criu with the expert's checkpoints of TASK."""
    require_criu_stack()
    from adaroll.envs.apps import AppsEnv, AppsSuite
    from adaroll.experts import collect_experts
    from adaroll.snapshots.criu.apps import AppCriuSnapshots

    store = collect_experts(AppsEnv, AppsSuite(), [TASK], progress=False).store
    backend = AppCriuSnapshots(max_branches=4)
    collector = Collector(TapPolicy(), AppsEnv, store, backend, history_window=2)
    try:
        yield collector, backend, store.for_task(TASK.id)[STEP]
    finally:
        collector.close()
        backend.close()


def test_a_snapshot_whose_databases_changed_is_refused_and_replayed(rig):
    collector, backend, checkpoint = rig
    from adaroll.envs.apps import AppsEnv

    collector.cache.forget(checkpoint.id)
    ref = collector.cache.ref(checkpoint)
    damage_state_copy(ref)
    with pytest.raises(SnapshotVerificationError, match="database state .* at dump"):
        backend.restore(ref)
    restored = restore_verified(backend, ref, AppsEnv)
    try:
        assert "database state" in restored.fallback
        assert restored.replayed_steps == len(checkpoint.history)
        assert restored.env.state_checksum() != ""  # a fresh env that replayed the prefix
        assert restored.env.observe().element_tree_hash() == ref.element_tree_hash
    finally:
        restored.env.close()


def test_a_suffix_group_counts_the_fallback(rig):
    collector, _, checkpoint = rig
    collector.cache.forget(checkpoint.id)
    ref = collector.cache.ref(checkpoint)
    damage_state_copy(ref)
    (group,) = collector.collect([Job("suffix", TASK, 2, checkpoint_id=checkpoint.id)], seed=3)
    c = group.cost
    assert len(group.rewards) == 2 and c.restores == 2 and c.faults == 0
    assert c.restore_fallbacks == 1 and c.replayed_steps == len(checkpoint.history)


def test_the_browser_only_backend_refuses_an_apps_env_and_replay_serves_it():
    require_criu_stack()
    from adaroll.envs.apps import AppsEnv, AppsSuite

    env = AppsEnv()
    criu = SNAPSHOT_BACKENDS.get("criu")()
    try:
        env.reset(options={"task": TASK})
        with pytest.raises(SnapshotError, match="apps: 'app-criu'"):
            criu.save(env, ())
        action = AppsSuite().expert_action(env)
        env.step(action)
        replay = SNAPSHOT_BACKENDS.get("replay")(make_env=AppsEnv)
        ref = replay.save(env, (action,))
        branch = replay.restore(ref)
        try:
            assert branch.observe().element_tree_hash() == ref.element_tree_hash
        finally:
            branch.close()
    finally:
        env.close()
        criu.close()
