"""The three ways a group starts (docs/architecture.md, "The method"), one class each: each opens
the job's :class:`~adaroll.rollout.session.Session`\\ s and accounts its own cost. Every trainer
starts its groups here: AdaRoll's collector (:mod:`adaroll.rollout.collector`, in this process or
in Ray workers) and the framework adapters (:class:`adaroll.rollout.sessions.Starts`, one session
at a time for TRL and verl).

* :class:`OneStepStart` - G sessions at a checkpoint, each taking one action rewarded by matching
  the expert's; no env at all, so it also collects whole groups itself, with one policy call per
  group size (:meth:`OneStepStart.collect`);
* :class:`ResetStart` - Root: ``group_size`` envs reset to the task (idle envs first,
  :class:`~adaroll.rollout.env_pool.EnvPool`), which go back to the pool after a clean episode;
* :class:`BranchStart` - Suffix: ``group_size`` verified branches of the checkpoint's snapshot,
  restored only through the :class:`~adaroll.snapshots.cache.SnapshotCache` (built on first use,
  rebuilt after a fallback), prefetched when a
  :class:`~adaroll.rollout.prefetch.BranchPrefetcher` is set; costs restores, their seconds, the
  prefix replays of a replay backend and of fallbacks.

A job's start is looked up once by its :class:`~adaroll.routes.StartKind`
(:func:`start_table`); callers read the start's declared traits (whether it rolls out, reuses
envs, may run as parallel queues, is prefetched) instead of testing kinds.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from adaroll.actions import ActionMatcher
from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.envs.base import EnvFault, GUIEnv, Observation
from adaroll.rollout.concurrent import call_each
from adaroll.rollout.env_pool import EnvPool
from adaroll.rollout.episodes import Sampler
from adaroll.rollout.jobs import Cost, Decision, Group, Job, close_quietly
from adaroll.rollout.prefetch import BranchPrefetcher
from adaroll.rollout.session import Session
from adaroll.routes import StartKind
from adaroll.snapshots.cache import SnapshotCache
from adaroll.snapshots.fallback import Restored

log = logging.getLogger("adaroll")

Count = Callable[..., None]
"""Adds to a collector's running totals: ``count(replaced_envs=1)``."""


@dataclass
class Started:
    """What opening a job's start gave: its sessions, the first env fault that stopped it (None:
    all of them started) and what starting them cost (restores, replays: also those of a branch
    that faulted before it became a session)."""

    sessions: list[Session] = field(default_factory=list)
    fault: EnvFault | None = None
    cost: Cost = field(default_factory=Cost)


class Start(ABC):
    """How groups of one :class:`~adaroll.routes.StartKind` start."""

    kind: ClassVar[StartKind]
    rolls_out: ClassVar[bool] = True
    """Whether its samples are episodes in envs (False: one action at a checkpoint)."""
    reuses_envs: ClassVar[bool] = False
    """Whether its envs go back to the idle pool after a clean episode."""
    parallel: ClassVar[bool] = False
    """Whether its jobs may run as parallel queues (envs that take calls from threads)."""
    prefetched: ClassVar[bool] = False
    """Whether its branches can be restored ahead of need (its jobs then run last)."""
    restores: ClassVar[bool] = False
    """Whether it restores snapshots (a distributed collector runs its jobs where the
    checkpoint's snapshot lives)."""
    needs_checkpoint: ClassVar[bool] = False
    """Whether its jobs start at a checkpoint (``Job.checkpoint_id``)."""

    @abstractmethod
    def open(self, job: Job) -> Started:
        """Open ``job.group_size`` sessions. An env fault stops the opening: the faulted env is
        closed, the sessions opened before it are returned with it (to be released by the
        caller)."""


def checkpoint_of(job: Job, checkpoints: CheckpointStore) -> Checkpoint:
    if job.checkpoint_id is None:
        raise ValueError(f"{job.kind} job for {job.task.id} needs a checkpoint")
    return checkpoints.get(job.checkpoint_id)


