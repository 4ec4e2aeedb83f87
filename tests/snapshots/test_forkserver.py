"""Fork-server snapshots: exact restores, independent branches, no process left behind (issue 9.7)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from adaroll.actions import Action
from adaroll.envs import get_suite
from adaroll.envs.base import InvalidActionError, TaskSpec, run_expert
from adaroll.envs.mobile import MobileEnv
from adaroll.snapshots.base import SNAPSHOT_BACKENDS, SnapshotError
from adaroll.snapshots.forkserver import ForkServerEnv, ForkServerSnapshots

TASK = TaskSpec("mobile", "shop.buy", 4)
ROOT = Path(__file__).resolve().parents[2]


def _stat(pid: int) -> list[str] | None:
    """``[state, ppid, pgrp, ...]`` of a live (non-zombie) process, else None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None if fields[0] in "ZX" else fields


def group_members(pgid: int) -> list[int]:
    """Pids of every process (zombies included) in process group ``pgid``."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if int(fields[2]) == pgid:
                out.append(int(entry))
    return out


def wait_gone(pids: list[int], timeout: float = 5.0) -> list[int]:
    """Pids still present in /proc (zombies count as present) after up to ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        left = [p for p in pids if Path(f"/proc/{p}").exists()]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.01)


@pytest.fixture(scope="module")
def expert() -> list[Action]:
    actions, ok = run_expert(MobileEnv(), get_suite("mobile"), TASK)
    assert ok and len(actions) > 10
    return actions


@pytest.fixture
def snaps() -> Iterator[ForkServerSnapshots]:
    backend = ForkServerSnapshots(env_name="mobile")
    yield backend
    pgid = backend.process_group
    backend.close()
    if pgid is not None:
        assert wait_gone(group_members(pgid)) == []


def mid_env(actions: list[Action]) -> MobileEnv:
    env = MobileEnv()
    env.reset(options={"task": TASK})
    for a in actions[:8]:
        env.step(a)
    return env


def test_registered_and_built_from_make_env() -> None:
    backend = SNAPSHOT_BACKENDS.get("forkserver")(make_env=MobileEnv)
    assert isinstance(backend, ForkServerSnapshots)
    backend.close()
    with pytest.raises(KeyError, match="mobile"):  # unknown env names list the valid ones
        ForkServerSnapshots(env_name="no-such-env")


@pytest.mark.parametrize("source", ["in-process", "worker"])
def test_restore_is_exact(source: str, snaps: ForkServerSnapshots, expert: list[Action]) -> None:
    env = mid_env(expert)
    if source == "in-process":  # what `env.snapshot_backend: forkserver` gives: replay once
        ref = snaps.save(env, tuple(expert[:8]))
        assert snaps.replayed_steps_on_save == 8
    else:  # the env already runs in a worker: save forks it, nothing is replayed
        live = snaps.make_env()
        live.reset(options={"task": TASK})
        for a in expert[:8]:
            live.step(a)
        ref = snaps.save(live, tuple(expert[:8]))
        assert snaps.replayed_steps_on_save == 0
        live.step(Action.press("home"))  # the live env moves on; the snapshot does not
    assert ref.backend == "forkserver" and ref.task == TASK
    assert ref.element_tree_hash == env.observe().element_tree_hash()
    branch = snaps.restore(ref)
    assert isinstance(branch, ForkServerEnv)
    assert (branch.task, branch.steps_taken, branch.max_steps) == (TASK, 8, env.max_steps)
    assert branch.instruction == env.instruction
    assert branch.observe() == env.observe()
    for a in expert[8:]:
        out_local, out_branch = env.step(a), branch.step(a)
        assert out_local[0] == out_branch[0] and out_local[1:] == out_branch[1:]
        assert branch.steps_taken == env.steps_taken
    assert out_branch[2] and out_branch[4]["success"]
    branch.close()


def test_four_branches_do_not_interfere(snaps: ForkServerSnapshots, expert: list[Action]) -> None:
    env = mid_env(expert)
    reference = env.observe()
    ref = snaps.save(env, tuple(expert[:8]))
    moves = [Action.press("back"), Action.press("home"), Action.swipe("up"), expert[8]]
    branches = [snaps.restore(ref) for _ in moves]
    assert len({b.pid for b in branches}) == 4
    after = [b.step(m)[0] for b, m in zip(branches, moves, strict=True)]
    assert len({o.element_tree_hash() for o in after}) >= 3  # they went different ways
    for b, o in zip(branches, after, strict=True):
        assert b.observe() == o and b.steps_taken == 9
    fresh = snaps.restore(ref)  # the snapshot itself is unchanged
    assert fresh.observe() == reference and fresh.steps_taken == 8
    assert fresh.step(expert[8])[0] == after[3]
    for b in [*branches, fresh]:
        b.close()
    assert wait_gone([b.pid for b in [*branches, fresh]]) == []


