"""Where to learn: action clustering, disagreement and pivot scorers (pure functions, no I/O).

At a checkpoint ``c_t`` the current policy draws ``N`` actions. They are clustered with the
action-equivalence relation ``M`` (:class:`adaroll.actions.ActionMatcher`) and the cluster sizes
``n_j`` give the *action disagreement*

    D(c_t) = 1 - sum_j n_j (n_j - 1) / (N (N - 1)),

the probability that two of the ``N`` samples, drawn without replacement, are different
decisions. Reference values for ``N = 8``: ``8 -> 0``, ``7-1 -> 0.25``, ``6-2 -> 0.4286``,
``6-1-1 -> 0.4643``, ``5-3 -> 0.5357``, ``4-4 -> 0.5714``, ``1x8 -> 1``. Checkpoints with
``D > tau_dis`` (strict; default 0.45, so 6-2 is dropped and 6-1-1 kept) are *pivots*.

Clustering rule (``M`` by tolerance is not transitive, so "connected components" and "first
match in sampling order" both depend on arbitrary choices; this rule does not):

1. Valid actions are put in a *canonical order*: sorted by their canonical text
   :func:`adaroll.actions.format_action` (ties - identical actions - by sample index).
2. *Greedy leader clustering* over that order: each action joins the first existing cluster
   (clusters in creation order) whose **leader** (first member) matches it, ``M(leader, a)``;
   otherwise it founds a new cluster and becomes its leader. Members are compared only with
   leaders, never with each other, so a cluster's diameter may reach twice the tolerance.
3. Invalid samples (``None``: model output that did not parse) each form their own singleton
   cluster: two unparseable outputs are never "the same decision".

The result depends only on the multiset of sampled actions, not on the order they were
drawn in (identical actions always land in the same cluster), so it is reproducible.

Pivot scorers for ablations share one signature ``scorer(evidence: PivotEvidence) -> float``
and are registered by name in :data:`PIVOT_SCORERS`: ``disagreement`` (the paper's),
``reward_variance`` (PivotRL: variance of per-sample rewards), ``entropy`` (BPO-style policy
uncertainty), ``all`` (every checkpoint), ``random`` (seeded).
"""

from __future__ import annotations

import math
import operator
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar, overload

from adaroll.actions import PAPER_MATCHER, Action, ActionMatcher, format_action
from adaroll.registry import Registry

K = TypeVar("K")

DEFAULT_TAU_DIS = 0.45
"""Paper default: checkpoints with disagreement strictly above this are pivots."""


# -- clustering -----------------------------------------------------------------------------------


def canonical_order(actions: Sequence[Action | None]) -> list[int]:
    """Indices of the valid actions sorted by ``(format_action(a), index)``; ``None`` skipped.

    Shapes: ``actions`` length N -> list of at most N indices.
    """
    keyed = [(format_action(a), i) for i, a in enumerate(actions) if a is not None]
    keyed.sort()
    return [i for _, i in keyed]


def cluster_actions(
    actions: Sequence[Action | None], matcher: ActionMatcher | None = None
) -> list[list[int]]:
    """Partition sample indices into decision clusters (greedy leader clustering, see module doc).

    Shapes: ``actions`` length N (``None`` = invalid sample) -> list of clusters, each a list of
    indices into ``actions`` sorted ascending; every index appears exactly once. Clusters of
    valid actions come first, in the canonical order of their leaders; then one singleton per
    invalid sample, by index. ``matcher`` defaults to the paper's rules (``PAPER_MATCHER``).
    """
    m = matcher if matcher is not None else PAPER_MATCHER
    leaders: list[Action] = []
    clusters: list[list[int]] = []
    for i in canonical_order(actions):
        action = actions[i]
        assert action is not None
        for leader, members in zip(leaders, clusters, strict=True):
            if m(leader, action):
                members.append(i)
                break
        else:
            leaders.append(action)
            clusters.append([i])
    out = [sorted(c) for c in clusters]
    out.extend([i] for i, a in enumerate(actions) if a is None)
    return out


def cluster_sizes(
    actions: Sequence[Action | None], matcher: ActionMatcher | None = None
) -> list[int]:
    """Cluster sizes ``n_j`` in :func:`cluster_actions` order. Length N -> list, sum N."""
    return [len(c) for c in cluster_actions(actions, matcher)]


# -- disagreement ---------------------------------------------------------------------------------


