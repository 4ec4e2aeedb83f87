"""The restore launcher, for real (root, mount and network namespaces), with a shell command in
place of ``criu restore``: the command must see what criu needs (the overlay at the state
directory, the cache at ``/run``, a fresh network namespace with ``lo`` up on descriptor 3),
and nothing of it may reach the host. Failures come back as errors, a hung command is killed
on timeout, a launcher that died is started again, and a branch restored after its controller
died is killed, not left running.

Under CI (``CI=true``) not being root FAILS these tests; elsewhere they are skipped.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path

import pytest

from adaroll.snapshots.criu.processes import subreaper
from adaroll.snapshots.criu.restore_launcher import LauncherError, Request, RestoreLauncher
from tests.components import require

pytestmark = pytest.mark.criu

# What the stand-in for criu reports: the lower layer's file through the overlay, a write to
# it, the cache directory at /run, lo's flags and descriptor 3's namespace.
REPORT = (
    'cat "$0/lower.txt"; echo written > "$0/new.txt"; ls /run; '
    "cat /sys/class/net/lo/flags; readlink /proc/self/fd/3"
)


@pytest.fixture
def launcher(tmp_path: Path) -> Iterator[RestoreLauncher]:
    require(os.geteuid() == 0, "the restore launcher mounts and unshares: it needs root")
    launcher = RestoreLauncher(str(tmp_path / "launcher.err"))
    with subreaper():  # as CriuSnapshots starts it
        yield launcher
    launcher.close()


@pytest.fixture
def dirs(tmp_path: Path) -> dict[str, Path]:
    paths = {name: tmp_path / name for name in ("state", "lower", "kdat")}
    for path in paths.values():
        path.mkdir()
    (paths["lower"] / "lower.txt").write_text("from the lower layer\n")
    (paths["kdat"] / "criu.kdat").write_text("")
    return paths


def request(
    dirs: dict[str, Path], argv: tuple[str, ...], tmp_path: Path, **changes: object
) -> Request:
    fields: dict[str, object] = dict(
        state_dir=str(dirs["state"]),
        lower=str(dirs["lower"]),
        tmpfs_mb=8,
        kdat_dir=str(dirs["kdat"]),
        new_netns=True,
        argv=argv,
        output=str(tmp_path / "out"),
    )
    fields.update(changes)
    return Request(**fields)  # type: ignore[arg-type]


def test_the_command_runs_in_the_branch_namespaces_and_the_host_sees_none_of_them(
    launcher: RestoreLauncher, dirs: dict[str, Path], tmp_path: Path
) -> None:
    rc = launcher.run(
        request(dirs, ("/bin/sh", "-c", REPORT, str(dirs["state"])), tmp_path), timeout=30
    )
    out = (tmp_path / "out").read_text().splitlines()
    assert rc == 0, out
    assert out[0] == "from the lower layer"
    assert out[1] == "criu.kdat"  # the cache directory is /run while the command runs
    assert int(out[2], 16) & 0x1  # IFF_UP
    assert out[3].startswith("net:[") and out[3] != os.readlink("/proc/self/ns/net")
    # the write went to the branch's tmpfs, not to the lower layer or the host's directory
    assert not (dirs["lower"] / "new.txt").exists() and not (dirs["state"] / "new.txt").exists()
    mounts = Path("/proc/self/mounts").read_text()
    assert str(dirs["state"]) not in mounts and "adaroll-branch" not in mounts


def test_the_exit_status_is_the_commands(
    launcher: RestoreLauncher, dirs: dict[str, Path], tmp_path: Path
) -> None:
    assert (
        launcher.run(request(dirs, ("/bin/sh", "-c", "echo no >&2; exit 3"), tmp_path), timeout=30)
        == 3
    )
    assert (tmp_path / "out").read_text() == "no\n"


def test_without_cache_or_new_network_the_command_sees_neither(
    launcher: RestoreLauncher, dirs: dict[str, Path], tmp_path: Path
) -> None:
    argv = (
        "/bin/sh",
        "-c",
        "ls /run; readlink /proc/self/ns/net; test -e /proc/self/fd/3 && echo fd3; true",
    )
    assert (
        launcher.run(request(dirs, argv, tmp_path, kdat_dir="", new_netns=False), timeout=30) == 0
    )
    out = (tmp_path / "out").read_text().splitlines()
    assert "criu.kdat" not in out
    assert os.readlink("/proc/self/ns/net") in out and "fd3" not in out


def test_a_restore_that_cannot_start_is_an_error_and_the_next_one_runs(
    launcher: RestoreLauncher, dirs: dict[str, Path], tmp_path: Path
) -> None:
    bad = request(dirs, ("/bin/true",), tmp_path, lower=str(tmp_path / "missing"))
    with pytest.raises(LauncherError, match="mount overlay at"):
        launcher.run(bad, timeout=30)
    no_output = request(dirs, ("/bin/true",), tmp_path, output=str(tmp_path / "gone" / "out"))
    with pytest.raises(LauncherError, match="No such file"):
        launcher.run(no_output, timeout=30)
    # the launcher still serves the next request
    assert launcher.run(request(dirs, ("/bin/true",), tmp_path), timeout=30) == 0


def test_a_hung_command_is_killed_on_timeout(
    launcher: RestoreLauncher, dirs: dict[str, Path], tmp_path: Path
) -> None:
    marker = f"adaroll-launcher-test-{os.getpid()}"
    with pytest.raises(subprocess.TimeoutExpired):
        launcher.run(
            request(dirs, ("/bin/bash", "-c", f"exec -a {marker} sleep 60"), tmp_path), timeout=1
        )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _running(marker):
        time.sleep(0.05)
    assert not _running(marker)


def test_restores_run_concurrently(
    launcher: RestoreLauncher, dirs: dict[str, Path], tmp_path: Path
) -> None:
    """The first command can only finish once the second has run: the launcher must not wait
    for one criu before starting the next."""
    signal_file = tmp_path / "second-ran"
    first = request(
        dirs,
        ("/bin/sh", "-c", f"while [ ! -e {signal_file} ]; do sleep 0.01; done"),
        tmp_path,
        output=str(tmp_path / "first.out"),
    )
    second = request(
        dirs,
        ("/bin/sh", "-c", f"touch {signal_file}"),
        tmp_path,
        output=str(tmp_path / "second.out"),
    )
    with ThreadPoolExecutor(2) as pool:
        waiting = pool.submit(launcher.run, first, 30)
        assert launcher.run(second, timeout=30) == 0
        assert waiting.result(timeout=30) == 0


def test_a_launcher_that_died_is_started_again(
    launcher: RestoreLauncher, dirs: dict[str, Path], tmp_path: Path
) -> None:
    assert launcher.run(request(dirs, ("/bin/true",), tmp_path), timeout=30) == 0
    first = launcher._proc
    assert first is not None
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    assert launcher.run(request(dirs, ("/bin/true",), tmp_path), timeout=30) == 0
    assert launcher._proc is not None and launcher._proc.pid != first.pid


@pytest.mark.parametrize("pidfile_gone", [False, True], ids=["pidfile", "pidfile-removed"])
def test_a_branch_restored_after_its_controller_died_is_killed(
    dirs: dict[str, Path], tmp_path: Path, pidfile_gone: bool
) -> None:
    """The controller (a process of its own) starts a restore and is killed with its whole
    process group by SIGTERM while the stand-in for criu is still running; the stand-in then
    "restores" a long-lived process and exits 0. No controller takes that branch, so the
    launcher must kill it - also when the pidfile is gone by then (the crash janitor removes
    the backend's directory as soon as the controller dies): by the branch's network
    namespace."""
    require(os.geteuid() == 0, "the restore launcher mounts and unshares: it needs root")
    marker = f"adaroll-orphan-test-{os.getpid()}"
    pidfile = tmp_path / "pid"
    done = tmp_path / "done"
    gone = f"; rm {pidfile}" if pidfile_gone else ""
    criu = f"sleep 1; (exec -a {marker} sleep 60) & echo $! > {pidfile}{gone}; touch {done}"
    req = request(dirs, ("/bin/bash", "-c", criu), tmp_path, pidfile=str(pidfile))
    controller = textwrap.dedent(
        f"""
        import json, sys
        from adaroll.snapshots.criu.processes import subreaper
        from adaroll.snapshots.criu.restore_launcher import Request, RestoreLauncher
        data = json.loads(sys.argv[1])
        req = Request(**{{**data, "argv": tuple(data["argv"])}})
        with subreaper():
            print("restoring", flush=True)
            RestoreLauncher({str(tmp_path / "launcher.err")!r}).run(req, timeout=30)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", controller, json.dumps(asdict(req))],
        stdout=subprocess.PIPE,
        start_new_session=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert proc.stdout is not None and proc.stdout.readline() == b"restoring\n"
    time.sleep(0.5)  # the request is with the launcher; the stand-in sleeps 1 s
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=10)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and not done.exists():
        time.sleep(0.05)
    assert done.exists(), "the restore did not finish after its controller died"
    while time.monotonic() < deadline and _running(marker):
        time.sleep(0.05)
    assert not _running(marker), "the branch of a dead controller is still running"


