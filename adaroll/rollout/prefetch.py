"""Branches restored before a Suffix start asks for them (issue 17, item 3).

A Suffix job of ``G`` samples restores ``G`` snapshot branches before its first step, and a
CRIU restore costs 0.1-0.6 s (criu, the browser coming back, the verification's round trips),
most of it spent in other processes. The collector knows a collection's whole job list up
front, so a :class:`BranchPrefetcher` restores the branches of the coming Suffix jobs in
background threads (as many as the backend restores at once), in the order the starts will
ask for them, while other jobs run; a start then takes a branch that is already there.

* Same branches: the collector hands in the very restore a synchronous start makes (verified,
  with the replay fallback: :func:`~adaroll.snapshots.fallback.restore_verified`). Whatever it
  raised is raised again to the start that takes its branch, so an
  :class:`~adaroll.envs.base.EnvFault` takes the collector's usual fault path.
* Bounded: at most ``capacity`` branches are ready or being restored at once (each holds a
  browser: ~180 MB); the threads wait for a start to take one before restoring more.
* In plan order: the branch a start needs next is ready, being restored, or the next a
  thread starts. A start whose key has nothing ready or coming (a retry, or every thread busy
  with other keys) cancels one planned restore of that key and the caller restores
  synchronously, beside the threads.
* Nothing left behind: :meth:`close` stops the thread and closes every branch not taken.
"""

from __future__ import annotations

import threading
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable

from adaroll.rollout.jobs import close_quietly
from adaroll.snapshots.fallback import Restored


class BranchPrefetcher:
    """Restores planned branches ahead of need; ``restore(key)`` makes one branch of ``key``
    (the collector's key is a checkpoint id)."""

    def __init__(self, restore: Callable[[str], Restored], capacity: int, workers: int = 1) -> None:
        if capacity < 1 or workers < 1:
            raise ValueError(
                f"prefetch capacity and workers must be >= 1, got {capacity}, {workers}"
            )
        self.capacity = capacity
        self.workers = min(workers, capacity)
        self._restore = restore
        self._cond = threading.Condition()
        self._todo: deque[str] = deque()
        self._ready: dict[str, deque[Restored | BaseException]] = defaultdict(deque)
        self._busy: Counter[str] = Counter()
        """Keys being restored (one entry per thread at work)."""
        self._held = 0
        """Branches ready or being restored (what ``capacity`` bounds)."""
        self._closed = False
        self._threads: list[threading.Thread] = []
        self.peak = 0
        """Most branches held at once so far (never above ``capacity``)."""
        self.taken = 0
        """Branches handed to starts."""

    def plan(self, keys: Iterable[str]) -> None:
        """Queue one restore per key, in the order the starts will take them."""
        with self._cond:
            if self._closed:
                return
            self._todo.extend(keys)
            while len(self._threads) < min(self.workers, len(self._todo)):
                thread = threading.Thread(target=self._work, name="adaroll-prefetch", daemon=True)
                self._threads.append(thread)
                thread.start()
            self._cond.notify_all()

    def take(self, key: str) -> Restored | None:
        """The next prefetched branch of ``key`` (waiting while it is being restored), or None
        when none is ready or restoring (one planned restore of ``key`` is then cancelled: the
        caller restores it). Raises what the prefetched restore raised."""
        with self._cond:
            while True:
                ready = self._ready.get(key)
                if ready:
                    out = ready.popleft()
                    self._held -= 1
                    self.taken += 1
                    self._cond.notify_all()
                    break
                idle_with_room = (
                    self._busy.total() < len(self._threads) and self._held < self.capacity
                )
                if self._busy[key] > 0 or (idle_with_room and self._todo and self._todo[0] == key):
                    self._cond.wait()  # being restored, or about to be (the thread was woken)
                    continue
                if key in self._todo:
                    self._todo.remove(key)
                return None
        if isinstance(out, BaseException):
            raise out
        return out

    def close(self) -> None:
        """Stop restoring and close every branch no start took."""
        with self._cond:
            self._closed = True
            self._todo.clear()
            self._cond.notify_all()
            threads = list(self._threads)
        for thread in threads:
            thread.join()
        with self._cond:
            left = [out for ready in self._ready.values() for out in ready]
            self._ready.clear()
            self._held = 0
        for out in left:
            if isinstance(out, Restored):
                close_quietly(out.env)

    def __enter__(self) -> BranchPrefetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._closed and (not self._todo or self._held >= self.capacity):
                    self._cond.wait()
                if self._closed:
                    return
                key = self._todo.popleft()
                self._busy[key] += 1
                self._held += 1
                self.peak = max(self.peak, self._held)
            out: Restored | BaseException
            try:
                out = self._restore(key)
            except BaseException as exc:  # noqa: BLE001 - raised again to the start that takes it
                out = exc
            with self._cond:
                self._busy[key] -= 1
                closed = self._closed
                if not closed:
                    self._ready[key].append(out)
                self._cond.notify_all()
            if closed:
                if isinstance(out, Restored):
                    close_quietly(out.env)
                return
