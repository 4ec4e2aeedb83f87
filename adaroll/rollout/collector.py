"""Collect GRPO groups for jobs: OneStep at a checkpoint, Suffix from a restored checkpoint,
Root from a task reset.

Determinism. By default every job is collected on its own: the policy is reseeded from
``(collection seed, job index)`` (:func:`job_seed`) and the job's episodes run in lockstep among
themselves only. A group is then a pure function of (policy weights, job, seed) - not of which
other jobs were collected with it, in which order, or in which process - which is what lets the
Ray collector (:mod:`adaroll.rollout.ray_workers`) reproduce this collector exactly.
``batch_across_jobs=True`` keeps the older, faster path (all OneStep jobs of one group size in
one policy call, all episodes of all jobs in one lockstep loop, one reseed per collection):
results then depend on the batch composition and cannot be reproduced by the Ray collector.

Environment faults. An env that crashes or hangs raises :class:`~adaroll.envs.base.EnvFault`
(envs bound their own calls: the web env puts a deadline on every DevTools exchange). Only
that episode stops; once the attempt is over every env is closed - which kills a broken
browser - and each group that lost an episode is **re-run from its start** (reset, or a fresh
restore) in fresh envs, with the same seed, so the retried group equals the one a fault-free
run collects. A group with a faulted episode is never returned. The failed attempts' work stays
in the group's cost (it was spent) and ``Cost.faults`` counts them; after ``max_retries``
failed attempts of one group :class:`~adaroll.rollout.jobs.RolloutFailed` is raised.
:attr:`Collector.stats` keeps running totals (faults, timeouts, replaced envs, fallbacks).

Snapshot restores are verified (:func:`~adaroll.snapshots.fallback.restore_verified`); a
branch that fails is replaced by replaying the checkpoint's prefix, counted in
``Cost.restore_fallbacks``, and the checkpoint's snapshot is rebuilt before its next use.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Protocol

import torch

from adaroll.actions import PAPER_MATCHER, Action, ActionMatcher
from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.envs.base import EnvFault, EnvTimeout, GUIEnv, Observation, replay
from adaroll.policies.base import Context, Policy
from adaroll.rollout.episodes import Episode, run_episodes
from adaroll.rollout.jobs import Cost, Decision, Group, Job, RolloutFailed, close_quietly
from adaroll.seeding import derive_seed
from adaroll.snapshots.base import SnapshotBackend, SnapshotError, SnapshotRef
from adaroll.snapshots.fallback import restore_verified

log = logging.getLogger("adaroll")
Start = tuple[str, tuple[Action, ...], Observation]


def collection_seed(seed: int | None) -> int:
    """The base seed of one collection: ``seed`` itself, or (None) one drawn from torch's
    global generator, so that callers without a seed stay reproducible under ``torch.manual_seed``."""
    if seed is not None:
        return int(seed)
    return int(torch.randint(0, 2**62, (1,)).item())


def job_seed(base: int, index: int) -> int:
    """The sampling seed of the ``index``-th job of a collection with base seed ``base``."""
    return derive_seed("job", base, index)


def after_collect_seed(base: int) -> int:
    """What the policy is reseeded with once a collection is over (whichever collector ran
    it), so that the learner's random state after collecting is the same everywhere."""
    return derive_seed("after-collect", base)


class RolloutCollector(Protocol):
    """What the trainer needs from a collector: :class:`Collector` (this process) and
    :class:`~adaroll.rollout.ray_workers.RayCollector` (Ray actors) both provide it."""

    setup_cost: Cost
    """Cost of (re)building snapshot images since the trainer last took it (it zeroes it)."""

    def collect(self, jobs: Sequence[Job], *, seed: int | None = None) -> list[Group]: ...

    def context_at(self, checkpoint: Checkpoint) -> Context: ...

    def prefix_length(self, checkpoint_id: str) -> int: ...

    def close(self) -> None: ...


