"""The ``criu`` snapshot backend, for real: Chromium + MiniWoB++ + CRIU (docs/architecture.md, "Platform notes").

One mid-episode snapshot of a multi-step task (login-user after two expert steps: username
typed, password not yet) is restored into four concurrent branches; each must continue on its
own and finish the task with the expert. Also: replay reaches the same element tree as restore;
damaged images fail with the file's name; the pool cap and reference counts hold; nothing
(process, mount, directory, zombie) is left behind.

Under CI (``CI=true``) missing CRIU/Chromium/root FAIL these tests; elsewhere they are skipped
with the install hint (``scripts/install_system.sh``, ``scripts/install_criu.sh``).
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from adaroll.actions import Action
from adaroll.envs.base import SUITES, TaskSpec
from adaroll.snapshots.base import SNAPSHOT_BACKENDS, SnapshotError
from adaroll.snapshots.criu.tool import CriuUnavailableError, check_criu, find_criu
from tests.components import require, require_criu_stack

pytestmark = [pytest.mark.criu, pytest.mark.web]

TASK = TaskSpec("web", "login-user", 3)
PREFIX_STEPS = 2
N_BRANCHES = 4


def _processes_mentioning(text: str) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    out.append(int(entry.name))
            except OSError:
                continue
    return out


def _zombie_children() -> list[int]:
    pids = []
    for task in Path("/proc/self/task").iterdir():
        try:
            pids += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    zombies = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state == "Z":
            zombies.append(pid)
    return zombies


def _gone(pid: int) -> bool:
    """True when ``pid`` has exited. Orphans of a crashed controller are re-parented to the
    nearest child subreaper - this test process, once a backend made it one - so zombies that
    are our children are reaped here."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state in ("Z", "X")


def _finish_with_expert(env, suite) -> tuple[bool, int]:
    steps = 0
    while True:
        action = suite.expert_action(env)
        _, _, terminated, truncated, info = env.step(action)
        steps += 1
        if terminated or truncated:
            return bool(info["success"]), steps


@pytest.fixture(scope="module")
def threads_before_backend() -> set[threading.Thread]:
    """The Python threads alive before this module's backend exists."""
    return set(threading.enumerate())


@pytest.fixture(scope="module")
def stack(threads_before_backend):
    """(backend, original env, suite, ref, prefix): a snapshot taken mid-episode."""
    require_criu_stack()
    import adaroll.envs.web  # noqa: F401  (registers the env and suite)
    from adaroll.envs.web import WebEnv
    from adaroll.snapshots.criu import CriuSnapshots

    suite = SUITES.get("web")()
    backend = CriuSnapshots(max_branches=6, verify_screenshot=True)
    env = WebEnv()
    try:
        env.reset(options={"task": TASK})
        prefix: list[Action] = []
        for _ in range(PREFIX_STEPS):
            action = suite.expert_action(env)
            prefix.append(action)
            env.step(action)
        ref = backend.save(env, tuple(prefix))
        yield backend, env, suite, ref, tuple(prefix)
    finally:
        env.close()
        backend.close()


def test_registered_and_ref_meta(stack):
    backend, env, _, ref, prefix = stack
    assert "criu" in SNAPSHOT_BACKENDS
    assert ref.backend == "criu" and ref.task == TASK and ref.prefix == prefix
    assert ref.element_tree_hash == env.observe().element_tree_hash()
    assert ref.meta["screenshot_hash"] and ref.meta["image_bytes"] > 1_000_000
    assert Path(ref.meta["image_dir"], "img", "inventory.img").is_file()
    assert backend.holds(ref)


def test_concurrent_branches_are_independent_and_finish(stack):
    backend, env, suite, ref, _ = stack
    with ThreadPoolExecutor(N_BRANCHES) as pool:
        branches = list(pool.map(lambda _: backend.restore(ref), range(N_BRANCHES)))
    try:
        assert backend.live_branches() == N_BRANCHES
        pids = {b.browser.pid for b in branches}
        assert len(pids) == N_BRANCHES and env.browser.pid not in pids
        for b in branches:
            check = b.restore_info["check"]
            assert check.ok and check.screenshot_match, check.describe()
            assert b.task == TASK and b.steps_taken == PREFIX_STEPS
            assert b.instruction == env.instruction
            assert b.observe().element_tree_hash() == ref.element_tree_hash
        # change one branch: the others (and the original) keep the snapshot state
        branches[0].step(suite.expert_action(branches[0]))  # focuses the password field
        branches[0].evaluate("document.querySelector('#username').value = ''; 1")
        changed = branches[0].observe().element_tree_hash()
        assert changed != ref.element_tree_hash
        for b in branches[1:]:
            assert b.observe().element_tree_hash() == ref.element_tree_hash
            assert b.steps_taken == PREFIX_STEPS
        assert env.observe().element_tree_hash() == ref.element_tree_hash
        # every branch finishes the task with the expert (branch 0 from its changed state: the
        # expert types the username again)
        for b in branches:
            success, steps = _finish_with_expert(b, suite)
            assert success and steps >= 1
    finally:
        for b in branches:
            b.close()
    assert backend.live_branches() == 0
    for b in branches:
        assert not b.browser.alive()
    assert _zombie_children() == []
    # the original episode is untouched and still finishes
    assert env.steps_taken == PREFIX_STEPS


