"""The three ways a group starts (DESIGN.md 1.4), one class each, each running its own start
and accounting its own cost:

* :class:`OneStepStart` - G actions sampled at a checkpoint, each rewarded by matching the
  expert's action; no env at all, so it collects whole groups itself (:meth:`OneStepStart.collect`);
* :class:`ResetStart` - Root: ``group_size`` envs reset to the task (idle envs first,
  :class:`~adaroll.rollout.env_pool.EnvPool`), which go back to the pool after a clean episode;
* :class:`BranchStart` - Suffix: ``group_size`` verified branches of the checkpoint's snapshot
  (:class:`~adaroll.snapshots.cache.SnapshotCache`), prefetched when a
  :class:`~adaroll.rollout.prefetch.BranchPrefetcher` is set; costs restores, their seconds, the
  prefix replays of a replay backend and of fallbacks.

The collector (:mod:`adaroll.rollout.collector`) picks a job's start once, by its
:class:`~adaroll.rollout.jobs.StartKind`, and reads the start's declared traits (whether it rolls
out, reuses envs, may run as parallel queues, is prefetched) instead of testing kinds.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import ClassVar

from adaroll.actions import Action, ActionMatcher
from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.envs.base import EnvFault, GUIEnv, Observation
from adaroll.policies.base import Context
from adaroll.rollout.concurrent import call_each
from adaroll.rollout.env_pool import EnvPool
from adaroll.rollout.episodes import Sampler
from adaroll.rollout.jobs import Cost, Decision, Group, Job, close_quietly
from adaroll.rollout.prefetch import BranchPrefetcher
from adaroll.routes import StartKind
from adaroll.snapshots.cache import SnapshotCache
from adaroll.snapshots.fallback import Restored

log = logging.getLogger("adaroll")

StartState = tuple[str, tuple[Action, ...], Observation]
"""(instruction, actions already taken, current observation) of a started env."""
Started = tuple[list[tuple[GUIEnv, StartState]], EnvFault | None, Cost]
"""The envs a start made ready, the first env fault that stopped it (None: all of them), and
what starting them cost."""
Count = Callable[..., None]
"""Adds to the collector's running totals: ``count(replaced_envs=1)``."""


class Start(ABC):
    """How groups of one :class:`~adaroll.rollout.jobs.StartKind` start."""

    kind: ClassVar[StartKind]
    rolls_out: ClassVar[bool] = True
    """Whether its samples are episodes in envs (False: one action at a checkpoint)."""
    reuses_envs: ClassVar[bool] = False
    """Whether its envs go back to the idle pool after a clean episode."""
    parallel: ClassVar[bool] = False
    """Whether its jobs may run as parallel queues (envs that take calls from threads)."""
    prefetched: ClassVar[bool] = False
    """Whether its branches can be restored ahead of need (its jobs then run last)."""


def checkpoint_of(job: Job, checkpoints: CheckpointStore) -> Checkpoint:
    if job.checkpoint_id is None:
        raise ValueError(f"{job.kind} job for {job.task.id} needs a checkpoint")
    return checkpoints.get(job.checkpoint_id)


class OneStepStart(Start):
    """G actions at a pivot, reward = match with the expert's action."""

    kind = StartKind.ONESTEP
    rolls_out = False

    def __init__(
        self,
        checkpoints: CheckpointStore,
        matcher: ActionMatcher,
        context_at: Callable[[Checkpoint], Context],
    ) -> None:
        self.checkpoints, self.matcher, self.context_at = checkpoints, matcher, context_at

    def collect(self, jobs: Sequence[Job], sampler: Sampler) -> list[Group]:
        """One group per job, in job order: the jobs of one group size in one policy call."""
        by_size: dict[int, list[int]] = defaultdict(list)
        for i, job in enumerate(jobs):
            by_size[job.group_size].append(i)
        groups: list[Group | None] = [None] * len(jobs)
        for size, indices in by_size.items():
            checkpoints = [checkpoint_of(jobs[i], self.checkpoints) for i in indices]
            contexts = [self.context_at(c) for c in checkpoints]
            samples = sampler.sample(contexts, size)
            for i, ckpt, ctx, group_samples in zip(
                indices, checkpoints, contexts, samples, strict=True
            ):
                rewards = [self.matcher.reward(s.action, ckpt.expert_action) for s in group_samples]
                cost = Cost(
                    policy_samples=size,
                    invalid_samples=sum(s.action is None for s in group_samples),
                )
                groups[i] = Group(
                    jobs[i], [[Decision(ctx, s)] for s in group_samples], rewards, cost
                )
        return [g for g in groups if g is not None]


class RolloutStart(Start):
    """A start whose samples are episodes: it makes ``group_size`` envs ready to roll."""

    @abstractmethod
    def open(self, job: Job) -> Started:
        """Make the job's envs ready; a faulted env is closed, the others are returned (to be
        released with the attempt)."""


class ResetStart(RolloutStart):
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
        started = [o for o in outcomes if not isinstance(o, BaseException)]
        errors = [o for o in outcomes if isinstance(o, BaseException)]
        faults = [e for e in errors if isinstance(e, EnvFault)]
        if len(faults) < len(errors):  # not an env fault (a bug, an interrupt): clean up, raise
            for env, _ in started:
                close_quietly(env)
            raise next(e for e in errors if not isinstance(e, EnvFault))
        self.count(replaced_envs=len(faults))
        return started, (faults[0] if faults else None), Cost()  # a reset costs no counted step

    def _reset(self, job: Job, env: GUIEnv | None) -> tuple[GUIEnv, StartState] | BaseException:
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
        return env, (str(info.get("instruction", env.instruction)), (), obs)


class BranchStart(RolloutStart):
    """Suffix: verified branches of the checkpoint's snapshot."""

    kind = StartKind.SUFFIX
    prefetched = True

    def __init__(self, checkpoints: CheckpointStore, cache: SnapshotCache, count: Count) -> None:
        self.checkpoints, self.cache, self.count = checkpoints, cache, count
        self.prefetcher: BranchPrefetcher | None = None
        """Set by the collector for a collection whose branches are restored ahead."""
        self.waits: list[float] = []
        """Seconds each start of the current collection waited for its branch."""

    def open(self, job: Job) -> Started:
        """Restore ``group_size`` branches of the job's checkpoint, one after another (stops at
        the first fault, which closed its env)."""
        started: list[tuple[GUIEnv, StartState]] = []
        spent: list[Cost] = []
        for _ in range(job.group_size):
            try:
                started.append(self._branch(job, spent))
            except EnvFault as exc:
                self.count(replaced_envs=1)
                return started, exc, sum(spent, Cost())
        return started, None, sum(spent, Cost())

    def _branch(self, job: Job, spent: list[Cost]) -> tuple[GUIEnv, StartState]:
        """One verified branch and its start state; what restoring it cost goes to ``spent``
        (also when the branch then fails to answer: the restore was made)."""
        checkpoint = checkpoint_of(job, self.checkpoints)
        began = time.perf_counter()
        prefetched = self._take_prefetched(checkpoint)
        if prefetched is not None:
            restored, obs, waited = prefetched
            self.waits.append(waited)
            spent.append(self._cost(checkpoint, restored, waited))
            return restored.env, (checkpoint.instruction, checkpoint.history, obs)
        restored = self.cache.restore(checkpoint.id)
        self.waits.append(time.perf_counter() - began)
        spent.append(self._cost(checkpoint, restored, self.waits[-1]))
        env = restored.env
        try:
            return env, (checkpoint.instruction, checkpoint.history, env.observe())
        except BaseException:
            close_quietly(env)
            raise

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
