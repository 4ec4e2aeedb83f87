"""The routing estimate of a run (issue 40, items 3 and 4): per train task, its root success
estimated from its expert checkpoints at no env cost (:mod:`adaroll.algos.route_estimate`),
calibrated on probes and kept up to date by the task's own later groups.

* Factors: per expert checkpoint, the chance the policy takes the expert's action there - from
  the samples pivot scoring already drew (``match``: :attr:`PivotSet.matches`) or from one
  forward pass per checkpoint (``likelihood``: ``pi(a^E | c)``).
* Calibration: every probe group of a task (routing pass, re-evaluation) is an observation
  ``(raw estimate then, successes, trials)``; the exponent gamma of ``p = raw^gamma`` is refitted
  on all of them as they come.
* Running updates: a one-step group at a checkpoint replaces that checkpoint's factor by its own
  (smoothed) match share, so a Local task's estimate follows what its one-step training does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from adaroll.algos.route_estimate import calibrated, fit_gamma, product_estimate, smoothed_share
from adaroll.checkpoints import CheckpointStore
from adaroll.config import TrainConfig
from adaroll.policies.base import Policy
from adaroll.rollout.collector import RolloutCollector
from adaroll.training.pivot_scoring import PivotSet


def expert_checkpoints(
    store: CheckpointStore, policy: Policy, collector: RolloutCollector
) -> dict[str, list[str]]:
    """Per task, the ids of its expert checkpoints in step order, less those whose expert action
    the policy cannot output at all (e.g. the phone expert's ``wait`` for a loading screen,
    which the small policy has no action for: its success cannot hinge on taking it, and its
    match share there is 0 whatever it learns). Self-generated checkpoints are left out: the
    estimate is the chance of following the expert's path."""
    out: dict[str, list[str]] = {}
    for task_id in store.task_ids():
        chain = sorted(
            (c for c in store.for_task(task_id) if c.origin == "expert"), key=lambda c: c.step
        )
        out[task_id] = [
            c.id for c in chain if policy.represents(collector.context_at(c), c.expert_action)
        ]
    return out


def match_factors(
    chains: Mapping[str, Sequence[str]], matches: Mapping[str, float], n_samples: int
) -> dict[str, dict[str, float]]:
    """Factors from pivot scoring's match shares (``matches``: checkpoint id -> share of its
    ``n_samples`` that matched the expert), smoothed, for the checkpoints of ``chains``
    (:func:`expert_checkpoints`)."""
    return {
        task_id: {c: smoothed_share(matches[c] * n_samples, n_samples) for c in ids if c in matches}
        for task_id, ids in chains.items()
    }


def likelihood_factors(
    chains: Mapping[str, Sequence[str]],
    policy: Policy,
    collector: RolloutCollector,
    store: CheckpointStore,
    batch: int = 256,
) -> dict[str, dict[str, float]]:
    """Factors ``pi(a^E | c)`` of the checkpoints of ``chains`` under ``policy`` (no env step)."""
    from adaroll.training.sft import as_samples

    checkpoints = [store.get(c) for ids in chains.values() for c in ids]
    probs: dict[str, float] = {}
    with torch.no_grad():
        for start in range(0, len(checkpoints), batch):
            chunk = checkpoints[start : start + batch]
            contexts = [collector.context_at(c) for c in chunk]
            logp = policy.log_prob(contexts, as_samples([c.expert_action for c in chunk]))
            probs.update({c.id: float(torch.exp(v)) for c, v in zip(chunk, logp, strict=True)})
    return {task_id: {c: probs[c] for c in ids} for task_id, ids in chains.items()}


@dataclass
class RouteEstimator:
    """Per task, the calibrated estimate of its root success and what keeps it current."""

    factors: dict[str, dict[str, float]]
    """Per task, per expert checkpoint: the chance the policy takes the expert's action."""
    observations: list[tuple[float, int, int]] = field(default_factory=list)
    """(raw estimate when probed, successes, trials) of every probe group so far."""
    gamma: float = 1.0
    """The calibration exponent fitted on :attr:`observations`."""

    def has(self, task_id: str) -> bool:
        return bool(self.factors.get(task_id))

    def raw(self, task_id: str) -> float:
        return product_estimate(list(self.factors[task_id].values()))

    def estimate(self, task_id: str) -> float | None:
        """The calibrated estimate of ``task_id``'s root success (None without checkpoints)."""
        return calibrated(self.raw(task_id), self.gamma) if self.has(task_id) else None

    def observe_probe(self, task_id: str, rewards: Sequence[float]) -> None:
        """A probe group of the task: one more calibration observation, gamma refitted."""
        if not self.has(task_id) or not rewards:
            return
        successes = sum(r > 0 for r in rewards)
        self.observations.append((self.raw(task_id), successes, len(rewards)))
        self.gamma = fit_gamma(self.observations)

    def observe_onestep(self, task_id: str, checkpoint_id: str, rewards: Sequence[float]) -> None:
        """A one-step group at an expert checkpoint: its factor becomes the group's own share."""
        factors = self.factors.get(task_id, {})
        if checkpoint_id in factors and rewards:
            factors[checkpoint_id] = smoothed_share(
                sum(min(1.0, max(0.0, r)) for r in rewards), len(rewards)
            )

    def state_dict(self) -> dict[str, Any]:
        return {"factors": self.factors, "observations": self.observations, "gamma": self.gamma}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.factors = {t: dict(f) for t, f in state["factors"].items()}
        self.observations = [(float(r), int(s), int(t)) for r, s, t in state["observations"]]
        self.gamma = float(state["gamma"])


def phase_estimator(
    phase: TrainConfig,
    start: Policy,
    collector: RolloutCollector,
    store: CheckpointStore,
    pivot_set: PivotSet | None,
) -> RouteEstimator | None:
    """A Hybrid phase's routing estimate: factors from pivot scoring's match shares, or with
    ``routing_estimate=likelihood`` from the start policy's likelihood of each expert action;
    None for other phases, or for a pivot file written before the match shares were kept (the
    options that need it then say so)."""
    if phase.algorithm != "hybrid" or pivot_set is None:
        return None
    chains = expert_checkpoints(store, start, collector)
    if phase.scheduler.routing_estimate == "likelihood":
        return RouteEstimator(likelihood_factors(chains, start, collector, store))
    if not pivot_set.matches:
        return None
    return RouteEstimator(match_factors(chains, pivot_set.matches, phase.pivots.n_samples))
