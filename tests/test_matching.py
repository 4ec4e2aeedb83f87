"""Configurable action equivalence (``match`` section): soft text matching at its boundaries in
clustering and in the OneStep reward, and partial-credit rewards."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from adaroll.actions import PAPER_MATCHER, Action, ActionMatcher, text_similarity
from adaroll.algos.pivots import cluster_sizes, disagreement
from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.config import MatchConfig, PivotConfig, load_config
from adaroll.envs.base import Observation, TaskSpec, UIElement
from adaroll.policies.base import Context, SampledAction
from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Job
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.pivot_scoring import score_checkpoints
from tests.fakes import GoPolicy, LineEnv

T = Action.type_text
SOFT = ActionMatcher(text_mode="soft")
EXACT = ActionMatcher(text_mode="exact")


def test_default_match_config_is_the_papers_matcher() -> None:
    assert MatchConfig().build() == PAPER_MATCHER
    cfg = load_config(
        overrides=[
            "rl.match.text=soft",
            "rl.match.reward=partial",
            "stage1.match.text_max_distance=0.3",
        ]
    )
    rl = cfg.rl.match.build()
    assert (
        rl.text_mode == "soft"
        and rl.partial_text_credit
        and cfg.stage1.match.build().text_mode == "any"
    )
    assert cfg.stage1.match.build().text_max_distance == 0.3


@pytest.mark.parametrize(("limit", "matches"), [(0.2, True), (0.19, False)])
def test_soft_boundary_is_inclusive(limit: float, matches: bool) -> None:
    # "abcde" -> "abcdx": one substitution in five characters, distance exactly 0.2.
    assert (
        ActionMatcher(text_mode="soft", text_max_distance=limit)(T("abcde"), T("abcdx")) is matches
    )


def test_soft_ignores_case_and_whitespace_exact_does_not() -> None:
    assert SOFT(T("Hello   World "), T("hello world"))
    assert not EXACT(T("Hello   World "), T("hello world"))
    assert not SOFT(T("hello"), T("goodbye"))


def test_text_mode_changes_disagreement_clusters() -> None:
    samples: Sequence[Action | None] = (
        [T("hello world")] * 4 + [T("hello wrld")] * 2 + [T("goodbye")] * 2
    )
    assert cluster_sizes(samples) == [8] and disagreement(samples) == 0.0  # paper: all one decision
    assert sorted(cluster_sizes(samples, SOFT)) == [2, 6]  # the typo joins, "goodbye" does not
    assert disagreement(samples, SOFT) == pytest.approx(0.4286, abs=1e-4)
    assert sorted(cluster_sizes(samples, EXACT)) == [2, 2, 4]


def test_reward_binary_and_partial_credit_values() -> None:
    expert = T("John Smith")
    partial = ActionMatcher(text_mode="soft", partial_text_credit=True)
    assert PAPER_MATCHER.reward(T("anything"), expert) == 1.0  # paper: any type matches
    assert SOFT.reward(T("jon smith"), expert) == 1.0  # distance 0.1 <= 0.2
    assert SOFT.reward(T("Jane Doe"), expert) == 0.0
    assert partial.reward(T("jon smith"), expert) == pytest.approx(0.9)
    assert partial.reward(T("john smith"), expert) == 1.0
    assert partial.reward(T("Jane Doe"), expert) == pytest.approx(
        text_similarity("Jane Doe", "John Smith")
    )
    assert 0.0 < partial.reward(T("Jane Doe"), expert) < 0.5
    # Other kinds keep 0/1 under partial credit; a wrong kind or an invalid sample earns 0.
    assert partial.reward(Action.tap(0.5, 0.5), Action.tap(0.54, 0.46)) == 1.0
    assert partial.reward(Action.tap(0.5, 0.5), Action.tap(0.56, 0.5)) == 0.0
    assert partial.reward(T("John Smith"), Action.tap(0.5, 0.5)) == 0.0
    assert partial.reward(None, expert) == 0.0


class _Scripted(GoPolicy):
    """Returns the same scripted actions for every context (OneStep tests need no env)."""

    def __init__(self, actions: Sequence[Action]) -> None:
        super().__init__()
        self.actions = list(actions)

    def sample(self, contexts: Sequence[Context], n: int, *, greedy: bool = False):
        assert n == len(self.actions)
        return [[SampledAction(a, -1.0) for a in self.actions] for _ in contexts]


def _store() -> CheckpointStore:
    obs = Observation(
        (UIElement(0, "textbox", "", (0.1, 0.1, 0.9, 0.2), frozenset({"editable"})),), (100, 100)
    )
    task = TaskSpec("line", "walk", 0)
    return CheckpointStore([Checkpoint(task, 0, "write the name", (), obs, T("John Smith"), 1)])


SAMPLES = [T("John Smith"), T("john  smith"), T("jon smith"), T("Jane Doe")]


@pytest.mark.parametrize(
    ("match", "rewards"),
    [
        (MatchConfig(), [1.0, 1.0, 1.0, 1.0]),
        (MatchConfig(text="soft"), [1.0, 1.0, 1.0, 0.0]),
        (MatchConfig(text="exact"), [1.0, 0.0, 0.0, 0.0]),
        (MatchConfig(reward="partial"), [1.0, 1.0, 0.9, text_similarity("Jane Doe", "John Smith")]),
    ],
)
def test_onestep_reward_uses_the_configured_matcher(
    match: MatchConfig, rewards: list[float]
) -> None:
    store = _store()
    collector = Collector(
        _Scripted(SAMPLES),
        LineEnv,
        store,
        MemorySnapshots(),
        history_window=2,
        matcher=match.build(),
    )
    task = TaskSpec("line", "walk", 0)
    (group,) = collector.collect(
        [Job("onestep", task, 4, checkpoint_id=next(iter(store)).id)], seed=0
    )
    assert group.rewards == pytest.approx(rewards)


def test_pivot_scoring_clusters_with_the_configured_matcher() -> None:
    store = _store()
    policy = _Scripted(SAMPLES * 2)
    collector = Collector(policy, LineEnv, store, MemorySnapshots(), history_window=2)
    cfg = PivotConfig(n_samples=8)
    any_ = score_checkpoints(policy, collector, store, cfg, seed=0)
    soft = score_checkpoints(policy, collector, store, cfg, seed=0, matcher=SOFT)
    (cid,) = any_.scores
    assert any_.scores[cid] == 0.0  # paper: eight type actions are one decision
    assert soft.scores[cid] == pytest.approx(1 - (6 * 5 + 2 * 1) / 56)  # clusters 6-2