def test_a_branch_can_be_snapshotted_again(stack):
    """Suffix rollouts branch from branches: a restored browser is itself dumpable."""
    backend, _, suite, ref, prefix = stack
    branch = backend.restore(ref)
    try:
        action = suite.expert_action(branch)
        branch.step(action)
        ref2 = backend.save(branch, (*prefix, action))
        grandchild = backend.restore(ref2)
        try:
            assert grandchild.restore_info["check"].ok
            assert grandchild.steps_taken == len(prefix) + 1
            assert grandchild.observe().element_tree_hash() == ref2.element_tree_hash
            assert _finish_with_expert(grandchild, suite)[0]
        finally:
            grandchild.close()
            backend.release(ref2)
    finally:
        branch.close()
    assert not Path(ref2.meta["image_dir"]).exists()


def test_replay_reaches_the_restored_state(stack):
    backend, env, _, ref, _ = stack
    from adaroll.envs.web import WebEnv

    replay = SNAPSHOT_BACKENDS.get("replay")(make_env=lambda: WebEnv(env.config))
    replayed = replay.restore(ref)
    restored = backend.restore(ref)
    try:
        tree = replayed.observe().element_tree_hash()
        assert tree == ref.element_tree_hash
        assert restored.observe().element_tree_hash() == tree
        assert replayed.steps_taken == restored.steps_taken == len(ref.prefix)
    finally:
        replayed.close()
        restored.close()


def test_a_serialised_ref_restores_in_another_backend(stack):
    """Checkpoints are stored as dicts; another backend instance restores from the image in
    place and leaves it to its owner."""
    backend, _, _, ref, _ = stack
    from adaroll.snapshots.base import SnapshotRef
    from adaroll.snapshots.criu import CriuSnapshots

    loaded = SnapshotRef.from_dict(ref.to_dict())
    other = CriuSnapshots()
    try:
        branch = other.restore(loaded)
        assert branch.restore_info["check"].ok and branch.steps_taken == len(ref.prefix)
        branch.close()
    finally:
        other.close()
    assert Path(ref.meta["image_dir"], "img", "inventory.img").is_file() and backend.holds(ref)


def test_by_default_only_a_screenshot_env_gets_its_pixels_checked(stack):
    """``verify_screenshot`` unset: an element-list env's snapshot records no screenshot hash
    (its restore checks liveness and the element tree), a screenshot env's records one."""
    _, env, _, _, prefix = stack
    from adaroll.envs.web import WebEnv
    from adaroll.snapshots.criu import CriuSnapshots

    default = CriuSnapshots(max_branches=2)
    shot_env = WebEnv(screenshot=True)
    try:
        plain = default.save(env, prefix)
        assert plain.meta["screenshot_hash"] == ""
        branch = default.restore(plain)
        check = branch.restore_info["check"]
        assert check.ok and check.element_tree_match and check.screenshot_match is None
        branch.close()
        shot_env.reset(options={"task": TASK})
        assert default.save(shot_env, ()).meta["screenshot_hash"]
    finally:
        shot_env.close()
        default.close()


