"""Score every checkpoint with N policy samples and select the pivots (docs/architecture.md, "Disagreement and pivots").

Selection: with ``budget_top_k`` set, the k highest scores overall (budget-matched ablations,
whatever the scorer's scale); otherwise scores strictly above the task's gate - ``tau_dis``, or
with ``threshold=task_quantile`` the quantile of the task's own scores - and a task left with
no pivot keeps its ``fallback_top_k`` highest-scoring checkpoints. With ``temperature > 0`` the
set also carries per-checkpoint draw probabilities (:func:`adaroll.algos.pivots.soft_gate`) that
the schedulers sample OneStep starts from; the hard set still defines Suffix frontiers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NotRequired

from pydantic import ConfigDict, NonNegativeInt, TypeAdapter, ValidationError, with_config
from typing_extensions import TypedDict  # pydantic needs this one on Python < 3.12

from adaroll.actions import PAPER_MATCHER, ActionMatcher
from adaroll.algos.pivots import (
    PIVOT_SCORERS,
    PivotEvidence,
    quantile_threshold,
    select_top_k,
    soft_gate,
)
from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.config import PivotConfig
from adaroll.io import atomic_write_text
from adaroll.policies.base import Context, Policy
from adaroll.rollout.collector import RolloutCollector
from adaroll.seeding import seed_everything


@dataclass(frozen=True)
class PivotSet:
    scores: dict[str, float]
    """Score of every checkpoint id."""
    pivots: dict[str, list[str]]
    """Pivot checkpoint ids per task id, earliest step first."""
    policy_samples: int
    thresholds: dict[str, float] = field(default_factory=dict)
    """The gate each task's scores were compared with (tau_dis or the task's quantile)."""
    weights: dict[str, dict[str, float]] = field(default_factory=dict)
    """temperature > 0 only: per task, every checkpoint's OneStep draw probability."""
    matches: dict[str, float] = field(default_factory=dict)
    """Per checkpoint, the share of its N samples that matched the expert's action (the
    routing estimate's factors, :mod:`adaroll.training.route_estimate`; empty in files written
    before it was kept)."""

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.pivots.values())

    def save(self, path: Path) -> None:
        atomic_write_text(
            path,
            json.dumps(
                {
                    "scores": self.scores,
                    "pivots": self.pivots,
                    "policy_samples": self.policy_samples,
                    "thresholds": self.thresholds,
                    "weights": self.weights,
                    "matches": self.matches,
                },
                indent=1,
            ),
        )

    @classmethod
    def load(cls, path: Path) -> PivotSet:
        """The set :meth:`save` wrote; :class:`PivotFileError` (naming the file) for anything else."""
        try:
            d = _PIVOT_FILE.validate_json(path.read_bytes())
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'file'}: {e['msg']}" for e in exc.errors()[:3]
            )
            raise PivotFileError(f"{path}: not a pivot set ({problems})") from None
        unknown = sorted({c for ids in d["pivots"].values() for c in ids} - d["scores"].keys())
        if unknown:
            raise PivotFileError(f"{path}: pivots without a score: {', '.join(unknown[:3])}")
        return cls(
            d["scores"],
            d["pivots"],
            d["policy_samples"],
            d.get("thresholds", {}),
            d.get("weights", {}),
            d.get("matches", {}),
        )


class PivotFileError(ValueError):
    """A pivot file that is not what :meth:`PivotSet.save` wrote (torn, edited, or corrupt)."""


@with_config(ConfigDict(strict=True, extra="forbid"))
class _PivotFile(TypedDict):
    scores: dict[str, float]  # NaN: a checkpoint a scorer could not score (it ranks last)
    pivots: dict[str, list[str]]
    policy_samples: NonNegativeInt
    thresholds: NotRequired[dict[str, float]]
    weights: NotRequired[dict[str, dict[str, float]]]
    matches: NotRequired[dict[str, float]]


_PIVOT_FILE = TypeAdapter(_PivotFile)