def disagreement_from_counts(counts: Sequence[int]) -> float:
    """``D = 1 - sum_j n_j (n_j - 1) / (N (N - 1))`` with ``N = sum_j n_j``.

    Shapes: ``counts`` [J] non-negative integers (zeros are ignored) -> float in [0, 1].
    Raises ``ValueError`` when ``N < 2`` (disagreement between two samples is undefined) or a
    count is negative; ``TypeError`` for a non-integer count.
    """
    ns = [operator.index(c) for c in counts]
    if any(n < 0 for n in ns):
        raise ValueError(f"cluster counts must be non-negative, got {list(ns)}")
    total = sum(ns)
    if total < 2:
        raise ValueError(f"disagreement needs at least 2 samples, got N={total}")
    same = sum(n * (n - 1) for n in ns)
    return 1.0 - same / (total * (total - 1))


def disagreement(actions: Sequence[Action | None], matcher: ActionMatcher | None = None) -> float:
    """Action disagreement of N sampled actions (``None`` = invalid, its own cluster).

    Shapes: ``actions`` length N >= 2 -> float in [0, 1]. ``ValueError`` when N < 2.
    """
    return disagreement_from_counts(cluster_sizes(actions, matcher))


# -- selection ------------------------------------------------------------------------------------


@overload
def select_pivots(scores: Mapping[K, float], tau: float = DEFAULT_TAU_DIS) -> list[K]: ...
@overload
def select_pivots(scores: Sequence[float], tau: float = DEFAULT_TAU_DIS) -> list[int]: ...
def select_pivots(
    scores: Mapping[K, float] | Sequence[float], tau: float = DEFAULT_TAU_DIS
) -> list[K] | list[int]:
    """Checkpoints whose score is strictly above ``tau``, in input order.

    Shapes: a sequence [C] of scores -> the kept indices; a mapping ``{checkpoint_id: score}``
    -> the kept keys (in the mapping's order). NaN scores are never kept.
    """
    if isinstance(scores, Mapping):
        return [key for key, s in scores.items() if s > tau]
    return [i for i, s in enumerate(scores) if s > tau]


@overload
def select_top_k(scores: Mapping[K, float], k: int) -> list[K]: ...
@overload
def select_top_k(scores: Sequence[float], k: int) -> list[int]: ...
def select_top_k(scores: Mapping[K, float] | Sequence[float], k: int) -> list[K] | list[int]:
    """The ``k`` highest-scoring checkpoints, best first (budget-matched ablations).

    Ties are broken by input position (earlier first), so the result is deterministic; NaN
    scores rank last. Shapes: a sequence [C] -> at most ``min(k, C)`` indices; a mapping ->
    keys. ``k < 0`` raises ``ValueError``.
    """
    if k < 0:
        raise ValueError(f"k must be non-negative, got {k}")

    def rank(pos_score: tuple[int, float]) -> tuple[bool, float, int]:
        pos, s = pos_score
        return (math.isnan(s), -s if not math.isnan(s) else 0.0, pos)

    if isinstance(scores, Mapping):
        keys = list(scores)
        order = sorted(enumerate(float(scores[key]) for key in keys), key=rank)
        return [keys[pos] for pos, _ in order[:k]]
    order = sorted(enumerate(float(s) for s in scores), key=rank)
    return [pos for pos, _ in order[:k]]


# -- continuous weights and adaptive gates -----------------------------------------------------------


