"""The bill: what every group costs in the ledger (:func:`bill_groups`, the one writer of group
records), and a configuration's bill, every env step and policy sample it depends on, in one set
of units (:class:`Bill`).

Units (the same for every configuration, docs/RESULTS.md "How we measure"):

* an **env step** is one action executed in an environment, whatever it was for;
* a **policy sample** is one action drawn from the policy;
* a **training sample** is one decision entering one gradient step: an RL decision in a group
  that carried a gradient (once per update it entered), or a demonstration step in one SFT
  epoch (so SFT's count is examples x epochs).

A bill is inherited along the configuration's chain: Action->Hybrid carries Base's and Stage
I's bills. The expert runs behind demonstrations and checkpoints are counted by *split*, once
per configuration however many phases of its chain use them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from adaroll.costs import Counters
from adaroll.rollout.jobs import Group
from adaroll.routes import StartKind
from adaroll.snapshots.cache import BuildCosts
from adaroll.training.ledger import Ledger

BILL_KEYS = (
    "env_steps",
    "replay_steps",
    "demo_env_steps",
    "selection_env_steps",
    "total_env_steps",
    "policy_samples",
    "scoring_samples",
    "train_samples",
)
"""The cost keys of every configuration in ``summary.json`` (issue 11's accounting)."""


def bill_groups(
    ledger: Ledger,
    groups: Sequence[Group],
    builds: BuildCosts,
    *,
    training_samples: Sequence[int],
    stage: str,
    iteration: int | None = None,
) -> None:
    """Write what ``groups`` cost to ``ledger``: the one writer of group records, called by
    AdaRoll's trainer (for the local and the Ray collector alike) and by the framework adapters
    (:mod:`adaroll.integrations`), so that every trainer bills a group the same way.

    First one ``overhead`` record of the snapshot images built since the last call (how often
    images are rebuilt depends on the execution - each worker, each restarted process builds its
    own - so it is recorded and on no bill); then one record per group, tagged with its
    :attr:`~adaroll.rollout.jobs.Job.ledger_mode`, purpose, task, ``stage`` and ``iteration``:
    the group's :class:`~adaroll.rollout.jobs.Cost` counters, its ``training_samples`` (the
    decisions that entered an update, one entry per group), and the replay that builds its
    checkpoint's image, billed at the image's first use in the phase
    (:meth:`~adaroll.snapshots.cache.BuildCosts.bill_first_use`)."""
    with ledger.batch():  # one fsync for the call's records
        _bill(ledger, groups, builds, training_samples, stage, iteration)


def _bill(
    ledger: Ledger,
    groups: Sequence[Group],
    builds: BuildCosts,
    training_samples: Sequence[int],
    stage: str,
    iteration: int | None,
) -> None:
    overhead = builds.take_overhead()
    if overhead:
        ledger.add(
            StartKind.SUFFIX.value,
            "overhead",
            replayed_steps=overhead,
            stage=stage,
            iteration=iteration,
        )
    for group, used in zip(groups, training_samples, strict=True):
        job = group.job
        first_build = builds.bill_first_use(job.checkpoint_id, group.cost.restores)
        cost = group.cost + Counters(training_samples=used, replayed_steps=first_build)
        ledger.add(
            job.ledger_mode,
            job.purpose,
            **cost.counters(),
            task_id=job.task.id,
            stage=stage,
            iteration=iteration,
        )


@dataclass(frozen=True, kw_only=True)
class Bill(Counters):
    """The :class:`~adaroll.costs.Counters` a configuration is billed, and what only a bill has.

    Its counters: ``env_steps`` (training rollouts and routing probes), ``replayed_steps`` (env
    steps replayed to rebuild snapshots or to stand in for a failed restore; ``replay_steps`` in
    ``summary.json``), ``policy_samples`` (every action sampled from the policy for the
    configuration: rollouts, probes, one-step groups, selection evaluations and pivot scoring)
    and ``training_samples`` (decisions that entered a gradient step, SFT: demonstration steps x
    epochs; ``train_samples`` in ``summary.json``)."""

    selection_env_steps: int = 0
    """Env steps of evaluations whose result chose something (Stage I's best policy)."""
    demo_splits: frozenset[str] = field(default_factory=frozenset)
    """Task splits whose expert runs the configuration uses (pretrain: Base; train: SFT, pivots,
    Suffix checkpoints)."""
    scoring_samples: int = 0
    """The part of ``policy_samples`` spent scoring pivots."""

    def plus(self, other: Counters) -> Bill:
        """This bill with ``other``'s costs added (demonstration splits united, not summed)."""
        added = super().plus(other)
        if not isinstance(other, Bill):
            return added
        return replace(
            added,
            selection_env_steps=self.selection_env_steps + other.selection_env_steps,
            demo_splits=self.demo_splits | other.demo_splits,
            scoring_samples=self.scoring_samples + other.scoring_samples,
        )

    def with_demos(self, *splits: str) -> Bill:
        return replace(self, demo_splits=self.demo_splits | frozenset(splits))

    @classmethod
    def of_phase(cls, totals: Mapping[str, Any]) -> Bill:
        """A training phase's own bill from the trainer's totals (``done.json``); the samples
        that scored its pivots come before the phase (``Pipeline._phase_start``)."""
        return cls(
            env_steps=int(totals["env_steps"]),
            replayed_steps=int(totals["replay_steps"]),
            selection_env_steps=int(totals["selection_env_steps"]),
            policy_samples=int(totals["policy_samples"]),
            training_samples=int(totals["train_samples"]),
        )

    def demo_env_steps(self, expert_steps: Mapping[str, int]) -> int:
        return sum(expert_steps[split] for split in sorted(self.demo_splits))

    def total_env_steps(self, expert_steps: Mapping[str, int]) -> int:
        return (
            self.env_steps
            + self.replayed_steps
            + self.selection_env_steps
            + self.demo_env_steps(expert_steps)
        )

    def row(self, expert_steps: Mapping[str, int]) -> dict[str, int]:
        """The bill's :data:`BILL_KEYS`, as ``summary.json`` holds them."""
        return {
            "env_steps": self.env_steps,
            "replay_steps": self.replayed_steps,
            "demo_env_steps": self.demo_env_steps(expert_steps),
            "selection_env_steps": self.selection_env_steps,
            "total_env_steps": self.total_env_steps(expert_steps),
            "policy_samples": self.policy_samples,
            "scoring_samples": self.scoring_samples,
            "train_samples": self.training_samples,
        }
