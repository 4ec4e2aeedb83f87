"""Jobs: the scheduler's requests to the rollout layer, and the groups that answer them."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Literal

from adaroll.costs import Counters
from adaroll.envs.base import GUIEnv, TaskSpec
from adaroll.policies.base import Context, SampledAction

log = logging.getLogger("adaroll")


class StartKind(StrEnum):
    """Where a group starts (DESIGN.md 1.4); each kind has one start class in
    :mod:`adaroll.rollout.starts` that runs it. A ``StrEnum``: the ledger and logs write the
    plain value."""

    ONESTEP = "onestep"
    """At a checkpoint, one action per sample, rewarded by matching the expert's (no env)."""
    SUFFIX = "suffix"
    """From a branch of the checkpoint's snapshot, to the end of the episode."""
    ROOT = "root"
    """From a reset to the task, the whole episode."""


class Route(StrEnum):
    """Where the scheduler sends a task (DESIGN.md 1.5). Local is the route whose groups start
    one step at a pivot (:attr:`StartKind.ONESTEP`); Suffix and Root start as they are named."""

    UNROUTED = "unrouted"
    """Not yet routed: its routing probes come first."""
    LOCAL = "local"
    SUFFIX = "suffix"
    ROOT = "root"

    @property
    def start(self) -> StartKind | None:
        """The start kind of the route's training groups (None: unrouted, probes only)."""
        return _ROUTE_STARTS[self]


_ROUTE_STARTS = {
    Route.UNROUTED: None,
    Route.LOCAL: StartKind.ONESTEP,
    Route.SUFFIX: StartKind.SUFFIX,
    Route.ROOT: StartKind.ROOT,
}

Purpose = Literal["train", "routing", "reeval"]
"""Why a group is collected: ``train`` (it may enter an update), ``routing`` (a task's first
probes, which route it) or ``reeval`` (later probes that re-estimate a routed task's success:
Local re-evaluations, the forgetting monitor's, the bandit's). Probes of either kind are billed
alike; they only train with ``scheduler.train_probes``."""


@dataclass(frozen=True)
class Job:
    """One GRPO group to collect: ``group_size`` samples from one start of one task.

    ``mode`` is the ledger tag (onestep/suffix/root/vanilla); ``purpose`` says whether the
    group may train (``train``) or only measures success for routing (``routing`` at a task's
    first visit, ``reeval`` later; :data:`Purpose`).
    """

    kind: StartKind
    task: TaskSpec
    group_size: int
    checkpoint_id: str | None = None
    purpose: Purpose = "train"
    mode: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", StartKind(self.kind))  # a plain name is accepted too

    @property
    def ledger_mode(self) -> str:
        return self.mode or self.kind.value


@dataclass
class Decision:
    """One decision a sample made: what the policy saw and what it drew."""

    context: Context
    sample: SampledAction


Cost = Counters
"""What collecting something cost, in the ledger's units (:class:`~adaroll.costs.Counters`:
``faults`` counts failed attempts at collecting the group, ``restore_fallbacks`` restores whose
branch failed verification and were replaced by replaying the prefix)."""


class RolloutFailed(RuntimeError):
    """A job failed on ``max_retries + 1`` attempts in a row (faults kept recurring)."""


@dataclass
class Group:
    """A collected group: per sample its decisions and its reward."""

    job: Job
    decisions: list[list[Decision]]
    rewards: list[float]
    cost: Cost = field(default_factory=Cost)

    @property
    def success_rate(self) -> float:
        return sum(r > 0 for r in self.rewards) / len(self.rewards)


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


def close_quietly(env: GUIEnv) -> None:
    """Close an env that may be broken: a failure to clean up must not hide the fault that
    is being handled (nor stop the other envs from closing)."""
    try:
        env.close()
    except Exception as exc:  # noqa: BLE001 - logged, cleanup goes on
        log.warning("closing %s failed: %s", type(env).__name__, exc)