class OneStepStart(Start):
    """G actions at a pivot, reward = match with the expert's action."""

    kind = StartKind.ONESTEP
    rolls_out = False
    needs_checkpoint = True

    def __init__(
        self, checkpoints: CheckpointStore, matcher: ActionMatcher, history_window: int
    ) -> None:
        self.checkpoints, self.matcher, self.history_window = checkpoints, matcher, history_window

    def open(self, job: Job) -> Started:
        """``group_size`` sessions at the job's checkpoint (nothing to fault, nothing spent)."""
        c = checkpoint_of(job, self.checkpoints)
        return Started(
            [
                Session(
                    None,
                    c.instruction,
                    c.history,
                    c.observation,
                    expert=c.expert_action,
                    matcher=self.matcher,
                )
                for _ in range(job.group_size)
            ]
        )

    def collect(self, jobs: Sequence[Job], sampler: Sampler) -> list[Group]:
        """One group per job, in job order: the jobs of one group size in one policy call
        (``group_size`` samples of each job's context)."""
        by_size: dict[int, list[int]] = defaultdict(list)
        for i, job in enumerate(jobs):
            by_size[job.group_size].append(i)
        groups: list[Group | None] = [None] * len(jobs)
        for size, indices in by_size.items():
            opened = [self.open(jobs[i]).sessions for i in indices]
            contexts = [sessions[0].context(self.history_window) for sessions in opened]
            samples = sampler.sample(contexts, size)
            for i, sessions, context, drawn in zip(indices, opened, contexts, samples, strict=True):
                for session, sample in zip(sessions, drawn, strict=True):
                    session.act(sample.action)
                groups[i] = Group(
                    jobs[i],
                    [[Decision(context, sample)] for sample in drawn],
                    [session.reward() for session in sessions],
                    sum((session.cost for session in sessions), Cost()),
                )
        return [g for g in groups if g is not None]


class ResetStart(Start):
    """Root: envs reset to the task."""

    kind = StartKind.ROOT
    reuses_envs = True
    parallel = True

    def __init__(self, pool: EnvPool, count: Count) -> None:
        self.pool, self.count = pool, count

    def open(self, job: Job) -> Started:
        """Reset ``group_size`` envs (idle ones first, else new ones) to the job's task: at once
        from threads when the envs allow it, else one after another up to the first fault."""
        envs = self.pool.take(job.task, job.group_size)
        first = envs[0]
        try:
            if first is None:  # the first env tells whether its kind takes calls from threads
                first = envs[0] = self.pool.make_env()
        except BaseException:
            self.pool.put_back(envs)
            raise
        if first.concurrent_calls:
            outcomes = call_each(lambda env: self._reset(job, env), envs, concurrent=True)
        else:
            outcomes = []
            for k, env in enumerate(envs):
                outcomes.append(self._reset(job, env))
                if isinstance(outcomes[-1], BaseException):
                    self.pool.put_back(envs[k + 1 :])
                    break
        started = [o for o in outcomes if isinstance(o, Session)]
        errors = [o for o in outcomes if isinstance(o, BaseException)]
        faults = [e for e in errors if isinstance(e, EnvFault)]
        if len(faults) < len(errors):  # not an env fault (a bug, an interrupt): clean up, raise
            for session in started:
                session.close()
            raise next(e for e in errors if not isinstance(e, EnvFault))
        self.count(replaced_envs=len(faults))
        return Started(started, faults[0] if faults else None)  # a reset costs no counted step

    def _reset(self, job: Job, env: GUIEnv | None) -> Session | BaseException:
        """Reset one env (a new one when None) to the job's task; what it raised comes back as
        the value (a fault or error closes the env)."""
        try:
            env = env if env is not None else self.pool.make_env()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, which raises it
            return exc
        try:
            obs, info = env.reset(options={"task": job.task})
        except BaseException as exc:  # noqa: BLE001 - as above
            close_quietly(env)
            return exc
        return Session(env, str(info.get("instruction", env.instruction)), (), obs)


