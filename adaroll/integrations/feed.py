"""The scheduler behind another framework's stream of rows, and the ledger behind its rollouts.

A framework (TRL, verl) trains on fixed-size batches of *rows*, each row one GRPO group of
``G`` samples. :class:`ScheduleFeed` turns AdaRoll's scheduler into such a stream:

* **Lazy binding.** A row is only a *slot* number when the framework's data loader reads it
  (loaders read a batch ahead); the slot is bound to a job of the scheduler's plan when the
  framework first opens it (``reset`` in TRL, the agent loop in verl), which happens after the
  previous batch's rewards were reported. So ``plan(k + 1)`` always sees ``observe(k)``, exactly
  as in AdaRoll's trainer.
* **Iteration barrier.** When every job of iteration ``k`` is bound but some are not reported
  yet (they are in the batch being generated), further slots of that batch are bound to
  *idle* rows: no env, a constant reward (no gradient), their policy samples billed as
  ``overhead``. With ``barrier=False`` the next iteration is planned at once instead (full
  batches, routing decisions one batch late).
* **Reports.** :meth:`report` takes a group's rewards and cost. A group hit by an env fault is
  billed (``faults``) and its job re-queued at the front, to be collected again under the same
  :class:`~adaroll.rollout.retries.RetryRule` as AdaRoll's collector; it is never trained on.
  Once all jobs of an iteration are in, the groups are billed by the one bill writer AdaRoll's
  trainer uses (:func:`adaroll.training.bill.bill_groups`: mode, purpose, task, training samples
  = decisions of train groups whose rewards differ, the snapshot image's replay at a
  checkpoint's first restore) and the scheduler observes them.

The framework must give every group ``group_size`` samples; the jobs' group sizes must equal it
(TRL and verl draw the same number of samples for every row), which :meth:`bind` checks.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

from adaroll.rollout.jobs import Cost, Group, Job
from adaroll.rollout.retries import RetryRule
from adaroll.rollout.sessions import Starts
from adaroll.routes import StartKind
from adaroll.training.bill import bill_groups
from adaroll.training.ledger import Ledger
from adaroll.training.scheduler import Scheduler


@dataclass
class Bound:
    """A slot bound to a job (None for an idle row) of an iteration."""

    slot: int
    job: Job | None
    iteration: int
    index: int = -1
    """The job's index in its iteration's plan (-1 for an idle row)."""


@dataclass
class _Iteration:
    number: int
    jobs: list[Job]
    groups: dict[int, Group] = field(default_factory=dict)
    trained: dict[int, int] = field(default_factory=dict)
    """Training samples per job index: the decisions of a group that may train."""
    spent: dict[int, Cost] = field(default_factory=dict)
    """Cost of faulted attempts per job index, added to the group that finally succeeds."""


class GroupSizeError(ValueError):
    """A scheduled job whose group size differs from the framework's samples per row."""


class ScheduleFeed:
    """Binds slots to the scheduler's jobs and bills reported groups (module docstring)."""

    def __init__(
        self,
        scheduler: Scheduler,
        ledger: Ledger,
        starts: Starts,
        *,
        group_size: int,
        stage: str = "hybrid",
        barrier: bool = True,
        prefetch: bool = True,
        max_retries: int = 3,
    ) -> None:
        self.scheduler, self.ledger, self.starts = scheduler, ledger, starts
        self.prefetch = prefetch
        """Restore each planned Suffix group's branches at once (False where the restores happen
        in other processes, as in verl's agent-loop workers)."""
        self.group_size, self.stage, self.barrier = group_size, stage, barrier
        self.retries = RetryRule(max_retries)
        self.iteration = 0
        self.bound: dict[int, Bound] = {}
        self._queue: deque[tuple[_Iteration, int]] = deque()
        self._open: list[_Iteration] = []
        self._lock = threading.Lock()
        self.faults = 0
        """Groups re-queued after an env fault."""
        self.idle_rows = 0
        self.finished = 0
        """Iterations whose groups were all billed and observed."""
        self.plans: list[list[Job]] = []
        """Every iteration's plan, in order (what the equality check compares)."""

    # -- binding ---------------------------------------------------------------------------------
    def bind(self, slot: int) -> Bound:
        """The job of ``slot`` (the same on every call for one slot; None: an idle row)."""
        with self._lock:
            if slot in self.bound:
                return self.bound[slot]
            if not self._queue and (not self.barrier or not self._open):
                self._plan()
            if not self._queue:
                bound = Bound(slot, None, self.iteration)
                self.idle_rows += 1
            else:
                it, index = self._queue.popleft()
                bound = Bound(slot, it.jobs[index], it.number, index)
            self.bound[slot] = bound
            return bound

    def _plan(self) -> None:
        while True:
            self.iteration += 1
            jobs = self.scheduler.plan(self.iteration)
            self.plans.append(list(jobs))
            if jobs:
                break
        for job in jobs:
            if job.group_size != self.group_size:
                raise GroupSizeError(
                    f"the scheduler planned a {job.kind}/{job.purpose} group of {job.group_size} samples for "
                    f"{job.task.id}, but the framework draws {self.group_size} per row: set grpo.group_size, "
                    f"scheduler.routing_probes and scheduler.root_probes to {self.group_size}"
                )
        it = _Iteration(self.iteration, list(jobs))
        self._open.append(it)
        self._queue.extend((it, i) for i in range(len(jobs)))
        if self.prefetch:  # restore every Suffix branch of the iteration now, in the background
            for job in jobs:
                self.starts.prefetch(job)

    # -- reporting -------------------------------------------------------------------------------
    def report(
        self,
        slot: int,
        rewards: Sequence[float],
        cost: Cost,
        decisions: Sequence[int],
        *,
        faulted: bool = False,
    ) -> None:
        """One slot's group: per-sample rewards and decisions, the group's cost, and whether an
        env fault hit any of its samples (then the job is collected again, first)."""
        with self._lock:
            bound = self.bound.pop(slot)
            if bound.job is None:
                self.ledger.add(
                    StartKind.ONESTEP.value,
                    "overhead",
                    policy_samples=cost.policy_samples,
                    stage=self.stage,
                    iteration=bound.iteration,
                )
                return
            it = next(i for i in self._open if i.number == bound.iteration)
            spent = it.spent[bound.index] = it.spent.get(bound.index, Cost()) + cost
            if faulted:
                self.faults += 1
                self.retries.retry(bound.job, spent.faults, "an env fault hit the group")
                self._queue.appendleft((it, bound.index))
                return
            it.groups[bound.index] = Group(bound.job, [], list(rewards), spent)
            it.trained[bound.index] = sum(decisions) if self.trains(rewards, bound) else 0
            while self._open and len(self._open[0].groups) == len(self._open[0].jobs):
                self._finish(self._open.pop(0))

    def _finish(self, it: _Iteration) -> None:
        groups = [it.groups[i] for i in range(len(it.jobs))]
        bill_groups(
            self.ledger,
            groups,
            self.starts.builds,
            training_samples=[it.trained[i] for i in range(len(it.jobs))],
            stage=self.stage,
            iteration=it.number,
        )
        self.scheduler.observe(groups, it.number)
        self.finished += 1

    def trains(self, slot_rewards: Sequence[float], bound: Bound) -> bool:
        """Whether the framework may learn from this group: a train job whose rewards differ
        (routing probes and idle rows only measure; a faulted group is re-run)."""
        return (
            bound.job is not None
            and bound.job.purpose == "train"
            and max(slot_rewards) != min(slot_rewards)
        )
