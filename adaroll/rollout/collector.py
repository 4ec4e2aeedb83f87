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

Snapshot restores are verified (:func:`~adaroll.snapshots.fallback.restore_verified`); a
branch that fails is replaced by replaying the checkpoint's prefix, counted in
``Cost.restore_fallbacks``, and the checkpoint's snapshot is rebuilt before its next use.

Prefetched branches. With ``prefetch_branches > 0`` and envs that take calls from threads, a
collection's Suffix jobs run after its other jobs, and background threads (as many as the
backend restores at once, ``max_restores``; :class:`~adaroll.rollout.prefetch.BranchPrefetcher`)
build their snapshots and restore their branches, in the order the starts will take them, at
most ``prefetch_branches`` ahead (fewer when the backend's branch pool, ``max_branches``, could
not also hold the largest group). Each branch comes from the same verified restore a start
makes itself, and a start checks that the branch still shows the recorded element tree (else it closes it and restores afresh), so the
groups are the same with or without prefetching. ``Cost.restore_seconds`` is what the group's
starts waited for their branches.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, Protocol

import torch

from adaroll.actions import PAPER_MATCHER, Action, ActionMatcher
from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.envs.base import EnvFault, EnvTimeout, GUIEnv, Observation, replay
from adaroll.policies.base import Context, Policy, SampledAction
from adaroll.rollout.concurrent import EnvBudget, call_each
from adaroll.rollout.episodes import Episode, Sampler, run_episodes
from adaroll.rollout.jobs import (
    Cost,
    Decision,
    Group,
    Job,
    RolloutFailed,
    close_quietly,
    merge_groups,
    root_waves,
)
from adaroll.rollout.prefetch import BranchPrefetcher
from adaroll.seeding import derive_seed
from adaroll.snapshots.base import SnapshotBackend, SnapshotError, SnapshotRef
from adaroll.snapshots.fallback import Restored, restore_verified

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
        self.history_window = history_window
        self.matcher = matcher
        self.batch_across_jobs = batch_across_jobs
        self.max_retries = max_retries
        self.parallel_jobs = parallel_jobs
        """Root jobs collected at once (see "Parallel jobs" in the module docstring)."""
        self.prefetch_branches = prefetch_branches
        """Most branches restored ahead of their Suffix starts (see "Prefetched branches")."""
        self.episodes_per_env = episodes_per_env
        """Episodes of a Root group each env plays one after another (see "Waves")."""
        self._prefetcher: BranchPrefetcher | None = None
        self._snapshot_lock = threading.Lock()
        """One snapshot build at a time (the prefetch thread builds them too)."""
        self.branch_waits: list[float] = []
        """Seconds each Suffix start of the last collection waited for its branch."""
        self._lock = threading.Lock()
        """Guards the idle pool and the stats against parallel jobs."""
        self._sampling = threading.Lock()
        """One policy call at a time (parallel jobs swap their sampling states in and out)."""
        self._concurrent_envs: bool | None = None
        """Whether the env kind takes calls from threads (None: no env made yet)."""
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
        self.branch_waits = []
        capacity = self._prefetch_capacity(jobs)
        if capacity == 0:
            return self._collect(jobs, seed)
        workers = int(getattr(self.snapshots, "max_restores", 1))  # restores the backend runs at once
        self._prefetcher = BranchPrefetcher(self._restore_checkpoint, capacity, workers)
        try:
            return self._collect(jobs, seed)
        finally:
            prefetcher, self._prefetcher = self._prefetcher, None
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
        roots = [j for j, job in enumerate(jobs) if job.kind == "root"]
        if len(roots) < 2 or not self._jobs_in_parallel():
            roots = []
        collected: list[Group | None] = [None] * len(jobs)
        # Suffix jobs last, so that their branches are restored while the others run (each job
        # samples from its own seed: the order changes no group)
        suffix = [j for j, job in enumerate(jobs) if job.kind == "suffix"] if self._prefetcher else []
        self._plan_prefetch([jobs[j] for j in suffix])
        for j, job in enumerate(jobs):
            if j not in roots and j not in suffix:
                collected[j] = self.collect_job(job, seeds[j])
        if roots:
            # one queue per task template, run in order: a job then finds the pages the one
            # before it left loaded (WebEnv reuses them); the queues run in parallel
            by_template: dict[str, list[int]] = defaultdict(list)
            for j in roots:
                by_template[jobs[j].task.template].append(j)
            queues = list(by_template.values())
            while len(queues) < self.parallel_jobs and max(map(len, queues)) > 1:
                longest = max(queues, key=len)  # fewer templates than parallel jobs: split one
                queues.remove(longest)
                queues += [longest[: len(longest) // 2], longest[len(longest) // 2 :]]
            budget = EnvBudget(self.parallel_jobs)
            with ThreadPoolExecutor(self.parallel_jobs, thread_name_prefix="adaroll-job") as pool:
                done = [pool.submit(self._collect_queue, [(j, jobs[j], seeds[j]) for j in queue], budget)
                        for queue in queues]  # fmt: skip
                wait(done)
            for future in done:
                for j, group in future.result():
                    collected[j] = group
        for j in suffix:
            collected[j] = self.collect_job(jobs[j], seeds[j])
        self.policy.reseed(after_collect_seed(base))
        return [g for g in collected if g is not None]

    def _jobs_in_parallel(self) -> bool:
        """Parallel jobs need a policy that can hand over its sampling state and envs that
        take calls from threads (a first env is made to find out, and kept idle)."""
        if self.parallel_jobs < 2 or self.policy.sampling_state() is None:
            return False
        if self._concurrent_envs is None:
            env = self.make_env()
            self._concurrent_envs = bool(getattr(env, "concurrent_calls", False))
            self._release(env, reuse=True)
        return self._concurrent_envs

    def _collect_queue(self, queue: Sequence[tuple[int, Job, int]], budget: EnvBudget
                       ) -> list[tuple[int, Group]]:  # fmt: skip
        """Root jobs one after another while other queues run, each sampled from its own seed's
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
        if job.kind == "onestep":
            return self._onestep([job])[0]

        def wave(part: Job, seed: int) -> Group:
            return self._with_retries([part], lambda: self.policy.reseed(seed))[0]

        return self._in_waves(job, seed, wave)

    def _in_waves(self, job: Job, seed: int, collect: Callable[[Job, int], Group]) -> Group:
        """``collect`` (part, seed) for each wave of the job (one: the job itself, with
        ``seed``); later waves sample from seeds derived from it."""
        parts = root_waves(job, self.episodes_per_env)
        return merge_groups(job, [collect(part, seed if w == 0 else derive_seed("wave", seed, w))
                                  for w, part in enumerate(parts)])  # fmt: skip

    def _collect_batched(self, jobs: Sequence[Job]) -> list[Group]:
        self._plan_prefetch([job for job in jobs if job.kind == "suffix"])
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
    def _with_retries(
        self, jobs: Sequence[Job], before_attempt: Callable[[], None], sampler: Sampler | None = None
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
                    group.cost.add(spent[i])
                    done[i] = group
                    continue
                spent[i].add(group.cost)
                spent[i].faults += 1
                self._count(faults=1, timeouts=int(isinstance(fault, EnvTimeout)))
                job = jobs[i]
                if spent[i].faults > self.max_retries:
                    raise RolloutFailed(f"{job.kind} group for {job.task.id} failed on "
                                        f"{spent[i].faults} attempt(s); last: {fault}") from fault  # fmt: skip
                log.warning("%s group for %s re-run after an env fault: %s",
                            job.kind, job.task.id, fault)  # fmt: skip
                still.append(i)
            pending = still
        return [g for g in done if g is not None]

    def _rollouts(self, jobs: Sequence[Job], sampler: Sampler) -> list[tuple[Group, EnvFault | None]]:
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
                if job.kind == "root":
                    started, faults[j] = self._start_roots(job)
                else:
                    started, faults[j] = self._start_branches(job, costs[j])
                for env, start in started:
                    envs.append(env)
                    starts.append(start)
                    owners.append(j)
            run = [k for k, owner in enumerate(owners) if faults[owner] is None]
            episodes = run_episodes(sampler, [envs[k] for k in run], [starts[k] for k in run],
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
                self._count(replaced_envs=1)
                continue
            group.decisions.append(episode.decisions)
            group.rewards.append(1.0 if episode.success else 0.0)
        return list(zip(groups, faults, strict=True))

    def _count(self, **counts: int) -> None:
        with self._lock:
            for name, n in counts.items():
                self.stats[name] += n

    def _release(self, env: GUIEnv, *, reuse: bool) -> None:
        with self._lock:
            keep = (reuse and getattr(env, "fault", None) is None
                    and len(self._idle) < env.max_live * self.parallel_jobs)  # fmt: skip
            if keep:
                self._idle.append(env)
        if not keep:
            close_quietly(env)

    def _take_idle(self, job: Job, n: int) -> list[GUIEnv | None]:
        """Up to ``n`` idle envs: first those for which a reset to the job's task is cheap
        (:meth:`~adaroll.envs.base.GUIEnv.warm_for`), then the longest idle ones (the recently
        released may be warm for a job that follows theirs); None for each env still to make."""
        with self._lock:
            ranked = sorted(range(len(self._idle)), key=lambda i: (not self._idle[i].warm_for(job.task), i))
            chosen = set(ranked[:n])
            taken: list[GUIEnv | None] = [self._idle[i] for i in ranked[:n]]
            self._idle = [env for i, env in enumerate(self._idle) if i not in chosen]
        return taken + [None] * (n - len(taken))

    def _return_idle(self, envs: Sequence[GUIEnv | None]) -> None:
        with self._lock:
            self._idle.extend(env for env in envs if env is not None)

    def _start_roots(self, job: Job) -> tuple[list[tuple[GUIEnv, Start]], EnvFault | None]:
        """Reset ``group_size`` envs (idle ones first, else new ones) to the job's task: at once
        from threads when the envs allow it, else one after another up to the first fault.
        Returns the started envs and the first fault (a faulted env is closed; the others are
        returned, to be released with the attempt)."""
        envs = self._take_idle(job, job.group_size)
        try:
            if envs[0] is None:  # the first env tells whether its kind takes calls from threads
                envs[0] = self.make_env()
        except BaseException:
            self._return_idle(envs)
            raise
        if getattr(envs[0], "concurrent_calls", False):
            outcomes = call_each(lambda env: self._reset_root(job, env), envs, concurrent=True)
        else:
            outcomes = []
            for k, env in enumerate(envs):
                outcomes.append(self._reset_root(job, env))
                if isinstance(outcomes[-1], BaseException):
                    self._return_idle(envs[k + 1 :])
                    break
        started = [o for o in outcomes if not isinstance(o, BaseException)]
        errors = [o for o in outcomes if isinstance(o, BaseException)]
        faults = [e for e in errors if isinstance(e, EnvFault)]
        if len(faults) < len(errors):  # not an env fault (a bug, an interrupt): clean up, raise
            for env, _ in started:
                close_quietly(env)
            raise next(e for e in errors if not isinstance(e, EnvFault))
        self._count(replaced_envs=len(faults))
        return started, (faults[0] if faults else None)

    def _reset_root(self, job: Job, env: GUIEnv | None) -> tuple[GUIEnv, Start] | BaseException:
        """Reset one env (a new one when None) to the job's task; what it raised comes back as
        the value (a fault or error closes the env)."""
        try:
            env = env if env is not None else self.make_env()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, which raises it
            return exc
        try:
            obs, info = env.reset(options={"task": job.task})
        except BaseException as exc:  # noqa: BLE001 - as above
            close_quietly(env)
            return exc
        return env, (str(info.get("instruction", env.instruction)), (), obs)

    def _start_branches(self, job: Job, cost: Cost) -> tuple[list[tuple[GUIEnv, Start]], EnvFault | None]:
        """Restore ``group_size`` branches of the job's checkpoint, one after another (stops at
        the first fault, which closed its env)."""
        started: list[tuple[GUIEnv, Start]] = []
        for _ in range(job.group_size):
            try:
                started.append(self._start_branch(job, cost))
            except EnvFault as exc:
                self._count(replaced_envs=1)
                return started, exc
        return started, None

    def _start_branch(self, job: Job, cost: Cost) -> tuple[GUIEnv, Start]:
        checkpoint = self._checkpoint(job)
        began = time.perf_counter()
        prefetched = self._take_prefetched(checkpoint)
        if prefetched is not None:
            restored, obs, waited = prefetched
            self.branch_waits.append(waited)
            cost.restore_seconds += waited
            self._account_restore(checkpoint, restored, cost)
            return restored.env, (checkpoint.instruction, checkpoint.history, obs)
        restored = self._restore_checkpoint(checkpoint.id)
        self.branch_waits.append(time.perf_counter() - began)
        cost.restore_seconds += self.branch_waits[-1]
        self._account_restore(checkpoint, restored, cost)
        env = restored.env
        try:
            return env, (checkpoint.instruction, checkpoint.history, env.observe())
        except BaseException:
            close_quietly(env)
            raise

    def _restore_checkpoint(self, checkpoint_id: str) -> Restored:
        """A verified branch of the checkpoint's snapshot (built first when missing)."""
        ref = self._snapshot(self.checkpoints.get(checkpoint_id))
        return restore_verified(self.snapshots, ref, self.make_env)

    def _account_restore(self, checkpoint: Checkpoint, restored: Restored, cost: Cost) -> None:
        cost.restores += 1
        if getattr(self.snapshots, "replays_prefix", False):
            cost.replayed_steps += len(checkpoint.history)
        if restored.fallback:
            cost.restore_fallbacks += 1
            cost.replayed_steps += restored.replayed_steps
            self._count(restore_fallbacks=1)
            self._forget(checkpoint.id)  # rebuild the snapshot before its next use

    def _take_prefetched(self, checkpoint: Checkpoint) -> tuple[Restored, Observation, float] | None:
        """A prefetched branch of ``checkpoint`` that still shows the recorded element tree,
        with that observation (the start's, as a restored branch's start observes it after its
        restore) and the seconds waited for it; or None: restore one now. A branch that changed
        or stopped answering while it waited is closed."""
        if self._prefetcher is None:
            return None
        began = time.perf_counter()
        restored = self._prefetcher.take(checkpoint.id)
        waited = time.perf_counter() - began
        if restored is None:
            return None
        want = checkpoint.observation.element_tree_hash()
        try:
            obs = restored.env.observe()
        except EnvFault as exc:
            log.warning("prefetched branch of %s stopped answering; restoring another: %s", checkpoint.id, exc)
            close_quietly(restored.env)
            return None
        if obs.element_tree_hash() != want:
            log.warning("prefetched branch of %s changed while it waited; restoring another", checkpoint.id)
            close_quietly(restored.env)
            return None
        return restored, obs, waited

    def _prefetch_capacity(self, jobs: Sequence[Job]) -> int:
        """How many branches to restore ahead for ``jobs`` (0: no prefetching): Suffix jobs,
        envs that take calls from threads, and room in the backend's branch pool for the
        prefetched branches besides the largest group's."""
        groups = [job.group_size for job in jobs if job.kind == "suffix"]
        if self.prefetch_branches == 0 or not groups:
            return 0
        if self._concurrent_envs is None:
            env = self.make_env()
            self._concurrent_envs = bool(getattr(env, "concurrent_calls", False))
            self._release(env, reuse=True)
        if not self._concurrent_envs:
            return 0
        pool = getattr(self.snapshots, "max_branches", None)
        room = self.prefetch_branches if pool is None else min(self.prefetch_branches, pool - max(groups))
        return max(0, room)

    def _plan_prefetch(self, jobs: Sequence[Job]) -> None:
        if self._prefetcher is not None:
            self._prefetcher.plan(job.checkpoint_id for job in jobs
                                  for _ in range(job.group_size) if job.checkpoint_id is not None)  # fmt: skip

    def prefix_length(self, checkpoint_id: str) -> int:
        """Actions from the task's reset to a checkpoint: what replaying it once costs."""
        return len(self.checkpoints.get(checkpoint_id).history)

    def _checkpoint(self, job: Job) -> Checkpoint:
        if job.checkpoint_id is None:
            raise ValueError(f"{job.kind} job for {job.task.id} needs a checkpoint")
        return self.checkpoints.get(job.checkpoint_id)

    def _snapshot(self, checkpoint: Checkpoint) -> SnapshotRef:
        """The live snapshot of a checkpoint, rebuilt by replaying its prefix when missing."""
        with self._snapshot_lock:
            return self._snapshot_locked(checkpoint)

    def _snapshot_locked(self, checkpoint: Checkpoint) -> SnapshotRef:
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
        with self._snapshot_lock:  # (queued prefetches restore from the rebuilt snapshot)
            ref = self._refs.pop(checkpoint_id, None)
        if ref is not None:
            self.snapshots.release(ref)

    def close(self) -> None:
        while self._idle:
            close_quietly(self._idle.pop())
        for ref in self._refs.values():
            self.snapshots.release(ref)
        self._refs.clear()


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

    def sample(self, contexts: Sequence[Context], n: int, *, greedy: bool = False) -> list[list[SampledAction]]:
        with self.lock:
            self.policy.set_sampling_state(self.state)
            samples = self.policy.sample(contexts, n, greedy=greedy)
            self.state = self.policy.sampling_state()
        return samples
