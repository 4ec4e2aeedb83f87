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
  visits) are ledgered with purpose ``reeval`` (a task's first probes: ``routing``): they cost
  env steps but never train;
* pivot sets are scored once, with the policy that starts the phase.

Options beyond the paper (off by default; tests/training/test_pivot_options.py):
* continuous pivot weights (``pivots.temperature > 0``): OneStep starts are drawn afresh at each
  Stage I iteration / Local visit from per-checkpoint probabilities (:meth:`_sampled_plan`,
  :meth:`_onestep_starts`), seeded by (run seed, iteration or visit) so a resumed run redraws the
  same; Suffix frontiers keep the hard pivot set;
* self-generated pivots (``pivots.self_pool``): :meth:`Scheduler.add_pivots` hands a task
  without pivots the ones found on the policy's own successful rollouts.

Forgetting, frontier and routing options (issue 9; tests/training/test_scheduler_options.py),
all off by default (the paper's thresholds route):
* ``demotion`` - a forgetting monitor over the root outcomes of Suffix and Root tasks (Root
  tasks' own probes, periodic re-evaluation probes for Suffix tasks) demotes Root -> Suffix ->
  Local on a confident drop (one-sided Wilson upper bound below a threshold); promotion then
  works again (:meth:`HybridScheduler._monitor`);
* ``replay_share`` - OneStep replay on the pivots of mastered (Root) tasks
  (:meth:`HybridScheduler._replay_jobs`);
* ``frontier="progress"`` - the Suffix frontier follows learning progress, not tau_suffix
  (:meth:`HybridScheduler._progress_step`);
* ``routing="bandit"`` - :class:`~adaroll.training.bandit_scheduler.BanditScheduler`
  replaces the thresholds by a discounted UCB over start and horizon per task (the ``hybrid``
  entry builds the router ``routing`` names, from :data:`~adaroll.training.scheduler_base.ROUTERS`).

A Hybrid that spends its budget learning (issue 40; tests/training/test_learning_options.py),
each off by default:
* ``routing_estimate`` - a task's first visit is routed by the zero-env-cost estimate of
  :class:`~adaroll.training.route_estimate.RouteEstimator` (calibrated on the probes of the
  first ``routing_calibration`` tasks) instead of probes, and trains at once
  (:meth:`HybridScheduler._route_by_estimate`);
* ``reeval="near"`` - a Local task is re-probed only when its running estimate comes near
  tau_low, one probe per visit, stopping at the first success that already promotes it, with
  backoff (:meth:`HybridScheduler._near_probe`, :meth:`HybridScheduler._sequential`);
* ``root_expand`` - a Root visit whose probes differ (or whose estimate is low) grows to a whole
  group (:meth:`HybridScheduler.expand`, run by the trainer after the first collection).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from adaroll.algos.pivots import draw_independent, draw_weighted
from adaroll.algos.progress import slope, wilson_upper
from adaroll.config import ConfigError, GRPOConfig, SchedulerConfig
from adaroll.envs.base import TaskSpec
from adaroll.rollout.jobs import PROBES, Group, Job
from adaroll.routes import Route, StartKind
from adaroll.seeding import derive_seed
from adaroll.training import bandit_scheduler  # noqa: F401 - registers the bandit router
from adaroll.training.route_estimate import RouteEstimator
from adaroll.training.scheduler_base import ROUTERS, SCHEDULERS, RoundRobin, Scheduler

__all__ = [
    "ROUTERS",
    "SCHEDULERS",
    "HybridScheduler",
    "RoundRobin",
    "Scheduler",
    "Stage1Scheduler",
    "VanillaScheduler",
    "route_for",
]


def route_for(p: float, tau_low: float, tau_high: float) -> Route:
    """Paper routing: p < tau_low -> local; tau_low <= p <= tau_high -> suffix; else root."""
    if p < tau_low:
        return Route.LOCAL
    if p <= tau_high:
        return Route.SUFFIX
    return Route.ROOT


@SCHEDULERS.register("vanilla")
class VanillaScheduler(Scheduler):
    """Root groups of ``group_size`` for ``tasks_per_iteration`` tasks, round robin."""

    def __init__(
        self, tasks: Sequence[TaskSpec], sched: SchedulerConfig, grpo: GRPOConfig, **_: Any
    ) -> None:
        self.order = RoundRobin(tasks)
        self.sched, self.grpo = sched, grpo

    def plan(self, iteration: int) -> list[Job]:
        return [
            Job(StartKind.ROOT, t, self.grpo.group_size, baseline=True)
            for t in self.order.take(self.sched.tasks_per_iteration)
        ]

    def route_counts(self) -> dict[str, int]:
        return {Route.ROOT: len(self.order.items)}

    def state_dict(self) -> dict[str, Any]:
        return {"cursor": self.order.cursor}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.order.cursor = int(state["cursor"])


@SCHEDULERS.register("stage1")
@SCHEDULERS.register("onestep")
class Stage1Scheduler(Scheduler):
    """OneStep groups over all pivots of all tasks, ``pivots_per_iteration`` per update, round
    robin (small batches made Adam's early steps drift the shared network more than they taught)."""

    def __init__(
        self,
        tasks: Sequence[TaskSpec],
        sched: SchedulerConfig,
        grpo: GRPOConfig,
        pivots: Mapping[str, Sequence[str]],
        pivot_weights: Mapping[str, Mapping[str, float]] | None = None,
        seed: int = 0,
        **_: Any,
    ) -> None:
        flat = [(t, c) for t in tasks for c in pivots.get(t.id, ())]
        self.order = RoundRobin(flat)
        self.sched, self.grpo = sched, grpo
        weights = pivot_weights or {}
        self.weighted = [(t, c, w) for t in tasks for c, w in weights.get(t.id, {}).items()]
        self.seed = seed

    def plan(self, iteration: int) -> list[Job]:
        if self.weighted:
            return self._sampled_plan(iteration)
        return [
            Job(Route.LOCAL.start, t, self.grpo.group_size, checkpoint_id=c)
            for t, c in self.order.take(self.sched.pivots_per_iteration)
        ]

    def _sampled_plan(self, iteration: int) -> list[Job]:
        """Continuous pivot weights: ``pivots_per_iteration`` distinct checkpoints of all tasks,
        drawn in proportion to their weights (the batch size stays the hard gate's)."""
        rng = random.Random(derive_seed(self.seed, "stage1-pivots", iteration))
        weights = [w for _, _, w in self.weighted]
        drawn = draw_weighted(weights, self.sched.pivots_per_iteration, rng)
        return [
            Job(
                Route.LOCAL.start,
                self.weighted[i][0],
                self.grpo.group_size,
                checkpoint_id=self.weighted[i][1],
            )
            for i in drawn
        ]

    def route_counts(self) -> dict[str, int]:
        return {Route.LOCAL: len({t.id for t, _ in self.order.items})}

    def state_dict(self) -> dict[str, Any]:
        return {"cursor": self.order.cursor}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.order.cursor = int(state["cursor"])


@dataclass
class TaskRoute:
    """Routing state of one task."""

    mode: Route = Route.UNROUTED
    """The task's current route."""
    p: float | None = None
    pivots: list[str] = field(default_factory=list)
    """Checkpoint ids of the task's pivots, earliest first."""
    frontier: int = -1
    """Index into ``pivots`` where Suffix rollouts start."""
    visits: int = 0
    transitions: list[tuple[int, Route]] = field(default_factory=list)
    """(iteration, new route) whenever the route changed."""
    weights: dict[str, float] = field(default_factory=dict)
    """Continuous pivot weights: OneStep draw probability of each of the task's checkpoints
    (empty: every pivot at every Local visit, the paper's hard gate)."""
    outcomes: list[int] = field(default_factory=list)
    """demotion: recent root outcomes (1/0) since the mode last changed, oldest first."""
    progress: list[float] = field(default_factory=list)
    """frontier=progress: success rates of the groups at the current frontier, oldest first."""
    estimated: bool = False
    """routing_estimate: the task was routed by its estimate, not by probes."""
    sequence: list[int] | None = None
    """reeval=near: the outcomes (1/0) of the re-evaluation under way, one probe per visit;
    None when none is."""
    next_reeval: int = 0
    """reeval=near: the visit from which the next re-evaluation may start."""
    reeval_misses: int = 0
    """reeval=near: re-evaluations that did not promote the task (each doubles the wait)."""


@ROUTERS.register("thresholds")
class HybridScheduler(Scheduler):
    """The paper's Stage II scheduler (see the module docstring for the open-point decisions)."""

    def __init__(
        self,
        tasks: Sequence[TaskSpec],
        sched: SchedulerConfig,
        grpo: GRPOConfig,
        pivots: Mapping[str, Sequence[str]],
        pivot_weights: Mapping[str, Mapping[str, float]] | None = None,
        seed: int = 0,
        estimator: RouteEstimator | None = None,
        **_: Any,
    ) -> None:
        self.sched, self.grpo = sched, grpo
        self.tasks = {t.id: t for t in tasks}
        self.order = RoundRobin(list(self.tasks))
        weights = pivot_weights or {}
        self.routes = {
            t.id: TaskRoute(pivots=list(pivots.get(t.id, ())), weights=dict(weights.get(t.id, {})))
            for t in tasks
        }
        self.seed = seed
        self.replay_cursor = 0
        """replay_share: index (in task order) where the next search for a Root task to replay
        starts."""
        self.estimator = estimator
        self.calibration = set(self.order.items[: sched.routing_calibration])
        """routing_estimate: the tasks probed (as the paper does) to calibrate the estimate."""
        self._check_estimates()

    def _check_estimates(self) -> None:
        """The options that read the estimate need one, for every task they estimate."""
        sched = self.sched
        if sched.routing_calibration > len(self.tasks):
            raise ConfigError(
                f"rl.scheduler.routing_calibration ({sched.routing_calibration}) is larger "
                f"than the train split ({len(self.tasks)} tasks)"
            )
        needs = sched.routing_estimate != "probes" or sched.reeval == "near"
        if sched.root_expand_below is not None:
            needs = True
        if needs and self.estimator is None:
            raise ConfigError(
                "rl.scheduler: routing_estimate, reeval=near and root_expand_below read the "
                "routing estimate, and this phase has none (its pivot file predates the match "
                "shares it is built from: score the pivots again)"
            )
        if sched.routing_estimate != "probes":
            assert self.estimator is not None
            bare = [t for t in self.tasks if not self.estimator.has(t)]
            if bare:
                raise ConfigError(
                    f"rl.scheduler.routing_estimate={sched.routing_estimate}: {len(bare)} train "
                    f"task(s) have no expert checkpoints to estimate from (e.g. {bare[0]}); "
                    "use routing_estimate=probes"
                )

    # -- planning ---------------------------------------------------------------------------
    def plan(self, iteration: int) -> list[Job]:
        jobs: list[Job] = []
        for task_id in self.order.take(self.sched.tasks_per_iteration):
            jobs.extend(self._jobs_for(task_id, iteration))
        jobs.extend(self._replay_jobs())
        return jobs

    def _jobs_for(self, task_id: str, iteration: int = 0) -> list[Job]:
        route, task = self.routes[task_id], self.tasks[task_id]
        route.visits += 1
        if route.mode == Route.UNROUTED and self._routes_by_estimate(task_id):
            self._route_by_estimate(task_id, iteration)
        if route.mode == Route.UNROUTED:
            return [Job(StartKind.ROOT, task, self.sched.routing_probes, purpose="routing")]
        reeval = Job(StartKind.ROOT, task, self.sched.routing_probes, purpose="reeval")
        start = route.mode.start
        if route.mode == Route.LOCAL:
            jobs = [
                Job(start, task, self.grpo.group_size, checkpoint_id=c)
                for c in self._onestep_starts(task_id, route)
            ]
            if self.sched.reeval == "near":
                jobs.extend(self._near_probe(task_id, route))
            elif route.visits % self.sched.local_reeval_every == 0:
                jobs.append(reeval)
            return jobs
        if route.mode == Route.SUFFIX:
            checkpoint = route.pivots[route.frontier]
            jobs = [Job(start, task, self.grpo.group_size, checkpoint_id=checkpoint)]
            if self.sched.demotion and route.visits % self.sched.monitor_every == 0:
                jobs.append(reeval)  # the forgetting monitor's probe: Suffix runs no root
            return jobs
        return [Job(start, task, self.sched.root_probes)]

    # -- routing from the estimate, re-evaluation near the threshold --------------------------
    def _routes_by_estimate(self, task_id: str) -> bool:
        """Whether an unrouted task is routed by its estimate now: the option is on, the task
        is not one of the calibration tasks, and every calibration task has been probed."""
        if self.sched.routing_estimate == "probes" or task_id in self.calibration:
            return False
        return all(self.routes[t].mode != Route.UNROUTED for t in self.calibration)

    def _route_by_estimate(self, task_id: str, iteration: int) -> None:
        assert self.estimator is not None
        route = self.routes[task_id]
        route.p, route.estimated = self.estimator.estimate(task_id), True
        assert route.p is not None
        self._promote(route, route_for(route.p, self.sched.tau_low, self.sched.tau_high), iteration)

    def _near_probe(self, task_id: str, route: TaskRoute) -> list[Job]:
        """reeval=near: this Local visit's probe - the next of a re-evaluation under way, or the
        first of one when the task's estimate has come within ``reeval_margin`` of tau_low and
        its backoff has passed - or none."""
        if route.sequence is None:
            estimate = self.estimator.estimate(task_id) if self.estimator else None
            near = (
                estimate is not None and estimate >= self.sched.tau_low - self.sched.reeval_margin
            )
            if not near or route.visits < route.next_reeval:
                return []
            route.sequence = []
        return [Job(StartKind.ROOT, self.tasks[task_id], 1, purpose="reeval")]

    def _sequential(self, route: TaskRoute, group: Group, iteration: int) -> None:
        """reeval=near: add a probe's outcome to the re-evaluation under way; promote at the
        first success that settles it (``ceil(tau_low x routing_probes)`` of
        ``routing_probes``), stop when that is out of reach, and back off."""
        assert route.sequence is not None
        route.sequence += [int(r > 0) for r in group.rewards]
        probes, wins = self.sched.routing_probes, sum(route.sequence)
        needed = max(1, math.ceil(self.sched.tau_low * probes - 1e-9))
        if wins >= needed:
            route.p = wins / probes  # the least p(x) the whole pass could still give
            route.sequence = None
            self._promote(
                route, route_for(route.p, self.sched.tau_low, self.sched.tau_high), iteration
            )
        elif wins + probes - len(route.sequence) < needed:
            route.p, route.sequence = wins / probes, None
            route.reeval_misses += 1
            wait = self.sched.local_reeval_every * 2 ** min(route.reeval_misses, 6)
            route.next_reeval = route.visits + wait

    # -- Root probe-then-expand ---------------------------------------------------------------
    def expand(self, groups: Sequence[Group]) -> dict[int, Job]:
        """root_expand: the Root visits whose probes differ (or whose task's estimate is below
        ``root_expand_below``) grow to a whole group: group index -> the extra rollouts' job."""
        if not self.sched.root_expand:
            return {}
        out = {}
        for g, group in enumerate(groups):
            job = group.job
            if job.kind is not StartKind.ROOT or job.purpose != "train":
                continue
            extra = self.grpo.group_size - len(group.rewards)
            if extra <= 0:
                continue
            differ = len(set(group.rewards)) > 1
            bound = self.sched.root_expand_below
            estimate = self.estimator.estimate(job.task.id) if self.estimator else None
            low = bound is not None and estimate is not None and estimate < bound
            if differ or low:
                out[g] = replace(job, group_size=extra)
        return out

    # -- learning from outcomes ---------------------------------------------------------------
    def observe(self, groups: Sequence[Group], iteration: int) -> None:
        for group in groups:
            route = self.routes[group.job.task.id]
            mode_before = route.mode
            self._update_estimate(group)
            if group.job.purpose == "reeval" and route.sequence is not None:
                if route.mode == Route.LOCAL:
                    self._sequential(route, group, iteration)
                else:
                    route.sequence = None
            elif group.job.purpose in PROBES:
                route.p = group.success_rate
                self._promote(
                    route, route_for(route.p, self.sched.tau_low, self.sched.tau_high), iteration
                )
            elif group.job.route is Route.SUFFIX and route.mode == Route.SUFFIX:
                self._move_frontier(route, group, iteration)
            if (
                self.sched.demotion
                and group.job.kind is StartKind.ROOT
                and route.mode == mode_before
            ):
                self._monitor(route, group, iteration)

    def _update_estimate(self, group: Group) -> None:
        """The estimate learns from the task's own groups: probes calibrate it, one-step groups
        renew their checkpoint's factor."""
        if self.estimator is None:
            return
        job = group.job
        if job.purpose in PROBES:
            self.estimator.observe_probe(job.task.id, group.rewards)
        elif job.kind is StartKind.ONESTEP and job.checkpoint_id is not None:
            self.estimator.observe_onestep(job.task.id, job.checkpoint_id, group.rewards)

    def _onestep_starts(self, task_id: str, route: TaskRoute) -> list[str]:
        """The checkpoints of this Local visit: every pivot, or with continuous weights an
        independent draw from all the task's checkpoints (redrawn per visit, at least one)."""
        if not route.weights:
            return route.pivots
        rng = random.Random(derive_seed(self.seed, "local-pivots", task_id, route.visits))
        ids = list(route.weights)
        drawn = [ids[i] for i in draw_independent([route.weights[c] for c in ids], rng)]
        return drawn or route.pivots  # all weights 0 (scores far below the gate): the hard set

    # -- self-generated pivots ------------------------------------------------------------------
    def add_pivots(
        self, task_id: str, pivots: Sequence[str], weights: Mapping[str, float], iteration: int
    ) -> None:
        """A task had no pivots (hence was sent to Root whatever its p(x)); now it has some, so
        it is routed by its measured p(x) - this once against the monotone order, since its Root
        mode was forced, not earned. A task routed Root on its merits stays there."""
        route = self.routes[task_id]
        if route.pivots or not pivots:
            return
        route.pivots, route.weights = list(pivots), dict(weights)
        if route.mode == Route.ROOT and route.p is not None:
            mode = route_for(route.p, self.sched.tau_low, self.sched.tau_high)
            if mode != Route.ROOT:
                route.mode = (
                    Route.UNROUTED
                )  # let _promote place it as if it had had pivots all along
                self._promote(route, mode, iteration)

    def _promote(self, route: TaskRoute, mode: Route, iteration: int) -> None:
        if not route.pivots and mode in (Route.LOCAL, Route.SUFFIX):
            mode = Route.ROOT  # nothing to start from but the task root
        if mode.rank <= route.mode.rank:
            return  # monotone: never back (only the demotion option's monitor demotes)
        self._set_mode(route, mode, iteration)

    @staticmethod
    def _set_mode(route: TaskRoute, mode: Route, iteration: int) -> None:
        route.mode = mode
        if mode == Route.SUFFIX:
            route.frontier = len(route.pivots) - 1
        route.outcomes, route.progress = [], []
        route.transitions.append((iteration, mode))

    # -- Suffix frontier ------------------------------------------------------------------------
    def _move_frontier(self, route: TaskRoute, group: Group, iteration: int) -> None:
        """Move the Suffix frontier after a group from it; past the first pivot, promote."""
        if self.sched.frontier == "progress":
            step = self._progress_step(route, group)
        else:
            step = -1 if group.success_rate > self.sched.tau_suffix else 0
        if step < 0:
            route.progress = []
            if route.frontier > 0:
                route.frontier -= 1
            else:
                self._promote(route, Route.ROOT, iteration)
        elif step > 0 and route.frontier < len(route.pivots) - 1:
            route.progress = []
            route.frontier += 1

    def _progress_step(self, route: TaskRoute, group: Group) -> int:
        """frontier=progress: -1 (shallower), +1 (deeper) or 0 (stay: still learning here).

        A group whose rewards are all equal carries no gradient: all successes move shallower,
        all failures deeper. Otherwise, once ``lp_window`` groups at this frontier show a
        success-rate slope within ``lp_min_slope`` (a plateau), move towards success 0.5, where
        a group's reward variance - its learning signal - is largest."""
        if max(group.rewards) == min(group.rewards):
            return -1 if group.success_rate > 0 else 1
        route.progress = [*route.progress, group.success_rate][-self.sched.lp_window :]
        if len(route.progress) < self.sched.lp_window:
            return 0
        if abs(slope(route.progress)) > self.sched.lp_min_slope:
            return 0
        return -1 if sum(route.progress) / len(route.progress) >= 0.5 else 1

    # -- forgetting monitor and replay -------------------------------------------------------------
    def _monitor(self, route: TaskRoute, group: Group, iteration: int) -> None:
        """demotion: add a root group's outcomes to the task's window and demote on a confident
        drop (the window's one-sided Wilson upper bound below the mode's threshold)."""
        if route.mode not in (Route.SUFFIX, Route.ROOT):
            return
        window = [*route.outcomes, *(int(r > 0) for r in group.rewards)]
        route.outcomes = window[-self.sched.monitor_window :]
        confidence = self.sched.demotion_confidence
        bound = wilson_upper(sum(route.outcomes), len(route.outcomes), confidence)
        if route.mode == Route.ROOT and route.pivots and bound < self.sched.demote_root_below:
            self._set_mode(route, Route.SUFFIX, iteration)
        elif route.mode == Route.SUFFIX and bound < self.sched.demote_suffix_below:
            self._set_mode(route, Route.LOCAL, iteration)

    def _replay_jobs(self) -> list[Job]:
        """replay_share: OneStep groups on every pivot of the next Root tasks with pivots, round
        robin in task order (a Root task visited this iteration trains on its root probes, not
        at its pivots, so it may be replayed as well)."""
        if self.sched.replay_share <= 0:
            return []
        ids = list(self.routes)
        rotated = ids[self.replay_cursor :] + ids[: self.replay_cursor]
        mastered = [
            t for t in rotated if self.routes[t].mode == Route.ROOT and self.routes[t].pivots
        ]
        share = round(self.sched.replay_share * self.sched.tasks_per_iteration)
        chosen = mastered[: max(1, share)]
        if not chosen:
            return []
        self.replay_cursor = (ids.index(chosen[-1]) + 1) % len(ids)
        return [
            Job(Route.LOCAL.start, self.tasks[t], self.grpo.group_size, checkpoint_id=c)
            for t in chosen
            for c in self.routes[t].pivots
        ]

    def route_counts(self) -> dict[str, int]:
        counts = {route.value: 0 for route in Route}
        for route in self.routes.values():
            counts[route.mode] += 1
        return counts

    def state_dict(self) -> dict[str, Any]:
        state = {
            "cursor": self.order.cursor,
            "replay_cursor": self.replay_cursor,
            "routes": {k: asdict(v) for k, v in self.routes.items()},
        }
        if self.estimator is not None:
            state["estimator"] = self.estimator.state_dict()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.order.cursor = int(state["cursor"])
        self.replay_cursor = int(state.get("replay_cursor", 0))
        if self.estimator is not None and "estimator" in state:
            self.estimator.load_state_dict(state["estimator"])
        for task_id, data in state["routes"].items():
            data = dict(data)
            data["mode"] = Route(data["mode"])
            data["transitions"] = [(i, Route(m)) for i, m in data.get("transitions", [])]
            self.routes[task_id] = TaskRoute(**data)


@SCHEDULERS.register("hybrid")
def hybrid_scheduler(
    tasks: Sequence[TaskSpec],
    sched: SchedulerConfig,
    grpo: GRPOConfig,
    pivots: Mapping[str, Sequence[str]],
    **kwargs: Any,
) -> Scheduler:
    """Stage II with the router ``sched.routing`` names (:data:`ROUTERS`): ``thresholds``
    (:class:`HybridScheduler`, the paper's) or ``bandit``
    (:class:`~adaroll.training.bandit_scheduler.BanditScheduler`)."""
    router: Any = ROUTERS.get(sched.routing)
    return router(tasks, sched, grpo, pivots, **kwargs)  # type: ignore[no-any-return]
