"""How a collection's jobs are laid out before any is collected: the order they run in (one after
another, as parallel queues, or last while their branches are restored ahead), the waves a Root
group is played in, and which branches to restore ahead. The collector
(:mod:`adaroll.rollout.collector`) reads one :class:`CollectionPlan` per collection instead of
taking the job list apart itself; none of this changes a group, only when it is collected (each
job samples from its own seed).

* **Parallel queues.** Jobs whose start may run in parallel (Root resets of envs that take calls
  from threads) run as queues, one per task template and in order within it, so that a job
  finds the pages the one before it left loaded; a template's jobs are split over several
  queues when there are fewer templates than parallel jobs (:func:`template_queues`).
* **Prefetched jobs last.** Suffix jobs run after the others while background threads restore
  their branches in the order the starts will take them (:func:`prefetch_keys`), at most
  :func:`prefetch_capacity` ahead.
* **Waves.** A Root group of G episodes runs on ceil(G / ``episodes_per_env``) envs as
  consecutive smaller groups (:func:`root_waves`), merged back in wave order
  (:func:`merge_groups`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from adaroll.rollout.jobs import Group, Job
from adaroll.rollout.starts import StartTable
from adaroll.routes import StartKind


@dataclass
class CollectionPlan:
    """Which jobs (by index) run when: ``serial`` first, one after another; then ``queues``,
    run in parallel (each in order); then ``last`` (prefetched Suffix jobs)."""

    serial: list[int] = field(default_factory=list)
    queues: list[list[int]] = field(default_factory=list)
    last: list[int] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        jobs: Sequence[Job],
        starts: StartTable,
        *,
        parallel_jobs: int,
        in_parallel: bool,
        prefetching: bool,
    ) -> CollectionPlan:
        """The plan of ``jobs``: parallel queues when ``in_parallel`` (the collector's policy and
        envs allow it) and at least two jobs may run so; prefetched jobs last when
        ``prefetching``."""
        parallel = [j for j, job in enumerate(jobs) if starts[job.kind].parallel]
        if len(parallel) < 2 or not in_parallel:
            parallel = []
        last = [j for j, job in enumerate(jobs) if prefetching and starts[job.kind].prefetched]
        taken = {*parallel, *last}
        serial = [j for j in range(len(jobs)) if j not in taken]
        return cls(serial, template_queues(jobs, parallel, parallel_jobs), last)


def template_queues(jobs: Sequence[Job], indices: Sequence[int], queues: int) -> list[list[int]]:
    """``indices`` of ``jobs`` as queues: one per task template (templates in order of first
    appearance, each queue in job order), the longest split in halves while there are fewer
    queues than ``queues`` and one of them holds more than one job."""
    if not indices:
        return []
    by_template: dict[str, list[int]] = defaultdict(list)
    for j in indices:
        by_template[jobs[j].task.template].append(j)
    out = list(by_template.values())
    while len(out) < queues and max(map(len, out)) > 1:
        longest = max(out, key=len)
        out.remove(longest)
        out += [longest[: len(longest) // 2], longest[len(longest) // 2 :]]
    return out


def prefetch_capacity(group_sizes: Sequence[int], wanted: int, max_branches: int | None) -> int:
    """How many branches to restore ahead for prefetched groups of ``group_sizes`` (0: none):
    ``wanted`` at most, and only what the backend's branch pool (``max_branches``; None: no
    limit) can hold besides the largest group's. (Only envs that take calls from threads are
    prefetched for: the collector asks that first.)"""
    if wanted == 0 or not group_sizes:
        return 0
    room = wanted if max_branches is None else min(wanted, max_branches - max(group_sizes))
    return max(0, room)


def prefetch_keys(jobs: Iterable[Job]) -> list[str]:
    """The checkpoint of every branch the jobs' starts will take, in the order they take them."""
    return [
        job.checkpoint_id
        for job in jobs
        for _ in range(job.group_size)
        if job.checkpoint_id is not None
    ]


def root_waves(job: Job, episodes_per_env: int) -> list[Job]:
    """A Root job as consecutive smaller groups that run on the same envs, so that each env
    plays up to ``episodes_per_env`` of the job's episodes one after another (a web env then
    starts its later episodes in the page it already loaded). Other jobs stay whole."""
    if job.kind is not StartKind.ROOT or episodes_per_env <= 1 or job.group_size <= 1:
        return [job]
    envs = -(-job.group_size // episodes_per_env)  # ceil: the envs each wave uses
    return [
        replace(job, group_size=min(envs, job.group_size - start))
        for start in range(0, job.group_size, envs)
    ]


def merge_groups(job: Job, parts: Sequence[Group]) -> Group:
    """The group of ``job`` from the groups of its waves (:func:`root_waves`), in wave order."""
    if len(parts) == 1:
        return parts[0]
    merged = Group(job, [], [])
    for part in parts:
        merged.decisions += part.decisions
        merged.rewards += part.rewards
        merged.cost = merged.cost + part.cost
    return merged
