"""What distributed rollouts share that needs no Ray: the picklable env factory a worker on
another node builds its envs with, the worker slot that owns a checkpoint, the reachability check
of a cluster address, and what a worker sends back (:mod:`adaroll.rollout.ray_workers` holds
everything that imports Ray)."""

from __future__ import annotations

import socket
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

from adaroll.envs import make_env
from adaroll.envs.base import GUIEnv
from adaroll.rollout.jobs import Cost, Group, RolloutFailed


@dataclass(frozen=True)
class EnvFactory:
    """A picklable zero-argument env factory: the registered env ``name`` with ``options``
    (what a worker on another node needs to build the run's envs)."""

    name: str
    options: dict[str, Any] = field(default_factory=dict)

    def __call__(self) -> GUIEnv:
        return make_env(self.name, **self.options)


def check_reachable(address: str, timeout_s: float) -> None:
    """Fail fast when ``address`` names a host and port that do not answer (``auto`` and other
    forms are left to Ray)."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        return
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection(
                (host.strip("[]"), int(port)), timeout=min(30.0, timeout_s)
            ):
                return
        except OSError as exc:
            if time.monotonic() >= deadline:
                raise RolloutFailed(
                    f"rollout.ray_address {address!r}: no Ray cluster answers there "
                    f"({exc}) within rollout.ray_start_timeout_s = {timeout_s:g} s"
                ) from None
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))


def slot_for(checkpoint_id: str, workers: int) -> int:
    """The worker slot that owns a checkpoint's snapshot (stable across processes and runs)."""
    return zlib.crc32(checkpoint_id.encode()) % workers


@dataclass
class WorkerResult:
    """What a worker sends back for one job."""

    version: int
    """Policy version the samples were drawn with."""
    group: Group
    setup: Cost
    """Snapshot (re)building this job made the worker pay (replayed steps)."""
    pid: int
    seconds: float
