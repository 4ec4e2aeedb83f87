"""Stage II with ``routing="bandit"`` (an option; the paper's thresholds are the default): start
and horizon per task chosen by a discounted UCB over the *root success gained per unit of
cost*, measured by counted root probes (issue 12's redesign of issue 9's bandit)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from adaroll.algos.progress import ucb_progress_per_cost
from adaroll.config import GRPOConfig, SchedulerConfig
from adaroll.envs.base import TaskSpec
from adaroll.rollout.jobs import PROBES, Group, Job
from adaroll.routes import ROUTED, Route, StartKind
from adaroll.training.scheduler_base import ROUTERS, RoundRobin, Scheduler


@dataclass(frozen=True)
class Arm:
    """One arm of a task's bandit: a route (Local, Suffix or Root) and, for Suffix, the index of
    the pivot its group starts from. Written (states, ``str``) as ``local``, ``suffix:k`` and
    ``root``, the names the bandit has always used; :meth:`parse` reads them back."""

    route: Route
    pivot: int | None = None
    """Suffix only: the index of the start pivot in the task's pivot list."""

    def __post_init__(self) -> None:
        if self.route not in ROUTED:
            raise ValueError(f"a bandit arm's route is local, suffix or root, not {self.route!r}")
        if (self.route is Route.SUFFIX) != (self.pivot is not None) or (self.pivot or 0) < 0:
            raise ValueError(
                f"a bandit arm has a pivot index >= 0 exactly when it is suffix: "
                f"{self.route.value} with pivot {self.pivot!r}"
            )

    def __str__(self) -> str:
        return f"suffix:{self.pivot}" if self.route is Route.SUFFIX else self.route.value

    @classmethod
    def parse(cls, text: str) -> Arm:
        """The arm written as ``text`` (``local``, ``suffix:k`` or ``root``)."""
        name, _, pivot = str(text).partition(":")
        try:
            if name == Route.SUFFIX.value:
                return cls(Route.SUFFIX, int(pivot))
            if not pivot:
                return cls(Route(name))
        except ValueError:
            pass
        raise ValueError(f"unknown bandit arm {text!r}; valid: local, suffix:K (K >= 0), root")

    def pool_key(self, depth: int) -> str:
        """The key the arm's statistics are pooled under over all tasks, for a task with
        ``depth`` pivots: local, root, or suffix-j (j-th pivot counted from the deepest)."""
        if self.route is not Route.SUFFIX:
            return self.route.value
        return f"suffix-{depth - 1 - (self.pivot or 0)}"


LOCAL_ARM, ROOT_ARM = Arm(Route.LOCAL), Arm(Route.ROOT)