def score_checkpoints(
    policy: Policy,
    collector: RolloutCollector,
    store: CheckpointStore,
    cfg: PivotConfig,
    *,
    seed: int,
    matcher: ActionMatcher = PAPER_MATCHER,
    batch: int = 128,
) -> PivotSet:
    """N samples per checkpoint from ``policy``; scores by ``cfg.scorer``; pivots selected."""
    scorer = PIVOT_SCORERS.get(cfg.scorer)
    checkpoints = list(store)
    scores: dict[str, float] = {}
    matches: dict[str, float] = {}
    for ckpt, evidence in sample_evidence(
        policy, collector.context_at, checkpoints, cfg.n_samples, seed, matcher, batch
    ):
        scores[ckpt.id] = scorer(evidence)
        assert evidence.rewards is not None  # sample_evidence rewards every sample
        matches[ckpt.id] = sum(evidence.rewards) / len(evidence.rewards)
    chosen = select(store, scores, cfg, policy_samples=len(checkpoints) * cfg.n_samples)
    return replace(chosen, matches=matches)


def sample_evidence(
    policy: Policy,
    context_at: Callable[[Checkpoint], Context],
    checkpoints: Sequence[Checkpoint],
    n_samples: int,
    seed: int,
    matcher: ActionMatcher = PAPER_MATCHER,
    batch: int = 128,
) -> Iterator[tuple[Checkpoint, PivotEvidence]]:
    """What every scorer may read at each checkpoint, in order: ``n_samples`` actions drawn
    from ``policy`` (seeded by ``seed``, in batches of ``batch`` checkpoints), their expert-match
    rewards under ``matcher`` and log-probabilities. The same arguments give the same samples,
    so every signal scored from them (:func:`score_checkpoints`, or all at once by
    ``adaroll pivots signals``) sees the very actions a run's pivot file was scored from."""
    seed_everything("pivots", seed, policy=policy)
    for start in range(0, len(checkpoints), batch):
        chunk = checkpoints[start : start + batch]
        drawn = policy.sample([context_at(c) for c in chunk], n_samples)
        for ckpt, samples in zip(chunk, drawn, strict=True):
            actions = tuple(s.action for s in samples)
            yield (
                ckpt,
                PivotEvidence(
                    actions=actions,
                    rewards=tuple(matcher.reward(a, ckpt.expert_action) for a in actions),
                    log_probs=tuple(s.log_prob for s in samples),
                    matcher=matcher,
                    seed=seed,
                    key=ckpt.id,
                ),
            )


def select(
    store: CheckpointStore, scores: dict[str, float], cfg: PivotConfig, *, policy_samples: int = 0
) -> PivotSet:
    """The pivot set of ``store``'s checkpoints given their ``scores`` (see the module doc)."""
    chosen = set(select_top_k(scores, cfg.budget_top_k)) if cfg.budget_top_k is not None else None
    pivots: dict[str, list[str]] = {}
    thresholds: dict[str, float] = {}
    weights: dict[str, dict[str, float]] = {}
    for task_id in store.task_ids():
        ids = [c.id for c in store.for_task(task_id)]
        if chosen is not None:
            pivots[task_id] = [i for i in ids if i in chosen]
            continue
        gate = (
            quantile_threshold([scores[i] for i in ids], cfg.task_quantile)
            if cfg.threshold == "task_quantile"
            else cfg.tau_dis
        )
        thresholds[task_id] = gate
        mine = [i for i in ids if scores[i] > gate]
        if not mine and cfg.fallback_top_k:
            top = set(select_top_k({i: scores[i] for i in ids}, cfg.fallback_top_k))
            mine = [i for i in ids if i in top]
        pivots[task_id] = mine
        if cfg.temperature > 0:
            weights[task_id] = {i: soft_gate(scores[i], gate, cfg.temperature) for i in ids}
    return PivotSet(scores, pivots, policy_samples, thresholds, weights)
