"""Call several envs at once from threads, when their calls wait on other processes.

A web env's step is a dozen DevTools round trips to its browser, and a ``long_press`` or
``wait`` sleeps in the controller; the browsers of a lockstep group can do that work at the same
time while this process waits on their sockets (measured: the 8 browsers of a group stepped one
after another spent most of a collection in ``recv``). Envs that compute in this process (the
embedded mobile simulator) gain nothing from threads, so an env opts in with
:attr:`~adaroll.envs.base.GUIEnv.concurrent_calls`.

Results do not depend on the threads: each call touches only its own env, and results come back
in the order of the inputs, so a collection stays a pure function of its seed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TypeVar

from adaroll.envs.base import GUIEnv

T = TypeVar("T")
R = TypeVar("R")

MAX_THREADS = 64
"""Threads of the shared pool (each waits on one env; a group has at most a few dozen)."""

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(MAX_THREADS, thread_name_prefix="adaroll-env")
        return _pool


def concurrent_envs(envs: Sequence[GUIEnv]) -> bool:
    """True when there is more than one env and every one allows calls from other threads."""
    return len(envs) > 1 and all(env.concurrent_calls for env in envs)


def call_each(fn: Callable[[T], R], items: Sequence[T], *, concurrent: bool) -> list[R]:
    """``[fn(item) for item in items]``, the calls run at once from threads when ``concurrent``.
    Every call has finished when this returns; an exception is re-raised (the first one in item
    order) only after all calls are over, so no thread still touches an env the caller then
    closes."""
    if not concurrent or len(items) <= 1:
        return [fn(item) for item in items]
    futures = [_executor().submit(fn, item) for item in items]
    wait(futures)
    return [future.result() for future in futures]


class EnvBudget:
    """How many envs parallel jobs may hold at once: a job waits until its envs fit, and one
    that needs more than the whole budget runs alone. Why: a Root job holds a browser per
    episode it plays at once, so 16 jobs of 8 single-episode browsers would be 128 browsers
    (about 13 GB); with a budget the jobs share ``envs`` of them however the groups are cut."""

    def __init__(self, envs: int) -> None:
        if envs < 1:
            raise ValueError(f"an env budget must be >= 1, got {envs}")
        self.envs = envs
        self._free = envs
        self._cond = threading.Condition()

    @contextlib.contextmanager
    def hold(self, n: int) -> Iterator[None]:
        n = min(n, self.envs)
        with self._cond:
            self._cond.wait_for(lambda: self._free >= n)
            self._free -= n
        try:
            yield
        finally:
            with self._cond:
                self._free += n
                self._cond.notify_all()
