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

Parallel jobs. With ``parallel_jobs > 1``, a policy that can hand over its sampling state
(:meth:`~adaroll.policies.base.Policy.sampling_state`) and envs that take calls from threads
(:attr:`~adaroll.envs.base.GUIEnv.concurrent_calls`: browsers), up to that many Root jobs run at
once, each in its own thread with its own envs, and together they hold at most that many envs
(:class:`~adaroll.rollout.concurrent.EnvBudget`: a wave waits until its envs fit). Jobs of one
task template run in order, so that they reuse each other's loaded pages; a template's jobs are
split over several queues when there are fewer templates than parallel jobs. Every policy call
swaps the job's own sampling state in (one call at a time), so each group is still exactly the
group the job gives alone - the browsers of one job work (or sleep through a ``long_press``)
while another job's wait. Other jobs, and Root jobs otherwise, run one after another. Within a
job, envs that take calls from threads are reset and stepped at once
(:mod:`adaroll.rollout.concurrent`).

Waves. With ``episodes_per_env > 1`` a Root group of G episodes runs on ceil(G / that) envs,
as consecutive waves that each reset the envs the wave before left (a web env starts the next
episode in the page it already loaded instead of reloading it). Each later wave samples from a
seed derived from the job's, so a group is a pure function of (weights, job, seed,
``episodes_per_env``); the waves change which samples are drawn, not from what distribution.
Not used with ``batch_across_jobs``.

Starts. Each :class:`~adaroll.rollout.jobs.StartKind` has one start
(:mod:`adaroll.rollout.starts`) that opens its envs and accounts its own cost; the collector
looks a job's start up once (:attr:`Collector.starts`) and reads its declared traits. Snapshots
are built, verified and rebuilt by a :class:`~adaroll.snapshots.cache.SnapshotCache`, which also
keeps what building them cost (:attr:`Collector.builds`).

