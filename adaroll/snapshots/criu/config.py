"""The ``criu`` snapshot backend's knobs (:class:`CriuConfig`), the live-branch cap it sizes by
default, and the fixed names of an image's layout and of its command lines."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

# Options shared by dump and restore: unix sockets to peers outside the tree are external,
# flock/fcntl locks are dumped. How TCP connections are handled is the backend's choice
# (``CriuSnapshots.tcp_connections``).
CRIU_COMMON = ("--ext-unix-sk", "--file-locks")
IMAGE_SUBDIR = "img"
STATE_SUBDIR = "state"
MANIFEST = "manifest.json"
BRANCH_PSS_MB = 100
"""PSS of one live restored branch measured on this machine class: 48-49 MB for
chromium-headless-shell without SwiftShader on book-flight and choose-date with
``collect_garbage`` (95-108 MB without it and with SwiftShader; benchmarks/restore_latency.py;
about 170 with the full chromium, docs/architecture.md, "Platform notes"). Sizing the pool by 100 leaves room for
larger pages."""

# criu action script; paths come from the environment (criu passes its own to the script).
DUMP_HOOK = """#!/bin/sh
# copy the browser's mutable state while its tasks are frozen (after the dump, before resume)
[ "$CRTOOLS_SCRIPT_ACTION" = "post-dump" ] || exit 0
exec cp -a -- "$ADAROLL_STATE_DIR" "$ADAROLL_STATE_COPY"
"""

NET_KEY = "adaroll-net"
"""Name of the browser's network namespace as an external resource of the image."""


def _mem_available_mb() -> int:
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    return 4096


def default_pool_size(
    branch_mb: int = BRANCH_PSS_MB, memory_fraction: float = 0.5, per_core: int = 8
) -> int:
    """Live-branch cap: what half the available memory holds at ``branch_mb`` each, and at most
    ``per_core`` branches per core (idle branches cost little CPU, busy ones compete for it)."""
    by_mem = int(_mem_available_mb() * memory_fraction) // max(1, branch_mb)
    by_cpu = per_core * (os.cpu_count() or 1)
    return max(1, min(by_mem, by_cpu))


@dataclass(frozen=True)
class CriuConfig:
    """Knobs of the ``criu`` snapshot backend."""

    criu: str | None = None
    """CRIU binary; None: ``$ADAROLL_CRIU``, ``$ADAROLL_CRIU_PREFIX/bin/criu``,
    ``/opt/adaroll-criu/bin/criu`` (``scripts/install_criu.sh``), ``criu`` on PATH."""
    root_dir: str | None = None
    """Parent of this backend's image/branch directory; None: ``$ADAROLL_CRIU_DIR`` or the
    system temp dir. Must be on a filesystem that existed when the browsers started (the dump
    hook copies state into it from inside the browser's mount namespace)."""
    max_branches: int | None = None
    """Cap on concurrently live branches; None: :func:`default_pool_size`."""
    max_concurrent_restores: int | None = None
    """Cap on restores running at once; None: the number of cores."""
    pool_timeout_s: float = 120.0
    """How long :meth:`CriuSnapshots.restore` waits for a free branch slot before failing."""
    verify: str = "raise"
    """After restore: ``raise`` on a mismatch, ``report`` (record it on the branch), ``off``."""
    verify_screenshot: bool | None = None
    """Also compare a screenshot hash (besides liveness and the element-tree hash). None: when
    the env observes screenshots (``WebEnv`` with ``screenshot``); an element-list policy sees
    nothing the pixels add, and the check waits for a frame (about 30 of a restore's ~120 ms)."""
    collect_garbage: bool = True
    """Before a dump, let V8 collect garbage and Chromium drop its caches (``WebEnv.
    collect_garbage``; nothing the page can observe changes). A browser that has played a few
    episodes dumps a quarter smaller then (77 -> 59 MB on book-flight), and every branch of
    the image restores faster and takes less memory; the dump pays ~40 ms once."""
    branch_tmpfs_mb: int = 512
    """Size limit of each branch's tmpfs (the overlay's upper layer: what the branch writes)."""
    command_timeout_s: float = 120.0
    """Timeout of one ``criu dump``/``criu restore`` run."""
    external_netns: bool = True
    """Dump the browser's network namespace as an external resource and give every branch a
    fresh one (``lo`` up) instead of having criu rebuild it by running
    ``ip addr/route/rule restore`` and probing for iptables: ~6 fewer programs per restore.
    The branch's only socket that matters - DevTools on 127.0.0.1 - is restored either way."""
    kdat_cache: bool = True
    """Let restores reuse CRIU's kernel-feature cache: criu keeps it in ``/run/criu.kdat`` only
    when ``/run`` is a tmpfs (not so here), and re-probes the kernel on every run otherwise
    (~0.1-0.2 s). Restores see a per-backend directory on ``/dev/shm`` at ``/run`` (with the
    iptables lock file criu otherwise mounts a tmpfs for), unmounted again once criu is done."""

    def __post_init__(self) -> None:
        if self.verify not in ("raise", "report", "off"):
            raise ValueError(f"verify must be raise/report/off, got {self.verify!r}")
        for name in ("max_branches", "max_concurrent_restores"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")
