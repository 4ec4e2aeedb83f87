"""Collect GRPO groups for jobs: OneStep at a checkpoint, Suffix from a restored checkpoint,
Root from a task reset. The collector does three things itself - seeding, lockstep and retries -
and leaves the rest to its neighbours: the starts open the sessions
(:mod:`adaroll.rollout.starts`), the plan says in which order and how the jobs run
(:mod:`adaroll.rollout.planning`: parallel queues, waves, prefetched branches), the retry rule
says when a faulted group runs again (:mod:`adaroll.rollout.retries`).

Seeding. By default every job is collected on its own: the policy is reseeded from
``(collection seed, job index)`` (:func:`job_seed`) and the job's episodes run in lockstep among
themselves only. A group is then a pure function of (policy weights, job, seed) - not of which
other jobs were collected with it, in which order, or in which process - which is what lets the
Ray collector (:mod:`adaroll.rollout.ray_workers`) reproduce this collector exactly.
``batch_across_jobs=True`` keeps the older, faster path (all OneStep jobs of one group size in
one policy call, all episodes of all jobs in one lockstep loop, one reseed per collection):
results then depend on the batch composition and cannot be reproduced by the Ray collector.

Lockstep. A job's sessions (:mod:`adaroll.rollout.session`) run in lockstep, one batched policy
call per step (:func:`~adaroll.rollout.episodes.run_episodes`); envs that take calls from threads
are reset and stepped at once (:mod:`adaroll.rollout.concurrent`).

Retries. An env that crashes or hangs raises :class:`~adaroll.envs.base.EnvFault` (envs bound
their own calls: the web env puts a deadline on every DevTools exchange). Only that session
stops; once the attempt is over every env is closed - which kills a broken browser - and each
group that lost an episode is re-run from its start in fresh envs with the same seed, under the
:class:`~adaroll.rollout.retries.RetryRule`. A group with a faulted episode is never returned.
:attr:`Collector.stats` keeps running totals (faults, timeouts, replaced envs, fallbacks).

Parallel jobs. With ``parallel_jobs > 1``, a policy that can hand over its sampling state
(:meth:`~adaroll.policies.base.Policy.sampling_state`) and envs that take calls from threads
(:attr:`~adaroll.envs.base.GUIEnv.concurrent_calls`: browsers), up to that many Root jobs run at
once in the plan's queues, each in its own thread with its own envs, and together they hold at
most that many envs (:class:`~adaroll.rollout.concurrent.EnvBudget`: a wave waits until its envs
fit). Every policy call swaps the job's own sampling state in (one call at a time, :class:`_Lane`),
so each group is still exactly the group the job gives alone - the browsers of one job work (or
sleep through a ``long_press``) while another job's wait.

Waves. With ``episodes_per_env > 1`` a Root group runs as consecutive waves on fewer envs
(:func:`~adaroll.rollout.planning.root_waves`). Each later wave samples from a seed derived from
the job's, so a group is a pure function of (weights, job, seed, ``episodes_per_env``); the
waves change which samples are drawn, not from what distribution. Not used with
``batch_across_jobs``.

Prefetched branches. With ``prefetch_branches > 0`` and envs that take calls from threads, a
collection's Suffix jobs run after its other jobs, and background threads (as many as the
backend restores at once, ``max_restores``; :class:`~adaroll.rollout.prefetch.BranchPrefetcher`)
build their snapshots and restore their branches, in the order the starts will take them, at
most ``prefetch_branches`` ahead (:func:`~adaroll.rollout.planning.prefetch_capacity`). Each
branch comes from the same verified restore a start makes itself, and a start checks that the
branch still shows the recorded element tree (else it closes it and restores afresh), so the
groups are the same with or without prefetching. ``Cost.restore_seconds`` is what the group's
starts waited for their branches. Snapshots are built, verified and rebuilt by a
:class:`~adaroll.snapshots.cache.SnapshotCache`, which also keeps what building them cost
(:attr:`Collector.builds`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, Protocol

import torch

from adaroll.actions import PAPER_MATCHER, ActionMatcher
from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.config import RolloutConfig
from adaroll.envs.base import EnvFault, EnvTimeout, GUIEnv
from adaroll.policies.base import Context, Policy, SampledAction
from adaroll.rollout.concurrent import EnvBudget
from adaroll.rollout.env_pool import EnvPool
from adaroll.rollout.episodes import Episode, Sampler, run_episodes
from adaroll.rollout.jobs import Cost, Group, Job
from adaroll.rollout.planning import (
    CollectionPlan,
    merge_groups,
    prefetch_capacity,
    prefetch_keys,
    root_waves,
)
from adaroll.rollout.prefetch import BranchPrefetcher
from adaroll.rollout.retries import RetryRule
from adaroll.rollout.starts import Start, Started, StartTable
from adaroll.seeding import derive_seed
from adaroll.snapshots.base import SnapshotBackend
from adaroll.snapshots.cache import BuildCosts, SnapshotCache

log = logging.getLogger("adaroll")


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

    @property
    def builds(self) -> BuildCosts:
        """What building snapshot images cost: every build (the trainer takes it as overhead)
        and the first use of each checkpoint's image in the phase (billed)."""

    def collect(self, jobs: Sequence[Job], *, seed: int | None = None) -> list[Group]: ...

    def context_at(self, checkpoint: Checkpoint) -> Context: ...

    def prefix_length(self, checkpoint_id: str) -> int:
        """Actions from the task's reset to a checkpoint (its start depth)."""

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
        history_window: int | None = None,
        matcher: ActionMatcher = PAPER_MATCHER,
        batch_across_jobs: bool = False,
        max_retries: int = 3,
        parallel_jobs: int = 1,
        prefetch_branches: int = 0,
        episodes_per_env: int = 1,
    ) -> None:
        if parallel_jobs < 1:
            raise ValueError(f"parallel_jobs must be >= 1, got {parallel_jobs}")
        if episodes_per_env < 1:
            raise ValueError(f"episodes_per_env must be >= 1, got {episodes_per_env}")
        if prefetch_branches < 0:
            raise ValueError(f"prefetch_branches must be >= 0, got {prefetch_branches}")
        self.policy = policy
        self.make_env = make_env
        self.checkpoints = checkpoints
        self.snapshots = snapshots
        self.history_window = policy.history_window if history_window is None else history_window
        """Previous actions a context shows (default: the policy's own window)."""
        self.matcher = matcher
        self.batch_across_jobs = batch_across_jobs
        self.retries = RetryRule(max_retries)
        self.parallel_jobs = parallel_jobs
        """Root jobs collected at once (see "Parallel jobs" in the module docstring)."""
        self.prefetch_branches = prefetch_branches
        """Most branches restored ahead of their Suffix starts (see "Prefetched branches")."""
        self.episodes_per_env = episodes_per_env
        """Episodes of a Root group each env plays one after another (see "Waves")."""
        self._lock = threading.Lock()
        """Guards the stats against parallel jobs."""
        self._sampling = threading.Lock()
        """One policy call at a time (parallel jobs swap their sampling states in and out)."""
        self.stats = {"faults": 0, "timeouts": 0, "replaced_envs": 0, "restore_fallbacks": 0}
        """Running totals since construction (the ledger holds the per-group counts)."""
        self.pool = EnvPool(make_env, parallel_jobs)
        self.cache = SnapshotCache(snapshots, checkpoints, make_env)
        self.starts = StartTable(
            checkpoints,
            self.cache,
            self.pool,
            matcher=matcher,
            history_window=self.history_window,
            count=self._count,
        )
        """The start of each kind: the one place a job's kind is looked at."""
        self.onestep, self.branches = self.starts.onestep, self.starts.branches

    @property
    def max_retries(self) -> int:
        return self.retries.max_retries

    @classmethod
    def from_config(
        cls,
        cfg: RolloutConfig,
        policy: Policy,
        make_env: Callable[[], GUIEnv],
        checkpoints: CheckpointStore,
        snapshots: SnapshotBackend,
        *,
        matcher: ActionMatcher = PAPER_MATCHER,
        env_episodes_per_env: int = 1,
    ) -> Collector:
        """The collector ``rollout`` configures (local backend), validated once by the config:
        ``env_episodes_per_env`` is the env kind's choice, used when ``cfg.episodes_per_env`` is
        unset."""
        per_env = cfg.episodes_per_env if cfg.episodes_per_env is not None else env_episodes_per_env
        return cls(
            policy,
            make_env,
            checkpoints,
            snapshots,
            matcher=matcher,
            batch_across_jobs=cfg.batch_across_jobs,
            max_retries=cfg.max_retries,
            parallel_jobs=cfg.parallel_jobs,
            prefetch_branches=cfg.prefetch_branches,
            episodes_per_env=per_env,
        )

    @property
    def builds(self) -> BuildCosts:
        """What building snapshot images cost (the trainer takes and bills it)."""
        return self.cache.costs

    @property
    def branch_waits(self) -> list[float]:
        """Seconds each Suffix start of the last collection waited for its branch."""
        return self.branches.waits or []

    def prefix_length(self, checkpoint_id: str) -> int:
        """Actions from the task's reset to a checkpoint: what replaying it once costs."""
        return self.cache.prefix_length(checkpoint_id)

    def context_at(self, checkpoint: Checkpoint) -> Context:
        """What the policy sees at a checkpoint (its history windowed)."""
        return Context.at(
            checkpoint.instruction, checkpoint.observation, checkpoint.history, self.history_window
        )

    def collect(self, jobs: Sequence[Job], *, seed: int | None = None) -> list[Group]:
        """One group per job, in job order. ``seed`` (the trainer passes its iteration seed)
        fixes every sample; None draws a base seed from torch's global generator."""
        self.branches.waits = []
        capacity = self._prefetch_capacity(jobs)
        if capacity == 0:
            return self._collect(jobs, seed)
        self.branches.prefetcher = BranchPrefetcher(
            self.cache.restore, capacity, self.cache.max_restores
        )
        try:
            return self._collect(jobs, seed)
        finally:
            prefetcher, self.branches.prefetcher = self.branches.prefetcher, None
            prefetcher.close()

    def _collect(self, jobs: Sequence[Job], seed: int | None) -> list[Group]:
        if self.batch_across_jobs:
            if seed is not None:
                self.policy.reseed(derive_seed("batched", seed))
            groups = self._collect_batched(jobs)
            if seed is not None:
                self.policy.reseed(after_collect_seed(seed))
            return groups
        base = collection_seed(seed)
        seeds = [job_seed(base, j) for j in range(len(jobs))]
        plan = CollectionPlan.of(
            jobs,
            self.starts,
            parallel_jobs=self.parallel_jobs,
            in_parallel=self._jobs_in_parallel(),
            prefetching=self.branches.prefetcher is not None,
        )
        self._plan_prefetch([jobs[j] for j in plan.last])
        collected: list[Group | None] = [None] * len(jobs)
        for j in plan.serial:
            collected[j] = self.collect_job(jobs[j], seeds[j])
        if plan.queues:
            budget = EnvBudget(self.parallel_jobs)
            with ThreadPoolExecutor(self.parallel_jobs, thread_name_prefix="adaroll-job") as pool:
                done = [
                    pool.submit(
                        self._collect_queue, [(j, jobs[j], seeds[j]) for j in queue], budget
                    )
                    for queue in plan.queues
                ]
                wait(done)
            for future in done:
                for j, group in future.result():
                    collected[j] = group
        for j in plan.last:  # their branches were restored while the others ran
            collected[j] = self.collect_job(jobs[j], seeds[j])
        self.policy.reseed(after_collect_seed(base))
        return [g for g in collected if g is not None]

    def _jobs_in_parallel(self) -> bool:
        """Parallel jobs need a policy that can hand over its sampling state and envs that
        take calls from threads."""
        if self.parallel_jobs < 2 or self.policy.sampling_state() is None:
            return False
        return self.pool.concurrent_calls()

    def _collect_queue(
        self, queue: Sequence[tuple[int, Job, int]], budget: EnvBudget
    ) -> list[tuple[int, Group]]:
        """Jobs one after another while other queues run, each sampled from its own seed's
        sampling state, each wave once its envs fit in ``budget``: ``(index, job, seed)`` ->
        ``(index, group)``."""

        def wave(part: Job, seed: int) -> Group:
            lane = _Lane(self.policy, self._sampling, seed)
            with budget.hold(part.group_size):  # the wave's envs, one per episode
                return self._with_retries([part], lane.restart, lane)[0]

        return [(j, self._in_waves(job, seed, wave)) for j, job, seed in queue]

    def collect_job(self, job: Job, seed: int) -> Group:
        """One job on its own, its samples fixed by ``seed`` (what a Ray worker runs)."""
        self.policy.reseed(seed)
        if not self.starts[job.kind].rolls_out:
            return self.onestep.collect([job], self.policy)[0]

        def wave(part: Job, seed: int) -> Group:
            return self._with_retries([part], lambda: self.policy.reseed(seed))[0]

        return self._in_waves(job, seed, wave)

    def _in_waves(self, job: Job, seed: int, collect: Callable[[Job, int], Group]) -> Group:
        """``collect`` (part, seed) for each wave of the job (one: the job itself, with
        ``seed``); later waves sample from seeds derived from it."""
        parts = root_waves(job, self.episodes_per_env)
        return merge_groups(
            job,
            [
                collect(part, seed if w == 0 else derive_seed("wave", seed, w))
                for w, part in enumerate(parts)
            ],
        )

    def _collect_batched(self, jobs: Sequence[Job]) -> list[Group]:
        rolled = [self.starts[job.kind].rolls_out for job in jobs]
        self._plan_prefetch([job for job in jobs if self.starts[job.kind].prefetched])
        onestep = [i for i, rolls in enumerate(rolled) if not rolls]
        rollout = [i for i, rolls in enumerate(rolled) if rolls]
        groups: list[Group | None] = [None] * len(jobs)
        for i, group in zip(
            onestep, self.onestep.collect([jobs[i] for i in onestep], self.policy), strict=True
        ):
            groups[i] = group
        retried = self._with_retries([jobs[i] for i in rollout], lambda: None)
        for i, group in zip(rollout, retried, strict=True):
            groups[i] = group
        return [g for g in groups if g is not None]

    # -- Suffix / Root: episodes to the end, reward = task verifier -----------------------------
    def _with_retries(
        self,
        jobs: Sequence[Job],
        before_attempt: Callable[[], None],
        sampler: Sampler | None = None,
    ) -> list[Group]:
        """Collect rollout groups, re-running each group an env fault touched under the retry
        rule; ``before_attempt`` runs before every attempt (per-job mode: reseed).
        ``sampler``: what samples the actions (default: the policy)."""
        done: list[Group | None] = [None] * len(jobs)
        spent = [Cost() for _ in jobs]  # what the failed attempts of each job cost
        pending = list(range(len(jobs)))
        while pending:
            before_attempt()
            attempt = self._rollouts([jobs[i] for i in pending], sampler or self.policy)
            still: list[int] = []
            for i, (group, fault) in zip(pending, attempt, strict=True):
                if fault is None:
                    group.cost = group.cost + spent[i]
                    done[i] = group
                    continue
                spent[i] = spent[i] + group.cost + Cost(faults=1)
                self._count(faults=1, timeouts=int(isinstance(fault, EnvTimeout)))
                self.retries.retry(jobs[i], spent[i].faults, fault, fault)
                still.append(i)
            pending = still
        return [g for g in done if g is not None]

    def _rollouts(
        self, jobs: Sequence[Job], sampler: Sampler
    ) -> list[tuple[Group, EnvFault | None]]:
        """One attempt: every job's group, and the first env fault that hit it (None: the
        group is complete). Every env is released at the end - broken ones closed."""
        starts = [self._rollout_start(job) for job in jobs]
        opened: list[Started] = []
        episodes: list[Episode] = []
        finished = False
        try:
            for start, job in zip(starts, jobs, strict=True):
                opened.append(start.open(job))
            run = [
                (j, session)
                for j, started in enumerate(opened)
                if started.fault is None
                for session in started.sessions
            ]
            episodes = run_episodes(sampler, [s for _, s in run], self.history_window)
            finished = True
        finally:
            clean = (
                finished
                and not any(started.fault for started in opened)
                and all(e.fault is None for e in episodes)
            )
            for j, started in enumerate(opened):
                for session in started.sessions:
                    assert session.env is not None
                    self.pool.release(session.env, reuse=clean and starts[j].reuses_envs)
        groups = [
            Group(job, [], [], started.cost) for job, started in zip(jobs, opened, strict=True)
        ]
        faults = [started.fault for started in opened]
        for (j, _), episode in zip(run, episodes, strict=True):
            group = groups[j]
            group.cost = group.cost + episode.session.cost
            if episode.fault is not None:
                faults[j] = faults[j] or episode.fault
                self._count(replaced_envs=1)
                continue
            group.decisions.append(episode.decisions)
            group.rewards.append(episode.session.reward())
        return list(zip(groups, faults, strict=True))

    def _rollout_start(self, job: Job) -> Start:
        start = self.starts[job.kind]
        if not start.rolls_out:
            raise ValueError(f"{job.kind} jobs are not rolled out in envs")
        return start

    def _count(self, **counts: int) -> None:
        with self._lock:
            for name, n in counts.items():
                self.stats[name] += n

    def _prefetch_capacity(self, jobs: Sequence[Job]) -> int:
        """How many branches to restore ahead for ``jobs`` (0: no prefetching): Suffix jobs,
        envs that take calls from threads, room in the backend's branch pool."""
        sizes = [job.group_size for job in jobs if self.starts[job.kind].prefetched]
        if self.prefetch_branches == 0 or not sizes or not self.pool.concurrent_calls():
            return 0
        return prefetch_capacity(sizes, self.prefetch_branches, self.cache.max_branches)

    def _plan_prefetch(self, jobs: Sequence[Job]) -> None:
        if self.branches.prefetcher is not None:
            self.branches.prefetcher.plan(prefetch_keys(jobs))

    def close(self) -> None:
        self.pool.close()
        self.cache.close()


class _Lane:
    """The sampler of one job among parallel ones: the shared policy, with this job's sampling
    state swapped in for each call (under ``lock``), so the job draws exactly what it draws when
    collected alone after ``policy.reseed(seed)``."""

    def __init__(self, policy: Policy, lock: threading.Lock, seed: int) -> None:
        self.policy, self.lock, self.seed = policy, lock, seed
        self.state: Any = None
        self.restart()

    def restart(self) -> None:
        """Back to the seed's state (before every attempt, as a retry starts over)."""
        with self.lock:
            self.policy.reseed(self.seed)
            self.state = self.policy.sampling_state()

    def sample(
        self, contexts: Sequence[Context], n: int, *, greedy: bool = False
    ) -> list[list[SampledAction]]:
        with self.lock:
            self.policy.set_sampling_state(self.state)
            samples = self.policy.sample(contexts, n, greedy=greedy)
            self.state = self.policy.sampling_state()
        return samples
