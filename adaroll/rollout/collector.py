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
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Protocol

import torch

from adaroll.actions import PAPER_MATCHER, Action, ActionMatcher
from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.envs.base import GUIEnv, Observation, replay
from adaroll.policies.base import Context, Policy
from adaroll.rollout.episodes import run_episodes
from adaroll.rollout.jobs import Cost, Decision, Group, Job
from adaroll.seeding import derive_seed
from adaroll.snapshots.base import SnapshotBackend, SnapshotError, SnapshotRef


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
    ) -> None:
        self.policy = policy
        self.make_env = make_env
        self.checkpoints = checkpoints
        self.snapshots = snapshots
        self.history_window = history_window
        self.matcher = matcher
        self.batch_across_jobs = batch_across_jobs
        self._refs: dict[str, SnapshotRef] = {}
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
        return self._rollouts([job])[0]

    def _collect_batched(self, jobs: Sequence[Job]) -> list[Group]:
        groups: list[Group | None] = [None] * len(jobs)
        onestep = [i for i, j in enumerate(jobs) if j.kind == "onestep"]
        rollout = [i for i, j in enumerate(jobs) if j.kind != "onestep"]
        for i, group in zip(onestep, self._onestep([jobs[i] for i in onestep]), strict=True):
            groups[i] = group
        for i, group in zip(rollout, self._rollouts([jobs[i] for i in rollout]), strict=True):
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
                rewards = [float(s.action is not None and self.matcher(s.action, ckpt.expert_action))
                           for s in group_samples]  # fmt: skip
                cost = Cost(policy_samples=size,
                            invalid_samples=sum(s.action is None for s in group_samples))  # fmt: skip
                groups[i] = Group(jobs[i], [[Decision(ctx, s)] for s in group_samples], rewards, cost)
        return [g for g in groups if g is not None]

    # -- Suffix / Root: episodes to the end, reward = task verifier -----------------------------
    def _rollouts(self, jobs: Sequence[Job]) -> list[Group]:
        envs: list[GUIEnv] = []
        starts: list[tuple[str, tuple[Action, ...], Observation]] = []
        owners: list[int] = []
        costs = [Cost() for _ in jobs]
        try:
            for j, job in enumerate(jobs):
                for _ in range(job.group_size):
                    env, start = self._start(job, costs[j])
                    envs.append(env)
                    starts.append(start)
                    owners.append(j)
            episodes = run_episodes(self.policy, envs, starts, self.history_window)
        finally:
            for env in envs:
                env.close()
        groups = [Group(job, [], [], costs[j]) for j, job in enumerate(jobs)]
        for owner, episode in zip(owners, episodes, strict=True):
            group = groups[owner]
            group.decisions.append(episode.decisions)
            group.rewards.append(1.0 if episode.success else 0.0)
            group.cost.policy_samples += len(episode.decisions)
            group.cost.env_steps += episode.env_steps
            group.cost.invalid_samples += episode.invalid_samples
        return groups

    def _start(self, job: Job, cost: Cost) -> tuple[GUIEnv, tuple[str, tuple[Action, ...], Observation]]:
        if job.kind == "root":
            env = self.make_env()
            obs, info = env.reset(options={"task": job.task})
            return env, (str(info.get("instruction", env.instruction)), (), obs)
        checkpoint = self._checkpoint(job)
        ref = self._snapshot(checkpoint)
        began = time.perf_counter()
        env = self.snapshots.restore(ref)
        cost.restore_seconds += time.perf_counter() - began
        cost.restores += 1
        if getattr(self.snapshots, "replays_prefix", False):
            cost.replayed_steps += len(checkpoint.history)
        return env, (checkpoint.instruction, checkpoint.history, env.observe())

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
            obs = replay(env, checkpoint.task, checkpoint.history)
            if obs.element_tree_hash() != checkpoint.observation.element_tree_hash():
                raise SnapshotError(f"replaying {checkpoint.id} did not reach the recorded state")
            ref = self.snapshots.save(env, checkpoint.history)
        finally:
            env.close()
        self.setup_cost.replayed_steps += len(checkpoint.history)
        self._refs[checkpoint.id] = ref
        return ref

    def close(self) -> None:
        for ref in self._refs.values():
            self.snapshots.release(ref)
        self._refs.clear()
