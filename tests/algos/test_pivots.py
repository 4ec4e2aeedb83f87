"""Pivot math: clustering under M, disagreement (paper Table 4), selection, scorers."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adaroll.actions import Action, ActionKind, ActionMatcher, format_action
from adaroll.algos.pivots import (
    PIVOT_SCORERS,
    PivotEvidence,
    canonical_order,
    cluster_actions,
    cluster_sizes,
    disagreement,
    disagreement_from_counts,
    score_checkpoint,
    select_pivots,
    select_top_k,
)
from adaroll.registry import UnknownNameError

# Paper Table 4, N = 8: cluster sizes -> D (rounded to 4 places in the issue, 3 in the paper).
PAPER_TABLE = [
    ((8,), 0.0),
    ((7, 1), 0.25),
    ((6, 2), 0.4286),
    ((6, 1, 1), 0.4643),
    ((5, 3), 0.5357),
    ((4, 4), 0.5714),
    ((1,) * 8, 1.0),
]

# Eight decisions that are pairwise different under the paper's matcher.
PROTOTYPES = [
    Action.tap(0.10, 0.10),
    Action.tap(0.60, 0.60),
    Action.swipe("up"),
    Action(ActionKind.SWIPE, x=0.2, y=0.5, x2=0.8, y2=0.5),  # right
    Action.type_text("hello"),
    Action.press("back"),
    Action(ActionKind.OPEN_APP, app="Contacts"),
    Action.done(),
]


def _variant(proto: Action, rng: random.Random) -> Action:
    """A different-looking action that is the same decision as ``proto`` (within 2% / same
    direction / any text), so members are within 4% of each other and of any leader."""
    if proto.kind is ActionKind.TAP:
        assert proto.x is not None and proto.y is not None
        return Action.tap(proto.x + rng.uniform(-0.02, 0.02), proto.y + rng.uniform(-0.02, 0.02))
    if proto.kind is ActionKind.SWIPE and proto.direction == "up":
        y = rng.uniform(0.6, 0.9)
        return Action(ActionKind.SWIPE, x=0.5, y=y, x2=0.5, y2=y - 0.4)
    if proto.kind is ActionKind.TYPE:
        return Action.type_text(rng.choice(["hello", "world", "", "x y z"]))
    if proto.kind is ActionKind.OPEN_APP:
        return Action(ActionKind.OPEN_APP, app=rng.choice(["Contacts", "contacts", " CONTACTS"]))
    if proto.kind is ActionKind.DONE:
        return Action.done(rng.choice([None, "yes", "42"]))
    return proto


def _samples(sizes: tuple[int, ...], seed: int = 0) -> list[Action]:
    rng = random.Random(seed)
    out = [_variant(PROTOTYPES[j], rng) for j, n in enumerate(sizes) for _ in range(n)]
    rng.shuffle(out)
    return out


# -- disagreement ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("sizes", "expected"), PAPER_TABLE)
def test_disagreement_from_counts_matches_paper_table(
    sizes: tuple[int, ...], expected: float
) -> None:
    assert disagreement_from_counts(sizes) == pytest.approx(expected, abs=5e-5)


def test_disagreement_exact_fractions() -> None:
    assert disagreement_from_counts([6, 2]) == pytest.approx(1 - 32 / 56)  # 3/7
    assert disagreement_from_counts([6, 1, 1]) == pytest.approx(1 - 30 / 56)  # 13/28
    assert disagreement_from_counts([5, 3]) == pytest.approx(1 - 26 / 56)
    assert disagreement_from_counts([1, 1]) == 1.0
    assert disagreement_from_counts([2]) == 0.0
    assert disagreement_from_counts([3, 0, 1]) == disagreement_from_counts([3, 1])


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(("sizes", "expected"), PAPER_TABLE)
def test_disagreement_from_actions_matches_paper_table(
    sizes: tuple[int, ...], expected: float, seed: int
) -> None:
    actions = _samples(sizes, seed)
    assert len(actions) == 8
    assert sorted(cluster_sizes(actions), reverse=True) == sorted(sizes, reverse=True)
    assert disagreement(actions) == pytest.approx(expected, abs=5e-5)


def test_invalid_samples_are_singletons() -> None:
    actions: list[Action | None] = [Action.tap(0.5, 0.5)] * 6 + [None, None]
    assert cluster_sizes(actions) == [6, 1, 1]
    assert cluster_actions(actions) == [[0, 1, 2, 3, 4, 5], [6], [7]]
    assert disagreement(actions) == pytest.approx(0.4643, abs=5e-5)
    assert disagreement([None] * 8) == 1.0


@pytest.mark.parametrize("bad", [[], [1], [0, 1], [0, 0]])
def test_disagreement_needs_two_samples(bad: list[int]) -> None:
    with pytest.raises(ValueError, match="at least 2"):
        disagreement_from_counts(bad)


def test_disagreement_rejects_bad_counts() -> None:
    with pytest.raises(ValueError, match=r"cluster counts must be non-negative, got \[3, -1\]"):
        disagreement_from_counts([3, -1])
    with pytest.raises(TypeError):
        disagreement_from_counts([2.5, 1])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        disagreement([Action.tap(0.5, 0.5)])


def test_matcher_changes_clusters() -> None:
    actions = [Action.type_text("yes")] * 4 + [Action.type_text("no")] * 4
    assert disagreement(actions) == 0.0  # paper: every two text inputs are equivalent
    exact = ActionMatcher(text_mode="exact")
    assert disagreement(actions, exact) == pytest.approx(0.5714, abs=5e-5)
    assert score_checkpoint(
        "disagreement", PivotEvidence(actions=tuple(actions), matcher=exact)
    ) == (disagreement(actions, exact))


# -- clustering rule ------------------------------------------------------------------------------


def test_greedy_leader_rule_on_a_non_transitive_chain() -> None:
    # 0.50 ~ 0.54 ~ 0.58 but 0.50 !~ 0.58: the leader (first in canonical text order, 0.50)
    # takes 0.54; 0.58 is too far from that leader and founds its own cluster.
    chain = [Action.tap(0.58, 0.5), Action.tap(0.50, 0.5), Action.tap(0.54, 0.5)]
    assert cluster_actions(chain) == [[1, 2], [0]]
    assert [format_action(chain[i]) for i in canonical_order(chain)] == [
        "tap(0.5, 0.5)",
        "tap(0.54, 0.5)",
        "tap(0.58, 0.5)",
    ]


def test_members_are_compared_with_leaders_only() -> None:
    # The leader (0.48, 0.5) matches both others, which are 10% apart in y: one cluster whose
    # diameter exceeds the tolerance.
    a, b = Action.tap(0.50, 0.45), Action.tap(0.53, 0.55)
    assert not ActionMatcher()(a, b)
    assert cluster_actions([b, a, Action.tap(0.48, 0.5)]) == [[0, 1, 2]]
    # Without that leader they are two decisions.
    assert cluster_actions([b, a]) == [[1], [0]]


def test_every_index_once_and_identical_actions_together() -> None:
    rng = random.Random(3)
    actions: list[Action | None] = [_variant(rng.choice(PROTOTYPES), rng) for _ in range(30)]
    actions += [None, actions[0], actions[5]]
    clusters = cluster_actions(actions)
    flat = sorted(i for c in clusters for i in c)
    assert flat == list(range(len(actions)))
    where = {i: ci for ci, c in enumerate(clusters) for i in c}
    assert where[0] == where[31] and where[5] == where[32]


def test_cluster_members_match_their_leader() -> None:
    rng = random.Random(7)
    actions = [Action.tap(round(rng.uniform(0.3, 0.5), 2), 0.5) for _ in range(40)]
    m = ActionMatcher()
    for cluster in cluster_actions(actions):
        leader = min(cluster, key=lambda i: (format_action(actions[i]), i))
        assert all(m(actions[leader], actions[i]) for i in cluster)


# Coarse grids so that ties, chains and exact 5% boundaries are common.
grid = st.integers(min_value=0, max_value=20).map(lambda i: i / 100)
sampled = st.one_of(
    st.builds(Action.tap, grid, grid),
    st.builds(lambda x, y: Action(ActionKind.DOUBLE_TAP, x=x, y=y), grid, grid),
    st.sampled_from(["up", "down", "left", "right"]).map(Action.swipe),
    st.sampled_from(["a", "ab", "abc", "xyz", "A b"]).map(Action.type_text),
    st.sampled_from(["back", "home"]).map(Action.press),
    st.none(),
)
matchers = st.sampled_from(
    [
        ActionMatcher(),
        ActionMatcher(tol_x=0.03, tol_y=0.08),
        ActionMatcher(text_mode="soft", text_max_distance=0.5),
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(sampled, max_size=16).flatmap(
        lambda xs: st.tuples(st.just(xs), st.permutations(range(len(xs))))
    ),
    matchers,
)
def test_clustering_is_invariant_under_permutation(
    data: tuple[list[Action | None], list[int]], matcher: ActionMatcher
) -> None:
    actions, perm = data
    permuted = [actions[p] for p in perm]
    original = cluster_actions(actions, matcher)
    shuffled = cluster_actions(permuted, matcher)
    # the same partition of samples, once indices are mapped back ...
    assert {frozenset(c) for c in original} == {frozenset(perm[i] for i in c) for c in shuffled}
    # ... the same sizes in the same order, and the same disagreement
    assert cluster_sizes(actions, matcher) == cluster_sizes(permuted, matcher)
    if len(actions) >= 2:
        assert disagreement(actions, matcher) == disagreement(permuted, matcher)


@settings(max_examples=200, deadline=None)
@given(st.lists(sampled, min_size=2, max_size=16), matchers)
def test_disagreement_is_a_probability_consistent_with_pairs(
    actions: list[Action | None], matcher: ActionMatcher
) -> None:
    d = disagreement(actions, matcher)
    assert 0.0 <= d <= 1.0
    # D is the share of ordered pairs (i != j) that fall in different clusters
    where = {i: ci for ci, c in enumerate(cluster_actions(actions, matcher)) for i in c}
    n = len(actions)
    differ = sum(where[i] != where[j] for i in range(n) for j in range(n) if i != j)
    assert d == pytest.approx(differ / (n * (n - 1)))


# -- selection ------------------------------------------------------------------------------------


def test_threshold_keeps_6_1_1_and_drops_6_2() -> None:
    table = {sizes: disagreement_from_counts(sizes) for sizes, _ in PAPER_TABLE}
    kept = select_pivots(table)
    assert (6, 1, 1) in kept and (6, 2) not in kept
    assert kept == [(6, 1, 1), (5, 3), (4, 4), (1,) * 8]


def test_threshold_is_strict() -> None:
    assert select_pivots([0.45, 0.4500001, 0.2, 1.0, math.nan]) == [1, 3]
    assert select_pivots([0.5, 0.6], tau=0.5) == [1]
    assert select_pivots({"at": 0.45, "above": 0.46, "nan": math.nan}) == ["above"]  # mappings too
    assert select_pivots([]) == []


def test_top_k() -> None:
    scores = [0.2, 0.9, 0.5, 0.9, math.nan, 0.1]
    assert select_top_k(scores, 3) == [1, 3, 2]  # ties by position
    assert select_top_k(scores, 0) == []
    assert select_top_k(scores, 10) == [1, 3, 2, 0, 5, 4]  # NaN last
    assert select_top_k({"a": 0.1, "b": 0.7, "c": 0.3}, 2) == ["b", "c"]
    with pytest.raises(ValueError, match="k must be non-negative, got -1"):
        select_top_k(scores, -1)


# -- scorers --------------------------------------------------------------------------------------


def test_registered_scorers() -> None:
    assert PIVOT_SCORERS.names() == ["all", "disagreement", "entropy", "random", "reward_variance"]
    with pytest.raises(UnknownNameError, match="valid names: all, disagreement"):
        score_checkpoint("variance", PivotEvidence())


def test_disagreement_scorer() -> None:
    ev = PivotEvidence(actions=tuple(_samples((6, 1, 1))))
    assert score_checkpoint("disagreement", ev) == pytest.approx(0.4643, abs=5e-5)


def test_reward_variance_scorer() -> None:
    score = PIVOT_SCORERS.get("reward_variance")
    assert score(PivotEvidence(rewards=(1.0, 0.0, 0.0, 0.0))) == pytest.approx(0.25 * 0.75)
    assert score(PivotEvidence(rewards=(1.0,) * 8)) == 0.0
    assert score(PivotEvidence(rewards=(0.0, 1.0))) == 0.25
    assert score(PivotEvidence(rewards=(0.2, 0.4, 0.9))) == pytest.approx(
        ((0.2 - 0.5) ** 2 + (0.4 - 0.5) ** 2 + 0.4**2) / 3
    )
    with pytest.raises(ValueError, match="rewards"):
        score(PivotEvidence())


def test_entropy_scorer() -> None:
    score = PIVOT_SCORERS.get("entropy")
    assert score(PivotEvidence(log_probs=(math.log(0.5), math.log(0.25)))) == pytest.approx(
        (math.log(2) + math.log(4)) / 2
    )
    assert score(PivotEvidence(log_probs=(-1.0,), entropy=0.3)) == 0.3
    with pytest.raises(ValueError, match="entropy"):
        score(PivotEvidence())


def test_all_scorer_keeps_everything() -> None:
    scores = [score_checkpoint("all", PivotEvidence(key=str(i))) for i in range(5)]
    assert scores == [1.0] * 5
    assert select_pivots(scores) == list(range(5))


def test_random_scorer_is_seeded_and_reproducible() -> None:
    ev = PivotEvidence(seed=0, key="task-1/c3")
    assert score_checkpoint("random", ev) == 0.6771270411785323  # fixed across processes
    draws = [score_checkpoint("random", PivotEvidence(seed=1, key=f"c{i}")) for i in range(200)]
    assert all(0.0 <= d < 1.0 for d in draws)
    assert len(set(draws)) == 200
    assert draws == [
        score_checkpoint("random", PivotEvidence(seed=1, key=f"c{i}")) for i in range(200)
    ]
    assert draws != [
        score_checkpoint("random", PivotEvidence(seed=2, key=f"c{i}")) for i in range(200)
    ]
    assert 0.3 < sum(d > 0.45 for d in draws) / 200 < 0.8


def test_evidence_is_frozen() -> None:
    ev = PivotEvidence(rewards=(1.0,))
    with pytest.raises(AttributeError):
        ev.seed = 3  # type: ignore[misc]