class Collector:
    """Turns jobs into groups through a policy, an env factory and a snapshot backend."""

    def __init__(
        self,
        policy: Policy,
        make_env: Callable[[], GUIEnv],
        checkpoints: CheckpointStore,
        snapshots: SnapshotBackend,
        *,
        history_window: int,
        matcher: ActionMatcher = PAPER_MATCHER,
        batch_across_jobs: bool = False,
        max_retries: int = 3,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        self.policy = policy
        self.make_env = make_env
        self.checkpoints = checkpoints
        self.snapshots = snapshots
        self.history_window = history_window
        self.matcher = matcher
        self.batch_across_jobs = batch_across_jobs
        self.max_retries = max_retries
        self.stats = {"faults": 0, "timeouts": 0, "replaced_envs": 0, "restore_fallbacks": 0}
        """Running totals since construction (the ledger holds the per-group counts)."""
        self._refs: dict[str, SnapshotRef] = {}
        self._idle: list[GUIEnv] = []
        """Envs whose episode ended cleanly, reused by the next Root starts (a reset loads the
        task afresh, so reuse changes nothing but the cost of starting a browser)."""
        self.setup_cost = Cost()
        """Cost of (re)building snapshot images, kept apart from any group's cost."""

    def collect(self, jobs: Sequence[Job], *, seed: int | None = None) -> list[Group]:
        """One group per job, in job order. ``seed`` (the trainer passes its iteration seed)
        fixes every sample; None draws a base seed from torch's global generator."""
        if self.batch_across_jobs:
            if seed is not None:
                self.policy.reseed(derive_seed("batched", seed))
            groups = self._collect_batched(jobs)
            if seed is not None:
                self.policy.reseed(after_collect_seed(seed))
            return groups
        base = collection_seed(seed)
        groups = [self.collect_job(job, job_seed(base, j)) for j, job in enumerate(jobs)]
        self.policy.reseed(after_collect_seed(base))
        return groups

    def collect_job(self, job: Job, seed: int) -> Group:
        """One job on its own, its samples fixed by ``seed`` (what a Ray worker runs)."""
        self.policy.reseed(seed)
        if job.kind == "onestep":
            return self._onestep([job])[0]
        return self._with_retries([job], lambda: self.policy.reseed(seed))[0]

    def _collect_batched(self, jobs: Sequence[Job]) -> list[Group]:
        groups: list[Group | None] = [None] * len(jobs)
        onestep = [i for i, j in enumerate(jobs) if j.kind == "onestep"]
        rollout = [i for i, j in enumerate(jobs) if j.kind != "onestep"]
        for i, group in zip(onestep, self._onestep([jobs[i] for i in onestep]), strict=True):
            groups[i] = group
        retried = self._with_retries([jobs[i] for i in rollout], lambda: None)
        for i, group in zip(rollout, retried, strict=True):
            groups[i] = group
        return [g for g in groups if g is not None]

    # -- OneStep: G actions at a pivot, reward = match with the expert's action ---------------
    def context_at(self, checkpoint: Checkpoint) -> Context:
        window = checkpoint.history[-self.history_window :] if self.history_window > 0 else ()
        return Context(checkpoint.instruction, checkpoint.observation, tuple(window))

    def _onestep(self, jobs: Sequence[Job]) -> list[Group]:
        by_size: dict[int, list[int]] = defaultdict(list)
        for i, job in enumerate(jobs):
            by_size[job.group_size].append(i)
        groups: list[Group | None] = [None] * len(jobs)
        for size, indices in by_size.items():
            checkpoints = [self._checkpoint(jobs[i]) for i in indices]
            contexts = [self.context_at(c) for c in checkpoints]
            samples = self.policy.sample(contexts, size)
            for i, ckpt, ctx, group_samples in zip(indices, checkpoints, contexts, samples, strict=True):
                rewards = [self.matcher.reward(s.action, ckpt.expert_action) for s in group_samples]
                cost = Cost(policy_samples=size,
                            invalid_samples=sum(s.action is None for s in group_samples))  # fmt: skip
                groups[i] = Group(jobs[i], [[Decision(ctx, s)] for s in group_samples], rewards, cost)
        return [g for g in groups if g is not None]

    # -- Suffix / Root: episodes to the end, reward = task verifier -----------------------------
    def _with_retries(self, jobs: Sequence[Job], before_attempt: Callable[[], None]) -> list[Group]:
        """Collect rollout groups, re-running each group an env fault touched (see the module
        docstring); ``before_attempt`` runs before every attempt (per-job mode: reseed)."""
        done: list[Group | None] = [None] * len(jobs)
        spent = [Cost() for _ in jobs]  # what the failed attempts of each job cost
        pending = list(range(len(jobs)))
        while pending:
            before_attempt()
            attempt = self._rollouts([jobs[i] for i in pending])
            still: list[int] = []
            for i, (group, fault) in zip(pending, attempt, strict=True):
                if fault is None:
                    group.cost.add(spent[i])
                    done[i] = group
                    continue
                spent[i].add(group.cost)
                spent[i].faults += 1
                self.stats["faults"] += 1
                self.stats["timeouts"] += isinstance(fault, EnvTimeout)
                job = jobs[i]
                if spent[i].faults > self.max_retries:
                    raise RolloutFailed(f"{job.kind} group for {job.task.id} failed on "
                                        f"{spent[i].faults} attempt(s); last: {fault}") from fault  # fmt: skip
                log.warning("%s group for %s re-run after an env fault: %s",
                            job.kind, job.task.id, fault)  # fmt: skip
                still.append(i)
            pending = still
        return [g for g in done if g is not None]

    def _rollouts(self, jobs: Sequence[Job]) -> list[tuple[Group, EnvFault | None]]:
        """One attempt: every job's group, and the first env fault that hit it (None: the
        group is complete). Every env is closed at the end - broken ones included."""
        envs: list[GUIEnv] = []
        starts: list[Start] = []
        owners: list[int] = []
        costs = [Cost() for _ in jobs]
        faults: list[EnvFault | None] = [None] * len(jobs)
        episodes: list[Episode] = []
        finished = False
        try:
            for j, job in enumerate(jobs):
                for _ in range(job.group_size):
                    try:
                        env, start = self._start(job, costs[j])
                    except EnvFault as exc:  # _start closed the broken env
                        faults[j] = exc
                        self.stats["replaced_envs"] += 1
                        break
                    envs.append(env)
                    starts.append(start)
                    owners.append(j)
            run = [k for k, owner in enumerate(owners) if faults[owner] is None]
            episodes = run_episodes(self.policy, [envs[k] for k in run], [starts[k] for k in run],
                                    self.history_window)  # fmt: skip
            finished = True
        finally:
            clean = finished and not any(faults) and all(e.fault is None for e in episodes)
            for env, owner in zip(envs, owners, strict=True):
                self._release(env, reuse=clean and jobs[owner].kind == "root")
        groups = [Group(job, [], [], costs[j]) for j, job in enumerate(jobs)]
        for k, episode in zip(run, episodes, strict=True):
            owner = owners[k]
            group = groups[owner]
            group.cost.policy_samples += len(episode.decisions)
            group.cost.env_steps += episode.env_steps
            group.cost.invalid_samples += episode.invalid_samples
            if episode.fault is not None:
                faults[owner] = faults[owner] or episode.fault
                self.stats["replaced_envs"] += 1
                continue
            group.decisions.append(episode.decisions)
            group.rewards.append(1.0 if episode.success else 0.0)
        return list(zip(groups, faults, strict=True))

    def _release(self, env: GUIEnv, *, reuse: bool) -> None:
        if reuse and getattr(env, "fault", None) is None and len(self._idle) < env.max_live:
            self._idle.append(env)
        else:
            close_quietly(env)

    def _start(self, job: Job, cost: Cost) -> tuple[GUIEnv, Start]:
        if job.kind == "root":
            env = self._idle.pop() if self._idle else self.make_env()
            try:
                obs, info = env.reset(options={"task": job.task})
            except BaseException:
                close_quietly(env)
                raise
            return env, (str(info.get("instruction", env.instruction)), (), obs)
        checkpoint = self._checkpoint(job)
        ref = self._snapshot(checkpoint)
        began = time.perf_counter()
        restored = restore_verified(self.snapshots, ref, self.make_env)
        cost.restore_seconds += time.perf_counter() - began
        cost.restores += 1
        env = restored.env
        if getattr(self.snapshots, "replays_prefix", False):
            cost.replayed_steps += len(checkpoint.history)
        if restored.fallback:
            cost.restore_fallbacks += 1
            cost.replayed_steps += restored.replayed_steps
            self.stats["restore_fallbacks"] += 1
            self._forget(checkpoint.id)  # rebuild the snapshot before its next use
        try:
            return env, (checkpoint.instruction, checkpoint.history, env.observe())
        except BaseException:
            close_quietly(env)
            raise

    def prefix_length(self, checkpoint_id: str) -> int:
        """Actions from the task's reset to a checkpoint: what replaying it once costs."""
        return len(self.checkpoints.get(checkpoint_id).history)

    def _checkpoint(self, job: Job) -> Checkpoint:
        if job.checkpoint_id is None:
            raise ValueError(f"{job.kind} job for {job.task.id} needs a checkpoint")
        return self.checkpoints.get(job.checkpoint_id)

    def _snapshot(self, checkpoint: Checkpoint) -> SnapshotRef:
        """The live snapshot of a checkpoint, rebuilt by replaying its prefix when missing."""
        ref = self._refs.get(checkpoint.id)
        if ref is not None:
            return ref
        env = self.make_env()
        try:
            device = getattr(env, "device_name", None)
            if checkpoint.device is not None and device is not None and checkpoint.device != device:
                raise SnapshotError(f"checkpoint {checkpoint.id} was recorded on device profile "
                                    f"{checkpoint.device!r}, this env runs {device!r}: collect the experts "
                                    f"on this device, or set expert.device=clean to replay them here")  # fmt: skip
            obs = replay(env, checkpoint.task, checkpoint.history)
            if obs.element_tree_hash() != checkpoint.observation.element_tree_hash():
                raise SnapshotError(f"replaying {checkpoint.id} did not reach the recorded state")
            ref = self.snapshots.save(env, checkpoint.history)
        finally:
            env.close()
        self.setup_cost.replayed_steps += len(checkpoint.history)
        self._refs[checkpoint.id] = ref
        return ref

    def _forget(self, checkpoint_id: str) -> None:
        ref = self._refs.pop(checkpoint_id, None)
        if ref is not None:
            self.snapshots.release(ref)

    def close(self) -> None:
        while self._idle:
            close_quietly(self._idle.pop())
        for ref in self._refs.values():
            self.snapshots.release(ref)
        self._refs.clear()