def _running(marker: str) -> bool:
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(marker.encode()):
                    return True
            except OSError:
                continue
    return False


def test_branches_die_with_their_controller_even_after_a_finished_restore(
    dirs: dict[str, Path], tmp_path: Path
) -> None:
    """The launcher is the branches' parent-death signal: the controller restores two branches
    (each restore finished and reported), then is SIGKILLed alone - not its process group - with
    the branches not yet taken by anyone (no janitor knows them). The launcher kills both."""
    require(os.geteuid() == 0, "the restore launcher mounts and unshares: it needs root")
    marker = f"adaroll-pdeath-test-{os.getpid()}"
    reqs = []
    for i in range(2):
        pidfile = tmp_path / f"pid{i}"
        criu = f"(exec -a {marker} sleep 60) & echo $! > {pidfile}"
        argv, out = ("/bin/bash", "-c", criu), str(tmp_path / f"out{i}")
        reqs.append(asdict(request(dirs, argv, tmp_path, pidfile=str(pidfile), output=out)))
    controller = textwrap.dedent(
        f"""
        import json, sys, time
        from adaroll.snapshots.criu.processes import subreaper
        from adaroll.snapshots.criu.restore_launcher import Request, RestoreLauncher
        launcher = RestoreLauncher({str(tmp_path / "launcher.err")!r})
        with subreaper():
            for data in json.loads(sys.argv[1]):
                req = Request(**{{**data, "argv": tuple(data["argv"])}})
                assert launcher.run(req, timeout=30) == 0
        print("restored", flush=True)
        time.sleep(60)
        """
    )
    with open(tmp_path / "controller.err", "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-c", controller, json.dumps(reqs)],
            stdout=subprocess.PIPE,
            stderr=err,
            start_new_session=True,
            cwd=Path(__file__).resolve().parents[4],
        )
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"restored\n", (tmp_path / "controller.err").read_text()
    deadline = time.monotonic() + 10  # the stand-ins' sleeps take their names as they exec
    while time.monotonic() < deadline and not _running(marker):
        time.sleep(0.02)
    assert _running(marker)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and _running(marker):
        time.sleep(0.05)
    assert not _running(marker), "a branch outlived its controller"
