"""Jobs: the scheduler's requests to the rollout layer, and the groups that answer them."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Literal

from adaroll.costs import Counters
from adaroll.envs.base import GUIEnv, TaskSpec
from adaroll.policies.base import Context, SampledAction
from adaroll.routes import VANILLA, Route, StartKind

log = logging.getLogger("adaroll")


Purpose = Literal["train", "routing", "reeval"]
"""Why a group is collected: ``train`` (it may enter an update), ``routing`` (a task's first
probes, which route it) or ``reeval`` (later probes that re-estimate a routed task's success:
Local re-evaluations, the forgetting monitor's, the bandit's). Probes of either kind are billed
alike; they only train with ``scheduler.train_probes``."""

PROBES: tuple[Purpose, ...] = ("routing", "reeval")
"""The purposes of probe groups (root rollouts that measure a task's success p(x)): a task's
first probes (``routing``) and its later ones (``reeval``)."""


@dataclass(frozen=True)
class Job:
    """One GRPO group to collect: ``group_size`` samples from one start of one task.

    ``purpose`` says whether the group may train (``train``) or only measures success for
    routing (``routing`` at a task's first visit, ``reeval`` later; :data:`Purpose`).
    """

    kind: StartKind
    task: TaskSpec
    group_size: int
    checkpoint_id: str | None = None
    purpose: Purpose = "train"
    baseline: bool = False
    """A group of the Vanilla baseline (billed under :data:`~adaroll.routes.VANILLA`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", StartKind(self.kind))  # a plain name is accepted too

    @property
    def route(self) -> Route:
        """The route whose groups start as this one does (:attr:`StartKind.route`)."""
        return self.kind.route

    @property
    def ledger_mode(self) -> str:
        """The group's ``mode`` in the ledger: its start kind, or ``vanilla``."""
        return VANILLA if self.baseline else self.kind.value


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


def close_quietly(env: GUIEnv) -> None:
    """Close an env that may be broken: a failure to clean up must not hide the fault that
    is being handled (nor stop the other envs from closing)."""
    try:
        env.close()
    except Exception as exc:  # noqa: BLE001 - logged, cleanup goes on
        log.warning("closing %s failed: %s", type(env).__name__, exc)
