"""Finding and checking the CRIU binary the ``criu`` snapshot backend drives.

Why a module of its own: an unusable CRIU must fail *early and with a reason* - before a
training run has spent time collecting expert checkpoints - and the reasons differ: no
binary, Debian bookworm's 3.17 (which fails on this kernel's vDSO), ``criu check`` failing
(kernel features, missing capabilities), not root, or no ``unshare``/``nsenter``/``ip``
(browsers start in namespaces made by ``unshare``, dumps run under ``nsenter``, and criu runs
``ip`` when it rebuilds a network namespace that is not external). Every
failure raises :class:`CriuUnavailableError` naming the cause and the fix: the project's own
``scripts/install_criu.sh``, which unpacks criu >= 4.2 from Debian sid into a private prefix
(docs/architecture.md, "Platform notes") and writes a wrapper ``PREFIX/bin/criu``.

Lookup order: an explicit path, ``$ADAROLL_CRIU`` (a binary), ``$ADAROLL_CRIU_PREFIX/bin/criu``,
``/opt/adaroll-criu/bin/criu`` (the install script's default), then ``criu`` on ``PATH``.
The check runs once per binary and process (it costs ~70 ms).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass

from adaroll.snapshots.base import SnapshotError

DEFAULT_PREFIX = "/opt/adaroll-criu"
MIN_VERSION = (4, 2)
INSTALL_HINT = (
    "install it with `sudo bash scripts/install_criu.sh` (criu >= 4.2 from Debian sid, "
    f"unpacked into {DEFAULT_PREFIX}; set ADAROLL_CRIU_PREFIX to change the prefix)"
)
# Noise criu prints on every run in VMs without CAP_SYS_RESOURCE / with /run on disk.
_NOISE = ("RLIMIT_NOFILE", "kdat cache")


class CriuUnavailableError(SnapshotError):
    """CRIU cannot be used on this machine; the message says why and how to fix it."""


@dataclass(frozen=True)
class CriuTool:
    """A CRIU binary that passed ``criu check``."""

    path: str
    version: tuple[int, ...]
    check_output: str

    @property
    def version_text(self) -> str:
        return ".".join(str(v) for v in self.version)


def candidate_paths(explicit: str | None = None) -> list[str]:
    """Where to look for criu, in order (see the module docstring)."""
    cands: list[str] = []
    if explicit:
        cands.append(explicit)
    if os.environ.get("ADAROLL_CRIU"):
        cands.append(os.environ["ADAROLL_CRIU"])
    if os.environ.get("ADAROLL_CRIU_PREFIX"):
        cands.append(os.path.join(os.environ["ADAROLL_CRIU_PREFIX"], "bin", "criu"))
    cands.append(os.path.join(DEFAULT_PREFIX, "bin", "criu"))
    on_path = shutil.which("criu")
    if on_path:
        cands.append(on_path)
    return list(dict.fromkeys(cands))


def find_criu(explicit: str | None = None) -> str:
    """The first existing, executable candidate; :class:`CriuUnavailableError` if none."""
    cands = candidate_paths(explicit)
    chosen = explicit or os.environ.get("ADAROLL_CRIU")  # named on purpose: no fallback
    for path in cands:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
        if chosen and path == chosen:
            raise CriuUnavailableError(
                f"CRIU binary {chosen!r} does not exist or is not executable; {INSTALL_HINT}"
            )
    raise CriuUnavailableError(f"CRIU not found (looked at {', '.join(cands)}); {INSTALL_HINT}")


def parse_version(text: str) -> tuple[int, ...] | None:
    """``criu --version`` output ("Version: 4.2.1" ...) -> (4, 2, 1)."""
    m = re.search(r"Version:\s*(\d+(?:\.\d+)*)", text)
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def clean_output(text: str) -> str:
    """CRIU output without the harmless noise lines (see ``_NOISE``)."""
    return "\n".join(
        line for line in text.splitlines() if line.strip() and not any(n in line for n in _NOISE)
    )


@functools.cache
def _check(path: str) -> CriuTool:
    if os.geteuid() != 0:
        raise CriuUnavailableError(
            "CRIU snapshots need root (criu, unshare and nsenter "
            "create namespaces and mounts); run as root"
        )
    for tool, package in (("unshare", "util-linux"), ("nsenter", "util-linux"), ("ip", "iproute2")):
        if shutil.which(tool) is None:
            raise CriuUnavailableError(
                f"`{tool}` not found; install {package} (scripts/install_criu.sh does)"
            )
    try:
        ver = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CriuUnavailableError(f"cannot run {path} --version: {exc}; {INSTALL_HINT}") from exc
    version = parse_version(ver.stdout + ver.stderr)
    if ver.returncode != 0 or version is None:
        out = clean_output(ver.stdout + ver.stderr)[-500:]
        raise CriuUnavailableError(
            f"{path} --version failed (exit {ver.returncode}): {out}; {INSTALL_HINT}"
        )
    if version[:2] < MIN_VERSION:
        have = ".".join(map(str, version))
        raise CriuUnavailableError(
            f"{path} is criu {have}, older than {'.'.join(map(str, MIN_VERSION))} (Debian "
            f"bookworm's 3.17 fails on this kernel's vDSO); {INSTALL_HINT}"
        )
    try:
        chk = subprocess.run([path, "check"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CriuUnavailableError(f"cannot run {path} check: {exc}; {INSTALL_HINT}") from exc
    out = clean_output(chk.stdout + chk.stderr)
    if chk.returncode != 0:
        raise CriuUnavailableError(
            f"`{path} check` failed (exit {chk.returncode}) - this "
            f"kernel or container lacks what CRIU needs:\n{out[-1500:]}"
        )
    return CriuTool(path, version, out)


def check_criu(explicit: str | None = None) -> CriuTool:
    """Find criu and verify it is usable (version >= 4.2, ``criu check`` passes, root,
    util-linux present). Cached per binary; raises :class:`CriuUnavailableError`."""
    return _check(find_criu(explicit))


def criu_available(explicit: str | None = None) -> bool:
    """True when :func:`check_criu` would succeed."""
    try:
        check_criu(explicit)
    except CriuUnavailableError:
        return False
    return True


# capabilities criu run as a browser's account must not have: with CAP_SETUID, criu 4.2's
# restore makes the restored root task uid 0 (``prepare_userns_creds``) and its restorer then
# fails to set the dumped gid ("Unable to set real, effective and saved group ID: -1")
_NOT_FOR_CRIU_AS_ACCOUNT = (6, 7)  # CAP_SETGID, CAP_SETUID


def run_as_account(uid: int, gid: int) -> list[str]:
    """The command prefix that runs criu as a browser's unprivileged account (``uid``/``gid``;
    ``[]`` for root): ``setpriv`` with every capability this process has but CAP_SETUID and
    CAP_SETGID kept as ambient capabilities, and criu's ``--unprivileged`` is then needed.
    Why as the account: criu reads every dumped task's rlimits with ``prlimit``, which across
    uids needs CAP_SYS_RESOURCE (not granted on this machine class), and within one uid needs
    none; CAP_SYS_ADMIN, CAP_SYS_PTRACE and CAP_CHECKPOINT_RESTORE still let it seize, dump and
    recreate the tree in its namespaces (docs/web.md, "Browsers without root")."""
    if uid == 0:
        return []
    with open("/proc/self/status") as f:
        permitted = int(next(ln.split()[1] for ln in f if ln.startswith("CapPrm:")), 16)
    caps = ",".join(
        f"+cap_{n}" for n in range(64) if permitted >> n & 1 and n not in _NOT_FOR_CRIU_AS_ACCOUNT
    )
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise CriuUnavailableError("`setpriv` not found; install util-linux")
    return [
        setpriv,
        f"--reuid={uid}",
        f"--regid={gid}",
        "--clear-groups",
        f"--inh-caps=-all,{caps}",
        f"--ambient-caps=-all,{caps}",
        "--",
    ]


def unprivileged_flags(ids: tuple[int, int]) -> tuple[str, ...]:
    """criu's flag for running as a non-root account (:func:`run_as_account`)."""
    return ("--unprivileged",) if ids[0] != 0 else ()


def task_ids(pid: int) -> tuple[int, int]:
    """Real uid and gid of process ``pid`` (a browser's namespace init: whom criu runs as)."""
    uid = gid = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("Uid:"):
                uid = int(line.split()[1])
            elif line.startswith("Gid:"):
                gid = int(line.split()[1])
    return uid, gid
