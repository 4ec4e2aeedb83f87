"""What every scheduler shares: the :class:`Scheduler` contract, the registries that pick one
by name, the round-robin cursor and the task order it walks. The schedulers themselves live in
:mod:`adaroll.training.scheduler` (vanilla, Stage I / one-step, the paper's Stage II) and
:mod:`adaroll.training.bandit_scheduler` (the bandit Stage II router); both import this module
and neither imports the other's internals."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from adaroll.envs.base import TaskSpec
from adaroll.registry import Registry
from adaroll.rollout.jobs import Group, Job


class Scheduler(ABC):
    """Plans jobs for an iteration and learns from the groups that come back."""

    @abstractmethod
    def plan(self, iteration: int) -> list[Job]: ...

    def observe(self, groups: Sequence[Group], iteration: int) -> None:  # noqa: B027
        """Update routing from collected groups (no-op for static schedulers)."""

    def route_counts(self) -> dict[str, int]:
        """How many tasks each :class:`~adaroll.routes.Route` holds (by its value)."""
        return {}

    def expand(self, groups: Sequence[Group]) -> dict[int, Job]:
        """More rollouts for some of the groups just collected, before the update: group index
        -> a job of the same start whose samples join that group (Root probe-then-expand). The
        trainer collects them, bills them and merges them in. None by default."""
        return {}

    def add_pivots(  # noqa: B027
        self, task_id: str, pivots: Sequence[str], weights: Mapping[str, float], iteration: int
    ) -> None:
        """Give a task without pivots the self-generated ``pivots`` (earliest first) and their
        OneStep draw ``weights`` (empty: hard gate). No-op for schedulers without pivot routing."""

    @abstractmethod
    def state_dict(self) -> dict[str, Any]: ...

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None: ...


SCHEDULERS: Registry[Any] = Registry("scheduler")
"""Schedulers by ``TrainConfig.algorithm``: ``SCHEDULERS.get(name)(tasks=, sched=, grpo=,
pivots=, pivot_weights=, seed=)``."""

ROUTERS: Registry[Any] = Registry("stage II routing")
"""Stage II schedulers by ``SchedulerConfig.routing`` (the ``hybrid`` scheduler builds one):
``thresholds`` (the paper's) and ``bandit``."""


def interleave_templates(tasks: Sequence[TaskSpec]) -> list[TaskSpec]:
    """``tasks`` dealt one template at a time (templates in order of first appearance, each
    template's tasks in their order), so that every run of consecutive tasks a round-robin
    batch takes mixes the templates. A suite that lists a split template by template (the web's,
    BrowserGym's) would otherwise give each iteration one or two templates, whose groups then
    tend to share one outcome; a split already dealt this way (the phone's, Gymnasium's) comes
    back unchanged."""
    by_template: dict[str, list[TaskSpec]] = {}
    for task in tasks:
        by_template.setdefault(task.template, []).append(task)
    rounds = max((len(group) for group in by_template.values()), default=0)
    return [group[r] for r in range(rounds) for group in by_template.values() if r < len(group)]


class RoundRobin:
    """A cursor over a fixed list, serialisable as one integer."""

    def __init__(self, items: Sequence[Any]) -> None:
        self.items = list(items)
        self.cursor = 0

    def take(self, n: int) -> list[Any]:
        if not self.items:
            return []
        n = min(n, len(self.items))
        out = [self.items[(self.cursor + k) % len(self.items)] for k in range(n)]
        self.cursor = (self.cursor + n) % len(self.items)
        return out