class BranchStart(Start):
    """Suffix: verified branches of the checkpoint's snapshot."""

    kind = StartKind.SUFFIX
    prefetched = True
    restores = True
    needs_checkpoint = True

    def __init__(self, checkpoints: CheckpointStore, cache: SnapshotCache, count: Count) -> None:
        self.checkpoints, self.cache, self.count = checkpoints, cache, count
        self.prefetcher: BranchPrefetcher | None = None
        """Set for restores made ahead of need (by a collection, or for good by
        :class:`~adaroll.rollout.sessions.Starts`)."""
        self.waits: list[float] | None = []
        """Seconds each start waited for its branch (the collector empties it per collection;
        None: not recorded)."""

    def open(self, job: Job) -> Started:
        """Restore ``group_size`` branches of the job's checkpoint, one after another (stops at
        the first fault, which closed its env)."""
        started = Started()
        spent: list[Cost] = []
        for _ in range(job.group_size):
            try:
                started.sessions.append(self._branch(job, spent))
            except EnvFault as exc:
                self.count(replaced_envs=1)
                started.fault = exc
                break
        started.cost = sum(spent, Cost())
        return started

    def _branch(self, job: Job, spent: list[Cost]) -> Session:
        """One verified branch as a session; what restoring it cost goes to ``spent`` (also
        when the branch then fails to answer: the restore was made)."""
        checkpoint = checkpoint_of(job, self.checkpoints)
        began = time.perf_counter()
        prefetched = self._take_prefetched(checkpoint)
        if prefetched is not None:
            restored, obs, waited = prefetched
            self._waited(waited)
            spent.append(self._cost(checkpoint, restored, waited))
            return Session(restored.env, checkpoint.instruction, checkpoint.history, obs)
        restored = self.cache.restore(checkpoint.id)
        waited = time.perf_counter() - began
        self._waited(waited)
        spent.append(self._cost(checkpoint, restored, waited))
        env = restored.env
        try:
            return Session(env, checkpoint.instruction, checkpoint.history, env.observe())
        except BaseException:
            close_quietly(env)
            raise

    def _waited(self, seconds: float) -> None:
        if self.waits is not None:
            self.waits.append(seconds)

    def _cost(self, checkpoint: Checkpoint, restored: Restored, seconds: float) -> Cost:
        """What one restore cost: itself, its seconds, the prefix a replay backend replayed,
        and a fallback's replay (the snapshot is then rebuilt before its next use)."""
        replayed = len(checkpoint.history) if self.cache.replays_prefix else 0
        if restored.fallback:
            self.count(restore_fallbacks=1)
            self.cache.forget(checkpoint.id)
            replayed += restored.replayed_steps
        return Cost(
            restores=1,
            restore_seconds=seconds,
            replayed_steps=replayed,
            restore_fallbacks=int(bool(restored.fallback)),
        )

    def _take_prefetched(
        self, checkpoint: Checkpoint
    ) -> tuple[Restored, Observation, float] | None:
        """A prefetched branch of ``checkpoint`` that still shows the recorded element tree,
        with that observation (the start's, as a restored branch's start observes it after its
        restore) and the seconds waited for it; or None: restore one now. A branch that changed
        or stopped answering while it waited is closed."""
        if self.prefetcher is None:
            return None
        began = time.perf_counter()
        restored = self.prefetcher.take(checkpoint.id)
        waited = time.perf_counter() - began
        if restored is None:
            return None
        want = checkpoint.observation.element_tree_hash()
        try:
            obs = restored.env.observe()
        except EnvFault as exc:
            log.warning(
                "prefetched branch of %s stopped answering; restoring another: %s",
                checkpoint.id,
                exc,
            )
            close_quietly(restored.env)
            return None
        if obs.element_tree_hash() != want:
            log.warning(
                "prefetched branch of %s changed while it waited; restoring another", checkpoint.id
            )
            close_quietly(restored.env)
            return None
        return restored, obs, waited


class StartTable:
    """The start of each kind over one checkpoint store, snapshot cache and env pool: the one
    place a job's kind is looked at (``table[job.kind]``; each start declares its own kind)."""

    def __init__(
        self,
        checkpoints: CheckpointStore,
        cache: SnapshotCache,
        pool: EnvPool,
        *,
        matcher: ActionMatcher,
        history_window: int,
        count: Count,
    ) -> None:
        self.onestep = OneStepStart(checkpoints, matcher, history_window)
        self.reset = ResetStart(pool, count)
        self.branches = BranchStart(checkpoints, cache, count)
        self._by_kind: dict[StartKind, Start] = {
            start.kind: start for start in (self.onestep, self.reset, self.branches)
        }

    def __getitem__(self, kind: StartKind) -> Start:
        return self._by_kind[kind]