def test_threads_restoring_from_one_zygote_get_their_own_exact_branches(
    snaps: ForkServerSnapshots, expert: list[Action]
) -> None:
    """The collector restores from several threads; each restore is one command and one
    reply on the zygote's pipe, so concurrent restores neither deadlock nor swap branches."""
    env = mid_env(expert)
    reference = env.observe()
    ref = snaps.save(env, tuple(expert[:8]))
    pids: list[int] = []
    errors: list[BaseException] = []

    def restore_many() -> None:
        try:
            for _ in range(15):
                branch = snaps.restore(ref)
                assert branch.observe() == reference and branch.steps_taken == 8
                pids.append(branch.pid)
                branch.close()
        except BaseException as exc:  # re-raised in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=restore_many, daemon=True) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "restores deadlocked"
    assert errors == []
    assert len(set(pids)) == 45


def test_release_and_close_leave_no_process(expert: list[Action]) -> None:
    snaps = ForkServerSnapshots(env_name="mobile")
    ref = snaps.save(mid_env(expert), tuple(expert[:8]))
    branch = snaps.restore(ref)
    zygote = ref.meta["zygote_pid"]
    pgid = snaps.process_group
    assert pgid is not None and _stat(zygote) is not None
    assert set(snaps.pids()) <= set(group_members(pgid))
    snaps.release(ref)
    assert wait_gone([zygote]) == []  # killed and reaped
    assert not snaps.holds(ref)
    with pytest.raises(SnapshotError, match="not held"):
        snaps.restore(ref)
    assert branch.step(expert[8])[2] is False  # a restored branch outlives its zygote
    orphan = branch.pid
    members = group_members(pgid)
    assert orphan in members
    snaps.close()
    assert wait_gone(members) == []  # server, replay worker, orphaned branch: all reaped
    assert group_members(pgid) == []
    with pytest.raises(SnapshotError):
        branch.step(expert[9])
    # The server (the group leader, our only direct child) was reaped too: neither running nor a
    # zombie, since either would still be waitable.
    with pytest.raises(ChildProcessError):
        os.waitpid(pgid, os.WNOHANG)


def test_crashed_branch_raises_clear_error(
    snaps: ForkServerSnapshots, expert: list[Action]
) -> None:
    ref = snaps.save(mid_env(expert), tuple(expert[:8]))
    branch = snaps.restore(ref)
    os.kill(branch.pid, signal.SIGKILL)
    with pytest.raises(SnapshotError, match=rf"branch \(pid {branch.pid}\) died"):
        branch.step(expert[8])
    with pytest.raises(SnapshotError, match="closed or dead"):
        branch.observe()
    branch.close()  # closing a dead branch is fine
    other = snaps.restore(ref)  # the snapshot is unaffected
    assert other.step(expert[8])[0] is not None
    os.kill(ref.meta["zygote_pid"], signal.SIGKILL)
    with pytest.raises(SnapshotError, match="zygote"):
        snaps.restore(ref)


def test_env_errors_cross_the_pipe() -> None:
    snaps = ForkServerSnapshots(env_factory="tests.fakes:LineEnv")
    env = snaps.make_env()
    with pytest.raises(RuntimeError, match="before reset"):
        _ = env.steps_taken
    env.reset(options={"task": TaskSpec("line", "walk", 0)})
    with pytest.raises(InvalidActionError, match="only takes taps"):  # the env's own exception
        env.step(Action.swipe("up"))
    assert env.steps_taken == 0  # and the process lives on
    env.close()
    snaps.close()


def test_line_env_without_state_copy_by_import_path() -> None:
    snaps = ForkServerSnapshots(
        env_factory="tests.fakes:LineEnv", env_options={"length": 4, "max_steps": 9}
    )
    task = TaskSpec("line", "walk", 3)
    env = snaps.make_env()
    obs, info = env.reset(options={"task": task})
    assert info["instruction"] == "walk to the end" and env.max_steps == 9
    go = next(e for e in obs.elements if e.text == "go")
    env.step(Action.tap(*go.center))
    ref = snaps.save(env, (Action.tap(*go.center),))
    assert snaps.replayed_steps_on_save == 0
    a, b = snaps.restore(ref), snaps.restore(ref)
    stop = next(e for e in a.observe().elements if e.text == "stop")
    a.step(Action.tap(*stop.center))  # stays, one step used
    for _ in range(3):
        go = next(e for e in b.observe().elements if e.text == "go")
        _, reward, terminated, _, info = b.step(Action.tap(*go.center))
    assert terminated and reward == 1.0 and info["success"]
    assert a.steps_taken == 2 and b.steps_taken == 4 and env.steps_taken == 1
    pgid = snaps.process_group
    snaps.close()
    assert pgid is not None and wait_gone(group_members(pgid)) == []


def test_nothing_survives_a_crashed_parent(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import os
        from adaroll.actions import Action
        from adaroll.envs.base import TaskSpec
        from adaroll.snapshots.forkserver import ForkServerSnapshots
        snaps = ForkServerSnapshots(env_name="mobile")
        env = snaps.make_env()
        env.reset(options={"task": TaskSpec("mobile", "shop.buy", 4)})
        ref = snaps.save(env, ())
        branches = [snaps.restore(ref) for _ in range(2)]
        print(snaps.process_group, *snaps.pids(), flush=True)
        os.kill(os.getpid(), 9)
    """)
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    pgid, *pids = (int(v) for v in proc.stdout.split())
    assert len(pids) == 5  # server, worker, zygote, 2 branches
    deadline = time.monotonic() + 5
    while any(_stat(p) is not None for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert [p for p in pids if _stat(p) is not None] == []  # none runs (zombies are init's)
