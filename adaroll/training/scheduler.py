"""Schedulers decide *what* to train each iteration: which task, from which start, how far.

* :class:`HybridScheduler` - the paper's Stage II: route each task by its measured root success
  ``p(x)`` to Local (OneStep on pivots), Suffix (from a frontier pivot to the end) or Root
  (2 probes, update only when they differ); promotion is monotone Local -> Suffix -> Root.
* :class:`Stage1Scheduler` - Stage I: OneStep groups over all pivots, round robin.
* :class:`VanillaScheduler` - the baseline: Root groups of G for every task, always.

Decisions on the points the paper leaves open (tested in tests/training/test_scheduler.py):
* a task whose checkpoints all score <= tau_dis keeps its ``fallback_top_k`` highest-scoring
  checkpoints as pivots (so Local and Suffix always have somewhere to start);
* a task without any verified expert trajectory has no checkpoints: it is routed to Root;
* with several expert trajectories, the deepest pivot is the one with the largest step index;
* Local re-evaluation probes (``routing_probes`` root rollouts every ``local_reeval_every``
  visits) are ledgered with purpose ``routing``: they cost env steps but never train;
* pivot sets are scored once, with the policy that starts the phase.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from adaroll.config import GRPOConfig, SchedulerConfig
from adaroll.envs.base import TaskSpec
from adaroll.registry import Registry
from adaroll.rollout.jobs import Group, Job

MODES = ("unrouted", "local", "suffix", "root")
_RANK = {m: i for i, m in enumerate(MODES)}


def route_for(p: float, tau_low: float, tau_high: float) -> str:
    """Paper routing: p < tau_low -> local; tau_low <= p <= tau_high -> suffix; else root."""
    if p < tau_low:
        return "local"
    if p <= tau_high:
        return "suffix"
    return "root"


class Scheduler(ABC):
    """Plans jobs for an iteration and learns from the groups that come back."""

    @abstractmethod
    def plan(self, iteration: int) -> list[Job]: ...

    def observe(self, groups: Sequence[Group], iteration: int) -> None:  # noqa: B027
        """Update routing from collected groups (no-op for static schedulers)."""

    def route_counts(self) -> dict[str, int]:
        return {}

    @abstractmethod
    def state_dict(self) -> dict[str, Any]: ...

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None: ...


SCHEDULERS: Registry[Any] = Registry("scheduler")


class _RoundRobin:
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


@SCHEDULERS.register("vanilla")
class VanillaScheduler(Scheduler):
    """Root groups of ``group_size`` for ``tasks_per_iteration`` tasks, round robin."""

    def __init__(self, tasks: Sequence[TaskSpec], sched: SchedulerConfig, grpo: GRPOConfig,
                 **_: Any) -> None:  # fmt: skip
        self.order = _RoundRobin(tasks)
        self.sched, self.grpo = sched, grpo

    def plan(self, iteration: int) -> list[Job]:
        return [Job("root", t, self.grpo.group_size, mode="vanilla")
                for t in self.order.take(self.sched.tasks_per_iteration)]  # fmt: skip

    def route_counts(self) -> dict[str, int]:
        return {"root": len(self.order.items)}

    def state_dict(self) -> dict[str, Any]:
        return {"cursor": self.order.cursor}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.order.cursor = int(state["cursor"])


@SCHEDULERS.register("stage1")
class Stage1Scheduler(Scheduler):
    """OneStep groups over all pivots of all tasks, ``pivots_per_iteration`` per update, round
    robin (small batches made Adam's early steps drift the shared network more than they taught)."""

    def __init__(self, tasks: Sequence[TaskSpec], sched: SchedulerConfig, grpo: GRPOConfig,
                 pivots: Mapping[str, Sequence[str]], **_: Any) -> None:  # fmt: skip
        flat = [(t, c) for t in tasks for c in pivots.get(t.id, ())]
        self.order = _RoundRobin(flat)
        self.sched, self.grpo = sched, grpo

    def plan(self, iteration: int) -> list[Job]:
        return [Job("onestep", t, self.grpo.group_size, checkpoint_id=c)
                for t, c in self.order.take(self.sched.pivots_per_iteration)]  # fmt: skip

    def route_counts(self) -> dict[str, int]:
        return {"local": len({t.id for t, _ in self.order.items})}

    def state_dict(self) -> dict[str, Any]:
        return {"cursor": self.order.cursor}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.order.cursor = int(state["cursor"])


@dataclass
class TaskRoute:
    """Routing state of one task."""

    mode: str = "unrouted"
    p: float | None = None
    pivots: list[str] = field(default_factory=list)
    """Checkpoint ids of the task's pivots, earliest first."""
    frontier: int = -1
    """Index into ``pivots`` where Suffix rollouts start."""
    visits: int = 0
    transitions: list[tuple[int, str]] = field(default_factory=list)
    """(iteration, new mode) whenever the mode changed."""


@SCHEDULERS.register("hybrid")
class HybridScheduler(Scheduler):
    """The paper's Stage II scheduler (see the module docstring for the open-point decisions)."""

    def __init__(self, tasks: Sequence[TaskSpec], sched: SchedulerConfig, grpo: GRPOConfig,
                 pivots: Mapping[str, Sequence[str]], **_: Any) -> None:  # fmt: skip
        self.sched, self.grpo = sched, grpo
        self.tasks = {t.id: t for t in tasks}
        self.order = _RoundRobin(list(self.tasks))
        self.routes = {t.id: TaskRoute(pivots=list(pivots.get(t.id, ()))) for t in tasks}

    # -- planning ---------------------------------------------------------------------------
    def plan(self, iteration: int) -> list[Job]:
        jobs: list[Job] = []
        for task_id in self.order.take(self.sched.tasks_per_iteration):
            jobs.extend(self._jobs_for(task_id))
        return jobs

    def _jobs_for(self, task_id: str) -> list[Job]:
        route, task = self.routes[task_id], self.tasks[task_id]
        route.visits += 1
        routing = Job("root", task, self.sched.routing_probes, purpose="routing")
        if route.mode == "unrouted":
            return [routing]
        if route.mode == "local":
            jobs = [Job("onestep", task, self.grpo.group_size, checkpoint_id=c) for c in route.pivots]
            if route.visits % self.sched.local_reeval_every == 0:
                jobs.append(routing)
            return jobs
        if route.mode == "suffix":
            checkpoint = route.pivots[route.frontier]
            return [Job("suffix", task, self.grpo.group_size, checkpoint_id=checkpoint)]
        return [Job("root", task, self.sched.root_probes)]

    # -- learning from outcomes ---------------------------------------------------------------
    def observe(self, groups: Sequence[Group], iteration: int) -> None:
        for group in groups:
            route = self.routes[group.job.task.id]
            if group.job.purpose == "routing":
                route.p = group.success_rate
                self._promote(route, route_for(route.p, self.sched.tau_low, self.sched.tau_high),
                              iteration)  # fmt: skip
            elif group.job.kind == "suffix" and group.success_rate > self.sched.tau_suffix:
                if route.frontier > 0:
                    route.frontier -= 1
                else:
                    self._promote(route, "root", iteration)

    def _promote(self, route: TaskRoute, mode: str, iteration: int) -> None:
        if not route.pivots and mode in ("local", "suffix"):
            mode = "root"  # nothing to start from but the task root
        if _RANK[mode] <= _RANK[route.mode]:
            return  # monotone: never back
        route.mode = mode
        if mode == "suffix":
            route.frontier = len(route.pivots) - 1
        route.transitions.append((iteration, mode))

    def route_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(MODES, 0)
        for route in self.routes.values():
            counts[route.mode] += 1
        return counts

    def state_dict(self) -> dict[str, Any]:
        return {"cursor": self.order.cursor,
                "routes": {k: asdict(v) for k, v in self.routes.items()}}  # fmt: skip

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.order.cursor = int(state["cursor"])
        for task_id, data in state["routes"].items():
            data = dict(data)
            data["transitions"] = [tuple(t) for t in data.get("transitions", [])]
            self.routes[task_id] = TaskRoute(**data)
