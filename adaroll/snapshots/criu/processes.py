"""The processes around ``criu``: its command lines run in their own process group, the
controller made a child subreaper while restores run, and the errors read from criu's logs."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

from adaroll.snapshots.base import SnapshotError

_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
_subreaper_before = False
_subreaper_lock = threading.Lock()
_subreaper_users = 0


@contextlib.contextmanager
def subreaper() -> Iterator[None]:
    """Be a child subreaper while at least one restore runs.

    ``criu restore -d`` exits once the tree runs, orphaning the restored init; a subreaper
    inherits it (and can reap it) instead of pid 1. Being one only *during* restores keeps the
    side effect small: outside them, unrelated orphans (e.g. of a crashed subprocess) still go
    to init instead of piling up here as zombies. Already adopted branches stay our children."""
    import ctypes

    global _subreaper_users
    libc = ctypes.CDLL(None, use_errno=True)
    global _subreaper_before
    with _subreaper_lock:
        if _subreaper_users == 0:
            flag = ctypes.c_int(0)
            libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
            _subreaper_before = bool(flag.value)  # someone else made us one: leave it set
            if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
                err = ctypes.get_errno()
                raise SnapshotError(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(err)}")
        _subreaper_users += 1
    try:
        yield
    finally:
        with _subreaper_lock:
            _subreaper_users -= 1
            if _subreaper_users == 0 and not _subreaper_before:
                libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def run_criu(
    cmd: list[str], timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a criu command line in its own process group, killing the whole group on timeout
    (``sh`` may be criu's parent, and killing only the direct child would leave criu running).
    Restored trees are unaffected: criu gives them their own (dumped) sessions."""
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, 9)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def criu_errors(log: Path, limit: int = 12) -> str:
    """The ``Error`` lines of a criu log (without the harmless noise), for error messages."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return f"(no log at {log})"
    errs = [
        ln.strip()
        for ln in lines
        if "Error" in ln and "RLIMIT_NOFILE" not in ln and "iptables" not in ln
    ]
    return "\n".join(errs[-limit:]) or "\n".join(lines[-5:])


def mentioned_images(text: str) -> list[str]:
    """The image files a criu error names (``pages-1.img``, ...)."""
    return sorted(set(re.findall(r"[\w.-]+\.img", text)))
