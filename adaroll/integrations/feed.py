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
  billed (``faults``) and its job re-queued at the front, to be collected again; it is never
  trained on. Once all jobs of an iteration are in, each group is billed like AdaRoll's trainer
  bills it (:meth:`adaroll.training.trainer.Trainer._record_costs`: mode, purpose, task,
  training samples = decisions of non-routing groups whose rewards differ, the snapshot image's
  replay at a checkpoint's first restore) and the scheduler observes the groups.

The framework must give every group ``group_size`` samples; the jobs' group sizes must equal it
(TRL and verl draw the same number of samples for every row), which :meth:`bind` checks.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from adaroll.integrations.starts import IDLE, Start, Starts
from adaroll.integrations.starts import StartKind as RowKind
from adaroll.rollout.jobs import Cost, Group, Job, StartKind
from adaroll.training.ledger import Ledger
from adaroll.training.scheduler import Scheduler


@dataclass
class Bound:
    """A slot bound to a start: the job (None for an idle row) and its iteration."""

    slot: int
    start: Start
    job: Job | None
    iteration: int
    index: int = -1
    """The job's index in its iteration's plan (-1 for an idle row)."""


@dataclass
class _Iteration:
    number: int
    jobs: list[Job]
    groups: dict[int, Group] = field(default_factory=dict)
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
    ) -> None:
        self.scheduler, self.ledger, self.starts = scheduler, ledger, starts
        self.prefetch = prefetch
        """Restore each planned Suffix group's branches at once (False where the restores happen
        in other processes, as in verl's agent-loop workers)."""
        self.group_size, self.stage, self.barrier = group_size, stage, barrier
        self.iteration = 0
        self.bound: dict[int, Bound] = {}
        self._queue: deque[tuple[_Iteration, int]] = deque()
        self._open: list[_Iteration] = []
        self._built: set[str] = set()
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
        """The start of ``slot`` (the same on every call for one slot)."""
        with self._lock:
            if slot in self.bound:
                return self.bound[slot]
            if not self._queue and (not self.barrier or not self._open):
                self._plan()
            if not self._queue:
                bound = Bound(slot, Start(IDLE, ""), None, self.iteration)
                self.idle_rows += 1
            else:
                it, index = self._queue.popleft()
                job = it.jobs[index]
                kind = cast(RowKind, job.kind.value)  # a row starts as its job does
                bound = Bound(
                    slot, Start(kind, job.task.id, job.checkpoint_id), job, it.number, index
                )
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
        for job in (
            jobs if self.prefetch else ()
        ):  # restore every Suffix branch of the iteration now, in the background
            if job.kind is StartKind.SUFFIX and job.checkpoint_id is not None:
                self.starts.prefetch(job.checkpoint_id, job.group_size)

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
                    "onestep",
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
                self._queue.appendleft((it, bound.index))
                return
            decided = [[None] * n for n in decisions]  # only the counts matter to the bill
            it.groups[bound.index] = Group(bound.job, decided, list(rewards), spent)  # type: ignore[arg-type]
            while self._open and len(self._open[0].groups) == len(self._open[0].jobs):
                self._finish(self._open.pop(0))

    def _finish(self, it: _Iteration) -> None:
        groups = [it.groups[i] for i in range(len(it.jobs))]
        replayed, self.starts.setup_replayed_steps = self.starts.setup_replayed_steps, 0
        if replayed:
            self.ledger.add(
                "suffix", "overhead", replayed_steps=replayed, stage=self.stage, iteration=it.number
            )
        for group in groups:
            c, job = group.cost, group.job
            trains = job.purpose == "train" and max(group.rewards) != min(group.rewards)
            used = sum(len(d) for d in group.decisions) if trains else 0
            self.ledger.add(
                job.ledger_mode,
                job.purpose,
                training_samples=used,
                policy_samples=c.policy_samples,
                env_steps=c.env_steps,
                restores=c.restores,
                restore_seconds=c.restore_seconds,
                replayed_steps=c.replayed_steps + self._first_build(group),
                invalid_samples=c.invalid_samples,
                faults=c.faults,
                restore_fallbacks=c.restore_fallbacks,
                wall_seconds=c.wall_seconds,
                task_id=job.task.id,
                stage=self.stage,
                iteration=it.number,
            )
        self.scheduler.observe(groups, it.number)
        self.finished += 1

    def _first_build(self, group: Group) -> int:
        checkpoint = group.job.checkpoint_id
        if group.cost.restores == 0 or checkpoint is None or checkpoint in self._built:
            return 0
        self._built.add(checkpoint)
        return len(self.starts.checkpoints.get(checkpoint).history)

    def trains(self, slot_rewards: Sequence[float], bound: Bound) -> bool:
        """Whether the framework may learn from this group: a train job whose rewards differ
        (routing probes and idle rows only measure; a faulted group is re-run)."""
        return (
            bound.job is not None
            and bound.job.purpose == "train"
            and max(slot_rewards) != min(slot_rewards)
        )