def test_damaged_images_fail_with_the_file_name(stack):
    backend, env, _, _, prefix = stack
    ref = backend.save(env, prefix)
    img = Path(ref.meta["image_dir"], "img")
    try:
        pages = max(img.glob("pages-*.img"), key=lambda p: p.stat().st_size)
        st = pages.stat()
        with open(pages, "r+b") as f:  # truncated
            f.truncate(st.st_size // 2)
        with pytest.raises(SnapshotError, match=rf"{pages} is corrupt \(size"):
            backend.restore(ref)
        with open(pages, "r+b") as f:  # back to its size, so only the next damage shows
            f.truncate(st.st_size)
        with pytest.raises(SnapshotError, match=rf"{pages} is corrupt \(modified after the dump"):
            backend.restore(ref)
        os.utime(pages, ns=(st.st_atime_ns, st.st_mtime_ns))
        core = img / "pstree.img"
        core.unlink()  # missing
        with pytest.raises(SnapshotError, match=rf"{core}.*missing"):
            backend.restore(ref)
    finally:
        backend.release(ref)
    assert not img.exists()  # released and unused: deleted
    assert backend.live_branches() == 0


def test_same_size_garbage_is_reported_by_criu(stack):
    backend, env, _, _, prefix = stack
    ref = backend.save(env, prefix)
    img = Path(ref.meta["image_dir"], "img")
    try:
        inventory = img / "inventory.img"
        st = inventory.stat()
        inventory.write_bytes(b"\xff" * st.st_size)
        with pytest.raises(SnapshotError, match=rf"{inventory} is corrupt \(modified after"):
            backend.restore(ref)
        # with its timestamp forged back only criu itself can tell
        os.utime(inventory, ns=(st.st_atime_ns, st.st_mtime_ns))
        with pytest.raises(SnapshotError, match="criu restore of snapshot .* failed"):
            backend.restore(ref)
    finally:
        backend.release(ref)
    assert backend.live_branches() == 0 and _zombie_children() == []


def test_pool_cap_and_reference_counts(stack):
    backend, env, _, _, prefix = stack
    from adaroll.snapshots.criu import CriuSnapshots

    small = CriuSnapshots(max_branches=1, pool_timeout_s=0.2)
    try:
        ref = small.save(env, prefix)
        image_dir = Path(ref.meta["image_dir"])
        first = small.restore(ref)
        with pytest.raises(SnapshotError, match="pool full"):
            small.restore(ref)
        small.retain(ref)
        small.release(ref)
        small.release(ref)  # no checkpoint needs it any more ...
        assert image_dir.exists()  # ... but the live branch still does
        assert first.observe().element_tree_hash() == ref.element_tree_hash
        first.close()
        assert not image_dir.exists()
        with pytest.raises(SnapshotError, match="released"):
            small.restore(ref)
    finally:
        small.close()
    assert not small.dir.exists()


def test_close_leaves_nothing_behind(stack, threads_before_backend):
    backend, env, _, ref, _ = stack
    branches = [backend.restore(ref) for _ in range(2)]
    state_dir = env.browser.state_dir
    host_dir = str(Path(state_dir).parent)
    pids = [b.browser.pid for b in branches]
    # the original env closes first: live branches keep working (their mount point is pinned)
    env.close()
    assert Path(state_dir).is_dir()
    for b in branches:
        b.step(Action.tap(0.5, 0.5))
        assert b.browser.alive()
    # The backend works in its callers' threads: live branches hold no thread of their own.
    assert set(threading.enumerate()) - threads_before_backend == set()
    backend.close()  # kills the branches, deletes images and the pinned directory
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists()
    assert _processes_mentioning(state_dir) == []
    assert _processes_mentioning(str(backend.dir)) == []
    assert not any(state_dir in line for line in Path("/proc/self/mounts").read_text().splitlines())
    assert not backend.dir.exists() and not Path(host_dir).exists()
    assert _zombie_children() == []
    assert set(threading.enumerate()) - threads_before_backend == set()  # nor does close start any


_CRASHING_CONTROLLER = """
import json, os, signal
import adaroll.envs.web
from adaroll.envs.base import TaskSpec
from adaroll.envs.web import WebEnv
from adaroll.snapshots.criu import CriuSnapshots
backend = CriuSnapshots()
env = WebEnv()
env.reset(options={"task": TaskSpec("web", "login-user", 1)})
ref = backend.save(env, ())
branches = [backend.restore(ref) for _ in range(2)]
print(json.dumps({"pids": [env.browser.pid, backend._launcher._proc.pid] + [b.browser.pid for b in branches],
                  "dirs": [str(backend.dir), os.path.dirname(env.browser.state_dir)]}), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_controller_crash_leaves_nothing_behind():
    """A SIGKILLed controller: the janitor kills the original and restored browsers and
    removes the images and the pinned state directory; namespaces and mounts die with them, and
    the restore launcher exits when its control socket closes."""
    require_criu_stack()
    import json
    import sys
    import time

    run = subprocess.run(
        [sys.executable, "-c", _CRASHING_CONTROLLER], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == -9, run.stderr[-2000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        alive = [p for p in report["pids"] if not _gone(p)]
        left = [d for d in report["dirs"] if Path(d).exists()]
        if not alive and not left:
            break
        time.sleep(0.1)
    assert alive == [] and left == []
    assert _processes_mentioning(report["dirs"][1]) == []


# -- unusable CRIU: clear errors (no browser needed) ------------------------------------------


def test_missing_criu_binary_says_how_to_install(tmp_path):
    with pytest.raises(CriuUnavailableError, match="install_criu.sh"):
        find_criu(str(tmp_path / "no-criu"))


def test_old_criu_is_rejected(tmp_path):
    require(os.geteuid() == 0, "needs root")
    fake = tmp_path / "criu"
    fake.write_text("#!/bin/sh\necho 'Version: 3.17.1'\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(CriuUnavailableError, match=r"3\.17\.1.*older than 4\.2.*install_criu"):
        check_criu(str(fake))


def test_failing_criu_check_is_reported(tmp_path):
    require(os.geteuid() == 0, "needs root")
    fake = tmp_path / "criu"
    fake.write_text(
        '#!/bin/sh\nif [ "$1" = check ]; then echo "Error: no vdso" >&2; exit 1; fi\n'
        "echo 'Version: 4.2'\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(CriuUnavailableError, match="(?s)check` failed.*no vdso"):
        check_criu(str(fake))


def test_install_script_is_valid_shell():
    script = Path(__file__).resolve().parents[3] / "scripts" / "install_criu.sh"
    assert subprocess.run(["bash", "-n", str(script)]).returncode == 0
