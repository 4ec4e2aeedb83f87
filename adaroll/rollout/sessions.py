"""Sessions one at a time, for frameworks that roll out one sample per call (TRL, verl).

:class:`Starts` is the rollout layer as another framework's adapter sees it
(:mod:`adaroll.integrations`): the same starts as AdaRoll's collector
(:class:`~adaroll.rollout.starts.StartTable`: OneStep at a checkpoint, Suffix from a verified
branch of the checkpoint's snapshot, Root from a reset), the same snapshot cache (each
checkpoint's snapshot built once by replaying its prefix, rebuilt after a fallback, what
building cost kept in :attr:`Starts.builds` for the bill) - but each :meth:`Starts.open` opens
*one* :class:`~adaroll.rollout.session.Session`, for one sample of a job, since the framework
resets its environments one by one. What takes time in a restore runs ahead:
:meth:`Starts.prefetch` restores a planned Suffix group's branches in background threads (as
many as the backend restores at once) as soon as the group is planned, and each Suffix open
takes a branch that is already there (checked against the recorded element tree, as the
collector's starts check it).

A row of the framework names a start by its kind, task and checkpoint; :meth:`Starts.job` turns
those names into a :class:`~adaroll.rollout.jobs.Job` and :meth:`Starts.validate` refuses a job
that cannot start here with a :class:`StartError` naming what is wrong (unknown kind, task or
checkpoint, a checkpoint of another task or of another device profile).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from adaroll.actions import PAPER_MATCHER, ActionMatcher
from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.envs.base import EnvFault, GUIEnv, TaskSpec
from adaroll.rollout.env_pool import EnvPool
from adaroll.rollout.jobs import Job, Purpose, close_quietly
from adaroll.rollout.prefetch import BranchPrefetcher
from adaroll.rollout.session import Session
from adaroll.rollout.starts import Started, StartTable
from adaroll.routes import StartKind
from adaroll.snapshots.base import SnapshotBackend
from adaroll.snapshots.cache import BuildCosts, SnapshotCache


class StartError(ValueError):
    """A row that names no valid start (unknown kind, task or checkpoint; a checkpoint of
    another task or of another device profile)."""


class Starts:
    """Opens :class:`~adaroll.rollout.session.Session`\\ s one at a time on one env kind (see the
    module docstring); thread-safe (a framework may open a group's sessions from threads)."""

    def __init__(
        self,
        make_env: Callable[[], GUIEnv],
        checkpoints: CheckpointStore,
        snapshots: SnapshotBackend,
        tasks: Sequence[TaskSpec],
        *,
        history_window: int = 4,
        matcher: ActionMatcher = PAPER_MATCHER,
        prefetch_capacity: int = 64,
    ) -> None:
        self.make_env, self.checkpoints, self.snapshots = make_env, checkpoints, snapshots
        self.tasks = {t.id: t for t in tasks}
        for checkpoint in checkpoints:
            self.tasks.setdefault(checkpoint.task.id, checkpoint.task)
        self.history_window = history_window
        """Previous actions a session's context shows."""
        self.cache = SnapshotCache(snapshots, checkpoints, make_env)
        self.table = StartTable(
            checkpoints,
            self.cache,
            EnvPool(make_env),  # a session owns its env and closes it: none is kept idle
            matcher=matcher,
            history_window=history_window,
            count=self._count,
        )
        self.table.branches.waits = None
        self.prefetcher = BranchPrefetcher(
            self.cache.restore, prefetch_capacity, self.cache.max_restores
        )
        self.table.branches.prefetcher = self.prefetcher
        self.stats = {"replaced_envs": 0, "restore_fallbacks": 0}
        """Running totals of envs that faulted while starting and of restore fallbacks."""
        self._lock = threading.Lock()
        self._device: str | None | bool = False  # False: not looked up yet

    @property
    def builds(self) -> BuildCosts:
        """What building snapshot images cost: every build (overhead) and the first use of each
        checkpoint's image (billed: :func:`adaroll.training.bill.bill_groups`)."""
        return self.cache.costs

    # -- naming and validating starts ------------------------------------------------------------
    def job(
        self,
        kind: str,
        task_id: str,
        checkpoint_id: str | None = None,
        purpose: Purpose = "train",
        group_size: int = 1,
    ) -> Job:
        """The job a row names (validated: :meth:`validate`)."""
        try:
            start = StartKind(kind)
        except ValueError:
            names = ", ".join(k.value for k in StartKind)
            raise StartError(f"start kind {kind!r} is not one of {names}") from None
        task = self.tasks.get(task_id)
        if task is None:
            raise StartError(
                f"row names task {task_id!r}, which is not among the "
                f"{len(self.tasks)} tasks of this run (e.g. {_examples(self.tasks)})"
            )
        job = Job(start, task, group_size, checkpoint_id or None, purpose)
        self.validate(job)
        return job

    def validate(self, job: Job) -> Checkpoint | None:
        """The job's checkpoint (None for a start without one); a clear :class:`StartError` for
        a job that cannot start here."""
        if not self.table[job.kind].needs_checkpoint:
            if job.task.id not in self.tasks:
                raise StartError(
                    f"row names task {job.task.id!r}, which is not among the "
                    f"{len(self.tasks)} tasks of this run (e.g. {_examples(self.tasks)})"
                )
            return None
        if not job.checkpoint_id:
            raise StartError(f"a {job.kind} row needs a checkpoint_id (task {job.task.id!r})")
        try:
            checkpoint = self.checkpoints.get(job.checkpoint_id)
        except KeyError:
            known = [c.id for c in self.checkpoints.for_task(job.task.id)] or [
                c.id for c in self.checkpoints
            ]
            raise StartError(
                f"row for task {job.task.id!r} names checkpoint {job.checkpoint_id!r}, "
                f"which is not in the checkpoint store (known: {_examples(known)})"
            ) from None
        if checkpoint.task.id != job.task.id:
            raise StartError(
                f"checkpoint {checkpoint.id!r} belongs to task {checkpoint.task.id!r}, "
                f"not to the row's task {job.task.id!r}"
            )
        device = self.device()
        if checkpoint.device is not None and device is not None and checkpoint.device != device:
            raise StartError(
                f"checkpoint {checkpoint.id!r} was recorded on device profile "
                f"{checkpoint.device!r}, but this env runs device profile {device!r}: "
                f"collect the experts on {device!r} or train on {checkpoint.device!r}"
            )
        return checkpoint

    def device(self) -> str | None:
        """The device profile the envs run (None for envs without profiles)."""
        with self._lock:
            if self._device is False:
                env = self.make_env()
                try:
                    self._device = env.device_name
                finally:
                    close_quietly(env)
            return self._device  # type: ignore[return-value]

    # -- sessions --------------------------------------------------------------------------------
    def prefetch(self, job: Job) -> None:
        """Restore the branches of ``job``'s group in background threads, now (a no-op for a
        start that restores nothing ahead)."""
        if self.table[job.kind].prefetched and job.checkpoint_id is not None:
            self.prefetcher.plan([job.checkpoint_id] * job.group_size)

    def open(self, job: Job) -> Session:
        """One session of ``job`` (validated): one sample's start. Its cost includes its start's
        (a restore). An env fault while opening gives a faulted session, not an exception."""
        self.validate(job)
        try:
            started = self.table[job.kind].open(replace(job, group_size=1))
        except EnvFault as exc:  # the env could not even be made
            started = Started(fault=exc)
        if started.sessions:
            (session,) = started.sessions
        else:
            assert started.fault is not None
            session = Session.faulted(started.fault)
        session.cost = session.cost + started.cost
        return session

    def close(self) -> None:
        self.prefetcher.close()
        self.cache.close()

    def _count(self, **counts: int) -> None:
        with self._lock:
            for name, n in counts.items():
                self.stats[name] += n


def _examples(names: Sequence[str] | Mapping[str, object]) -> str:
    names = sorted(names)
    return ", ".join(names[:5]) + (f", ... ({len(names)} in all)" if len(names) > 5 else "")