def soft_gate(score: float, tau: float, temperature: float) -> float:
    """Probability that a checkpoint scoring ``score`` is drawn as a OneStep start.

    ``sigmoid((score - tau) / temperature)``: the two-way softmax between "keep" (logit
    ``score / T``) and "drop" (logit ``tau / T``). Increasing in ``score``, 1/2 at the gate, and
    ``temperature = 0`` is the hard gate ``1[score > tau]`` that it tends to as ``T -> 0``. The
    hard gate drops a 6-2 split (D = 0.43) at tau = 0.45 although one sample in four disagrees;
    here it is trained with probability 0.40 at ``T = 0.05``. NaN scores get 0.
    Shapes: scalars -> float in [0, 1]. ``temperature < 0`` raises ``ValueError``.
    """
    if temperature < 0:
        raise ValueError(f"temperature must be non-negative, got {temperature}")
    if math.isnan(score):
        return 0.0
    if temperature == 0:
        return 1.0 if score > tau else 0.0
    z = (score - tau) / temperature
    if z >= 0:  # the two branches keep exp() from overflowing for far-off scores
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def quantile_threshold(scores: Sequence[float], q: float) -> float:
    """The ``q``-quantile of ``scores`` (linear interpolation between order statistics, as
    NumPy's default), NaNs ignored: an adaptive per-task gate. With the strict gate
    ``score > threshold`` it keeps about the top ``1 - q`` of the task's checkpoints, whatever
    their absolute scale. Shapes: [C] -> float. ``ValueError`` for ``q`` outside [0, 1] or no
    finite score."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1], got {q}")
    ordered = sorted(float(s) for s in scores if not math.isnan(s))
    if not ordered:
        raise ValueError("a quantile needs at least one score")
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (position - low) * (ordered[high] - ordered[low])


def draw_independent(weights: Sequence[float], rng: random.Random) -> list[int]:
    """Each index ``i`` kept independently with probability ``weights[i]``, ascending.

    If none is kept but some weight is positive, one index is drawn with probability
    proportional to its weight, so that a visit always trains somewhere. Shapes: [C] weights in
    [0, 1] -> sorted indices (empty only when every weight is 0). Consumes ``rng`` in index order.
    """
    kept = [i for i, w in enumerate(weights) if rng.random() < w]
    if kept or not any(w > 0 for w in weights):
        return kept
    return [rng.choices(range(len(weights)), weights=weights)[0]]


def draw_weighted(weights: Sequence[float], k: int, rng: random.Random) -> list[int]:
    """``k`` distinct indices, each successive draw proportional to weight among those left
    (Efraimidis-Spirakis keys ``u ** (1 / w)``); zero weights are never drawn. Shapes: [C]
    non-negative weights -> at most ``min(k, #positive)`` indices, in draw order."""
    if k < 0:
        raise ValueError(f"k must be non-negative, got {k}")
    keyed = []
    for i, w in enumerate(weights):
        u = rng.random()
        if w > 0:
            keyed.append((u ** (1.0 / w), i))
    keyed.sort(reverse=True)
    return [i for _, i in keyed[:k]]


# -- scorers --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PivotEvidence:
    """Everything a pivot scorer may look at for one checkpoint.

    Each scorer uses only the fields it needs and raises ``ValueError`` when those are missing.
    """

    actions: tuple[Action | None, ...] = ()
    """The N sampled actions (``None`` = an output that did not parse)."""
    rewards: tuple[float, ...] | None = None
    """Per-sample rewards, e.g. OneStep expert-match rewards or local rollout outcomes."""
    log_probs: tuple[float, ...] | None = None
    """Per-sample log-probabilities log pi(a_i | c_t) of the sampled actions."""
    entropy: float | None = None
    """A policy-provided entropy at the checkpoint (e.g. first-token entropy); overrides
    ``log_probs`` for the ``entropy`` scorer."""
    matcher: ActionMatcher | None = None
    """Action equivalence for ``disagreement``; ``None`` means the paper's rules."""
    seed: int = 0
    """Seed of the ``random`` scorer."""
    key: str = ""
    """Stable checkpoint identifier; ``random`` mixes it into the seed so each checkpoint gets
    its own reproducible draw."""


PivotScorer = Callable[[PivotEvidence], float]

PIVOT_SCORERS: Registry[PivotScorer] = Registry("pivot scorer")


@PIVOT_SCORERS.register("disagreement")
def score_disagreement(evidence: PivotEvidence) -> float:
    """The paper's action disagreement ``D`` of ``evidence.actions`` under ``evidence.matcher``."""
    return disagreement(evidence.actions, evidence.matcher)


@PIVOT_SCORERS.register("reward_variance")
def score_reward_variance(evidence: PivotEvidence) -> float:
    """Population variance (``1/N``) of the per-sample rewards; ``p (1 - p)`` for 0/1 rewards."""
    rewards = evidence.rewards
    if not rewards:
        raise ValueError("reward_variance needs per-sample rewards (PivotEvidence.rewards)")
    mean = math.fsum(rewards) / len(rewards)
    return math.fsum((r - mean) ** 2 for r in rewards) / len(rewards)


@PIVOT_SCORERS.register("entropy")
def score_entropy(evidence: PivotEvidence) -> float:
    """``evidence.entropy`` if given, else the mean negative log-prob of the samples (a Monte
    Carlo estimate of the policy's entropy at the checkpoint)."""
    if evidence.entropy is not None:
        return float(evidence.entropy)
    if not evidence.log_probs:
        raise ValueError("entropy needs PivotEvidence.entropy or per-sample log_probs")
    return -math.fsum(evidence.log_probs) / len(evidence.log_probs)


@PIVOT_SCORERS.register("all")
def score_all(evidence: PivotEvidence) -> float:
    """1.0 for every checkpoint: every checkpoint is a pivot (ablation)."""
    return 1.0


@PIVOT_SCORERS.register("random")
def score_random(evidence: PivotEvidence) -> float:
    """A uniform draw in [0, 1) fixed by ``(seed, key)``; reproducible across processes."""
    return random.Random(f"{evidence.seed}:{evidence.key}").random()


def score_checkpoint(name: str, evidence: PivotEvidence) -> float:
    """Score one checkpoint with the registered scorer ``name`` (unknown name -> error listing
    the valid ones)."""
    return PIVOT_SCORERS.get(name)(evidence)