Prefetched branches. With ``prefetch_branches > 0`` and envs that take calls from threads, a
collection's Suffix jobs run after its other jobs, and background threads (as many as the
backend restores at once, ``max_restores``; :class:`~adaroll.rollout.prefetch.BranchPrefetcher`)
build their snapshots and restore their branches, in the order the starts will take them, at
most ``prefetch_branches`` ahead (fewer when the backend's branch pool, ``max_branches``, could
not also hold the largest group). Each branch comes from the same verified restore a start
makes itself, and a start checks that the branch still shows the recorded element tree (else it
closes it and restores afresh), so the groups are the same with or without prefetching.
``Cost.restore_seconds`` is what the group's starts waited for their branches.
"""

from __future__ import annotations

import logging
import threading
from collections import defaultdict
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
from adaroll.rollout.jobs import (
    Cost,
    Group,
    Job,
    RolloutFailed,
    merge_groups,
    root_waves,
)
from adaroll.rollout.prefetch import BranchPrefetcher
from adaroll.rollout.starts import (
    BranchStart,
    OneStepStart,
    ResetStart,
    RolloutStart,
    Start,
    StartState,
)
from adaroll.routes import StartKind
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
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
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
        self.max_retries = max_retries
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
        self.onestep = OneStepStart(checkpoints, matcher, self.context_at)
        self.branches = BranchStart(checkpoints, self.cache, self._count)
        self.starts: dict[StartKind, Start] = {
            start.kind: start
            for start in (self.onestep, ResetStart(self.pool, self._count), self.branches)
        }
        """The start of each kind: the one place a job's kind is looked at."""

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
        return self.branches.waits

    def prefix_length(self, checkpoint_id: str) -> int:
        """Actions from the task's reset to a checkpoint: what replaying it once costs."""
        return self.cache.prefix_length(checkpoint_id)

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
        starts = [self.starts[job.kind] for job in jobs]
        parallel = [j for j, start in enumerate(starts) if start.parallel]
        if len(parallel) < 2 or not self._jobs_in_parallel():
            parallel = []
        collected: list[Group | None] = [None] * len(jobs)
        # prefetched jobs last, so that their branches are restored while the others run (each
        # job samples from its own seed: the order changes no group)
        last = (
            [j for j, start in enumerate(starts) if start.prefetched]
            if self.branches.prefetcher
            else []
        )
        self._plan_prefetch([jobs[j] for j in last])
        for j, job in enumerate(jobs):
            if j not in parallel and j not in last:
                collected[j] = self.collect_job(job, seeds[j])
        if parallel:
            # one queue per task template, run in order: a job then finds the pages the one
            # before it left loaded (WebEnv reuses them); the queues run in parallel
            by_template: dict[str, list[int]] = defaultdict(list)
            for j in parallel:
                by_template[jobs[j].task.template].append(j)
            queues = list(by_template.values())
            while len(queues) < self.parallel_jobs and max(map(len, queues)) > 1:
                longest = max(queues, key=len)  # fewer templates than parallel jobs: split one
                queues.remove(longest)
                queues += [longest[: len(longest) // 2], longest[len(longest) // 2 :]]
            budget = EnvBudget(self.parallel_jobs)
            with ThreadPoolExecutor(self.parallel_jobs, thread_name_prefix="adaroll-job") as pool:
                done = [
                    pool.submit(
                        self._collect_queue, [(j, jobs[j], seeds[j]) for j in queue], budget
                    )
                    for queue in queues
                ]
                wait(done)
            for future in done:
                for j, group in future.result():
                    collected[j] = group
        for j in last:
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
        self._plan_prefetch([job for job in jobs if self.starts[job.kind].prefetched])
        groups: list[Group | None] = [None] * len(jobs)
        onestep = [i for i, j in enumerate(jobs) if not self.starts[j.kind].rolls_out]
        rollout = [i for i, j in enumerate(jobs) if self.starts[j.kind].rolls_out]
        for i, group in zip(
            onestep, self.onestep.collect([jobs[i] for i in onestep], self.policy), strict=True
        ):
            groups[i] = group
        retried = self._with_retries([jobs[i] for i in rollout], lambda: None)
        for i, group in zip(rollout, retried, strict=True):
            groups[i] = group
        return [g for g in groups if g is not None]

    def context_at(self, checkpoint: Checkpoint) -> Context:
        """What the policy sees at a checkpoint (its history windowed)."""
        window = checkpoint.history[-self.history_window :] if self.history_window > 0 else ()
        return Context(checkpoint.instruction, checkpoint.observation, tuple(window))

    # -- Suffix / Root: episodes to the end, reward = task verifier -----------------------------
    def _with_retries(
        self,
        jobs: Sequence[Job],
        before_attempt: Callable[[], None],
        sampler: Sampler | None = None,
    ) -> list[Group]:
        """Collect rollout groups, re-running each group an env fault touched (see the module
        docstring); ``before_attempt`` runs before every attempt (per-job mode: reseed).
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
                job = jobs[i]
                if spent[i].faults > self.max_retries:
                    raise RolloutFailed(
                        f"{job.kind} group for {job.task.id} failed on "
                        f"{spent[i].faults} attempt(s); last: {fault}"
                    ) from fault
                log.warning(
                    "%s group for %s re-run after an env fault: %s", job.kind, job.task.id, fault
                )
                still.append(i)
            pending = still
        return [g for g in done if g is not None]

    def _rollouts(
        self, jobs: Sequence[Job], sampler: Sampler
    ) -> list[tuple[Group, EnvFault | None]]:
        """One attempt: every job's group, and the first env fault that hit it (None: the
        group is complete). Every env is closed at the end - broken ones included."""
        envs: list[GUIEnv] = []
        states: list[StartState] = []
        owners: list[int] = []
        costs = [Cost() for _ in jobs]
        faults: list[EnvFault | None] = [None] * len(jobs)
        episodes: list[Episode] = []
        starts = [self._rollout_start(job) for job in jobs]
        finished = False
        try:
            for j, job in enumerate(jobs):
                started, faults[j], costs[j] = starts[j].open(job)
                for env, state in started:
                    envs.append(env)
                    states.append(state)
                    owners.append(j)
            run = [k for k, owner in enumerate(owners) if faults[owner] is None]
            episodes = run_episodes(
                sampler, [envs[k] for k in run], [states[k] for k in run], self.history_window
            )
            finished = True
        finally:
            clean = finished and not any(faults) and all(e.fault is None for e in episodes)
            for env, owner in zip(envs, owners, strict=True):
                self.pool.release(env, reuse=clean and starts[owner].reuses_envs)
        groups = [Group(job, [], [], costs[j]) for j, job in enumerate(jobs)]
        for k, episode in zip(run, episodes, strict=True):
            owner = owners[k]
            group = groups[owner]
            group.cost = group.cost + Cost(
                policy_samples=len(episode.decisions),
                env_steps=episode.env_steps,
                invalid_samples=episode.invalid_samples,
            )
            if episode.fault is not None:
                faults[owner] = faults[owner] or episode.fault
                self._count(replaced_envs=1)
                continue
            group.decisions.append(episode.decisions)
            group.rewards.append(1.0 if episode.success else 0.0)
        return list(zip(groups, faults, strict=True))

    def _rollout_start(self, job: Job) -> RolloutStart:
        start = self.starts[job.kind]
        if not isinstance(start, RolloutStart):
            raise ValueError(f"{job.kind} jobs are not rolled out in envs")
        return start

    def _count(self, **counts: int) -> None:
        with self._lock:
            for name, n in counts.items():
                self.stats[name] += n

    def _prefetch_capacity(self, jobs: Sequence[Job]) -> int:
        """How many branches to restore ahead for ``jobs`` (0: no prefetching): Suffix jobs,
        envs that take calls from threads, and room in the backend's branch pool for the
        prefetched branches besides the largest group's."""
        groups = [job.group_size for job in jobs if self.starts[job.kind].prefetched]
        if self.prefetch_branches == 0 or not groups:
            return 0
        if not self.pool.concurrent_calls():
            return 0
        pool = self.cache.max_branches
        room = (
            self.prefetch_branches
            if pool is None
            else min(self.prefetch_branches, pool - max(groups))
        )
        return max(0, room)

    def _plan_prefetch(self, jobs: Sequence[Job]) -> None:
        if self.branches.prefetcher is not None:
            self.branches.prefetcher.plan(
                job.checkpoint_id
                for job in jobs
                for _ in range(job.group_size)
                if job.checkpoint_id is not None
            )

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
