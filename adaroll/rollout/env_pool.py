"""Idle envs kept between Root starts: a reset loads the task afresh, so reusing an env whose
episode ended cleanly changes nothing but the cost of starting one (a browser)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from adaroll.envs.base import GUIEnv, TaskSpec
from adaroll.rollout.jobs import close_quietly


class EnvPool:
    """Makes envs with ``make_env`` and keeps those released for reuse, at most
    ``env.max_live * parallel_jobs`` of them."""

    def __init__(self, make_env: Callable[[], GUIEnv], parallel_jobs: int = 1) -> None:
        self.make_env = make_env
        self.parallel_jobs = parallel_jobs
        self._idle: list[GUIEnv] = []
        self._lock = threading.Lock()
        """Guards the idle list against parallel jobs."""
        self._concurrent: bool | None = None
        """Whether the env kind takes calls from threads (None: no env made yet)."""

    def concurrent_calls(self) -> bool:
        """Whether the env kind takes calls from threads (a first env is made to find out, and
        kept idle)."""
        if self._concurrent is None:
            env = self.make_env()
            self._concurrent = env.concurrent_calls
            self.release(env, reuse=True)
        return self._concurrent

    def release(self, env: GUIEnv, *, reuse: bool) -> None:
        """Keep ``env`` for a later start when ``reuse`` and it is sound and there is room,
        else close it."""
        with self._lock:
            keep = (
                reuse and env.fault is None and len(self._idle) < env.max_live * self.parallel_jobs
            )
            if keep:
                self._idle.append(env)
        if not keep:
            close_quietly(env)

    def take(self, task: TaskSpec, n: int) -> list[GUIEnv | None]:
        """Up to ``n`` idle envs: first those for which a reset to ``task`` is cheap
        (:meth:`~adaroll.envs.base.GUIEnv.warm_for`), then the longest idle ones (the recently
        released may be warm for a job that follows theirs); None for each env still to make."""
        with self._lock:
            ranked = sorted(
                range(len(self._idle)), key=lambda i: (not self._idle[i].warm_for(task), i)
            )
            chosen = set(ranked[:n])
            taken: list[GUIEnv | None] = [self._idle[i] for i in ranked[:n]]
            self._idle = [env for i, env in enumerate(self._idle) if i not in chosen]
        return taken + [None] * (n - len(taken))

    def idle(self) -> tuple[GUIEnv, ...]:
        """The envs kept for reuse now (benchmarks read their reset counters)."""
        with self._lock:
            return tuple(self._idle)

    def put_back(self, envs: Sequence[GUIEnv | None]) -> None:
        """Return envs taken but not used."""
        with self._lock:
            self._idle.extend(env for env in envs if env is not None)

    def close(self) -> None:
        while self._idle:
            close_quietly(self._idle.pop())
