"""Score every checkpoint with N policy samples and select the pivots (DESIGN.md 1.3).

Selection: with ``budget_top_k`` set, the k highest scores overall (budget-matched ablations,
whatever the scorer's scale); otherwise scores strictly above ``tau_dis``, and a task left with
no pivot keeps its ``fallback_top_k`` highest-scoring checkpoints.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from adaroll.actions import PAPER_MATCHER, ActionMatcher
from adaroll.algos.pivots import PIVOT_SCORERS, PivotEvidence, select_pivots, select_top_k
from adaroll.checkpoints import CheckpointStore
from adaroll.config import PivotConfig
from adaroll.io import atomic_write_text
from adaroll.policies.base import Policy
from adaroll.rollout.collector import RolloutCollector
from adaroll.seeding import seed_everything


@dataclass(frozen=True)
class PivotSet:
    scores: dict[str, float]
    """Score of every checkpoint id."""
    pivots: dict[str, list[str]]
    """Pivot checkpoint ids per task id, earliest step first."""
    policy_samples: int

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.pivots.values())

    def save(self, path: Path) -> None:
        atomic_write_text(path, json.dumps({"scores": self.scores, "pivots": self.pivots,
                                            "policy_samples": self.policy_samples}, indent=1))  # fmt: skip

    @classmethod
    def load(cls, path: Path) -> PivotSet:
        d = json.loads(path.read_text())
        return cls(d["scores"], d["pivots"], int(d["policy_samples"]))


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
    seed_everything("pivots", seed, policy=policy)
    checkpoints = list(store)
    scores: dict[str, float] = {}
    for start in range(0, len(checkpoints), batch):
        chunk = checkpoints[start : start + batch]
        drawn = policy.sample([collector.context_at(c) for c in chunk], cfg.n_samples)
        for ckpt, samples in zip(chunk, drawn, strict=True):
            actions = tuple(s.action for s in samples)
            rewards = tuple(float(a is not None and matcher(a, ckpt.expert_action)) for a in actions)
            evidence = PivotEvidence(actions=actions, rewards=rewards,
                                     log_probs=tuple(s.log_prob for s in samples),
                                     matcher=matcher, seed=seed, key=ckpt.id)  # fmt: skip
            scores[ckpt.id] = scorer(evidence)
    return PivotSet(scores, _select(store, scores, cfg), len(checkpoints) * cfg.n_samples)


def _select(store: CheckpointStore, scores: dict[str, float], cfg: PivotConfig) -> dict[str, list[str]]:
    if cfg.budget_top_k is not None:
        chosen = set(select_top_k(scores, cfg.budget_top_k))
    else:
        chosen = set(select_pivots(scores, cfg.tau_dis))
    pivots: dict[str, list[str]] = {}
    for task_id in store.task_ids():
        ids = [c.id for c in store.for_task(task_id)]
        mine = [i for i in ids if i in chosen]
        if not mine and cfg.budget_top_k is None and cfg.fallback_top_k:
            top = set(select_top_k({i: scores[i] for i in ids}, cfg.fallback_top_k))
            mine = [i for i in ids if i in top]
        pivots[task_id] = mine
    return pivots