@ROUTERS.register("bandit")
class BanditScheduler(Scheduler):
    """Stage II with ``routing="bandit"``: per task, a discounted UCB chooses start and horizon.

    A task's arms are ``local`` (OneStep groups on all its pivots: horizon one action),
    ``suffix:k`` (a group from pivot ``k`` to the end) and ``root`` (``root_probes`` rollouts of
    the whole task); a task without pivots has only ``root``.

    What an arm is worth is what the method is for: success on the task *from its start*. Every
    ``bandit_probe_every`` visits of a task (and at its first) ``routing_probes`` root rollouts
    (purpose routing at the first visit, reeval later; on the bill) estimate its success p(x)
    with the policy as it stands. The change of p(x) between two probes is the *progress* of the
    pulls made in between, shared among them in proportion to their cost. A pull's *cost* is its
    env steps plus ``bandit_sample_cost`` per policy sample (the price of a sample in env-step
    units, a documented input of the cost model). So a Local arm whose expert-match rewards vary
    forever but whose root success stays flat earns nothing and loses its pull; an arm whose
    pulls are followed by rising success keeps it.

    The arm with the highest optimistic progress per unit cost is pulled
    (:func:`~adaroll.algos.progress.ucb_progress_per_cost`; ties to the earlier arm in the order
    local, deepest suffix ... earliest suffix, root). A task's untried arm borrows, as one
    pseudo-pull, the pooled statistics of its kind over all tasks (local, root, or suffix from the
    j-th pivot counted from the deepest); a kind no task has tried scores ``inf`` and is tried
    first (by one task per iteration). A task's statistics are multiplied by ``bandit_discount``
    at each of its pulls (the pooled ones at each pull of their kind), so old evidence fades as
    the policy changes; a pull counts at once, its progress when the next probe measures it. Tasks are visited round robin; ``route_counts`` reports the mode of each
    task's last pull.
    """

    def __init__(
        self,
        tasks: Sequence[TaskSpec],
        sched: SchedulerConfig,
        grpo: GRPOConfig,
        pivots: Mapping[str, Sequence[str]],
        **_: Any,
    ) -> None:
        self.sched, self.grpo = sched, grpo
        self.tasks = {t.id: t for t in tasks}
        self.order = RoundRobin(list(self.tasks))
        self.pivots = {t.id: list(pivots.get(t.id, ())) for t in tasks}
        self.stats: dict[str, dict[Arm, list[float]]] = {
            t: {arm: [0.0, 0.0, 0.0] for arm in self._arms(t)} for t in self.tasks
        }
        """Per task and arm: discounted [pulls, progress sum, cost sum]."""
        self.pooled: dict[str, list[float]] = {}
        """Per pool key over all tasks (:meth:`_pool_key`): discounted [pulls, progress, cost]."""
        self.modes = dict.fromkeys(self.tasks, Route.UNROUTED)
        self.visits = dict.fromkeys(self.tasks, 0)
        self.success: dict[str, float | None] = dict.fromkeys(self.tasks)
        """Per task, p(x) at its last probe (None before the first)."""
        self.pending: dict[str, list[tuple[Arm, float]]] = {t: [] for t in self.tasks}
        """Per task, the (arm, cost) of every pull since its last probe, awaiting their progress."""

    def _arms(self, task_id: str) -> list[Arm]:
        depth = len(self.pivots[task_id])
        if not depth:
            return [ROOT_ARM]
        return [LOCAL_ARM, *(Arm(Route.SUFFIX, k) for k in reversed(range(depth))), ROOT_ARM]

    def _pool_key(self, task_id: str, arm: Arm) -> str:
        """The pooled key of an arm (:meth:`Arm.pool_key`)."""
        return arm.pool_key(len(self.pivots[task_id]))

    def choose(self, task_id: str, claimed: frozenset[str] = frozenset()) -> Arm:
        """The arm to pull next for a task; untried ``claimed`` kinds (being tried by another task
        this iteration) are left out unless nothing else is left."""
        names: list[Arm] = []
        counts, progress, costs = [], [], []
        for arm, (n, gain, cost) in self.stats[task_id].items():
            kind = self._pool_key(task_id, arm)
            pool = self.pooled.get(kind, [0.0, 0.0, 0.0])
            if n <= 0 and pool[0] > 0:  # untried here: one pseudo-pull of the kind's mean
                n, gain, cost = 1.0, pool[1] / pool[0], pool[2] / pool[0]
            elif n <= 0 and kind in claimed:
                continue
            names.append(arm)
            counts.append(n)
            progress.append(gain)
            costs.append(cost)
        if not names:
            return next(iter(self.stats[task_id]))
        scores = ucb_progress_per_cost(counts, progress, costs, self.sched.bandit_exploration)
        return names[scores.index(max(scores))]

    def plan(self, iteration: int) -> list[Job]:
        jobs: list[Job] = []
        claimed: set[str] = set()
        for task_id in self.order.take(self.sched.tasks_per_iteration):
            self.visits[task_id] += 1
            first = self.success[task_id] is None
            if first or self.visits[task_id] % self.sched.bandit_probe_every == 0:
                jobs.append(
                    Job(
                        StartKind.ROOT,
                        self.tasks[task_id],
                        self.sched.routing_probes,
                        purpose="routing" if first else "reeval",
                    )
                )
            arm = self.choose(task_id, frozenset(claimed))
            if self._pool_key(task_id, arm) not in self.pooled:
                claimed.add(self._pool_key(task_id, arm))
            self.modes[task_id] = arm.route
            jobs.extend(self._jobs(task_id, arm))
        return jobs

    def _jobs(self, task_id: str, arm: Arm) -> list[Job]:
        task, pivots, start = self.tasks[task_id], self.pivots[task_id], arm.route.start
        if arm.route is Route.ROOT:
            return [Job(start, task, self.sched.root_probes)]
        if arm.route is Route.LOCAL:
            return [Job(start, task, self.grpo.group_size, checkpoint_id=c) for c in pivots]
        assert arm.pivot is not None  # a Suffix arm (Arm checks it)
        return [Job(start, task, self.grpo.group_size, checkpoint_id=pivots[arm.pivot])]

    def _arm_of(self, job: Job) -> Arm | None:
        """The arm a train job was pulled for (None: a Suffix start at no pivot of the task)."""
        if job.route is not Route.SUFFIX:
            return Arm(job.route)
        pivots = self.pivots[job.task.id]
        if job.checkpoint_id in pivots:
            return Arm(Route.SUFFIX, pivots.index(job.checkpoint_id))
        return None

    def observe(self, groups: Sequence[Group], iteration: int) -> None:
        # A probe measured the policy before this iteration's update: it settles the pulls of
        # earlier visits first; this iteration's pulls then wait for the next probe.
        for group in groups:
            if group.job.purpose in PROBES:
                self._settle(group.job.task.id, sum(group.rewards) / max(len(group.rewards), 1))
        pulls: dict[tuple[str, Arm], float] = {}
        for group in groups:
            arm = self._arm_of(group.job)
            if (
                group.job.purpose == "train"
                and arm is not None
                and arm in self.stats[group.job.task.id]
            ):
                key = (group.job.task.id, arm)
                pulls[key] = (
                    pulls.get(key, 0.0)
                    + group.cost.env_steps
                    + self.sched.bandit_sample_cost * group.cost.policy_samples
                )
        gamma = self.sched.bandit_discount
        for (task_id, arm), cost in pulls.items():
            cost = max(cost, 1.0)
            stats = self.stats[task_id]
            for entry in stats.values():
                entry[:] = [v * gamma for v in entry]
            pool = self.pooled.setdefault(self._pool_key(task_id, arm), [0.0, 0.0, 0.0])
            pool[:] = [v * gamma for v in pool]
            for entry in (stats[arm], pool):  # counted now; its progress comes with the next probe
                entry[0] += 1
                entry[2] += cost
            self.pending[task_id].append((arm, cost))

    def _settle(self, task_id: str, success: float) -> None:
        """Credit the change of p(x) since the last probe to the pulls made in between, in
        proportion to their cost."""
        before, self.success[task_id] = self.success[task_id], success
        pulls, self.pending[task_id] = self.pending[task_id], []
        if before is None or not pulls:
            return
        gain, total = success - before, sum(cost for _, cost in pulls)
        for arm, cost in pulls:
            if arm in self.stats[task_id]:
                share = gain * cost / total
                self.stats[task_id][arm][1] += share
                self.pooled[self._pool_key(task_id, arm)][1] += share

    def add_pivots(
        self, task_id: str, pivots: Sequence[str], weights: Mapping[str, float], iteration: int
    ) -> None:
        """Self-generated pivots for a task that had none: its Local and Suffix arms open, untried
        (so they are pulled next); its Root statistics are kept."""
        if self.pivots[task_id] or not pivots:
            return
        self.pivots[task_id] = list(pivots)
        root = self.stats[task_id][ROOT_ARM]
        self.stats[task_id] = {arm: [0.0, 0.0, 0.0] for arm in self._arms(task_id)}
        self.stats[task_id][ROOT_ARM] = root

    def route_counts(self) -> dict[str, int]:
        counts = {route.value: 0 for route in Route}
        for mode in self.modes.values():
            counts[mode] += 1
        return counts

    def state_dict(self) -> dict[str, Any]:
        """The state as the trainer stores it (JSON): arms written by name (:class:`Arm`)."""
        return {
            "cursor": self.order.cursor,
            "pivots": self.pivots,
            "stats": {
                t: {str(arm): entry for arm, entry in arms.items()}
                for t, arms in self.stats.items()
            },
            "pooled": self.pooled,
            "modes": self.modes,
            "visits": self.visits,
            "success": self.success,
            "pending": {
                t: [(str(arm), cost) for arm, cost in entries]
                for t, entries in self.pending.items()
            },
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.order.cursor = int(state["cursor"])
        self.pivots = {t: list(p) for t, p in state["pivots"].items()}
        self.stats = {
            t: {Arm.parse(arm): [float(v) for v in entry] for arm, entry in arms.items()}
            for t, arms in state["stats"].items()
        }
        self.pooled = {kind: [float(v) for v in entry] for kind, entry in state["pooled"].items()}
        self.modes = {t: Route(mode) for t, mode in state["modes"].items()}
        self.visits = {t: int(v) for t, v in state["visits"].items()}
        self.success = {t: None if v is None else float(v) for t, v in state["success"].items()}
        self.pending = {
            t: [(Arm.parse(arm), float(cost)) for arm, cost in entries]
            for t, entries in state["pending"].items()
        }
