"""Batch evaluation keeps at most ``max_live`` envs of a kind alive and reuses them by reset;
the clamp acts like asking for that batch size."""

from __future__ import annotations

from adaroll.evaluation import evaluate_split
from tests.fakes import GoPolicy, LineEnv, LineSuite


class ScarceEnv(LineEnv):
    max_live = 3
    created = 0
    live = 0
    most_live = 0

    def __init__(self) -> None:
        super().__init__()
        cls = type(self)
        cls.created += 1
        cls.live += 1
        cls.most_live = max(cls.most_live, cls.live)

    def close(self) -> None:
        type(self).live -= 1
        super().close()


def test_evaluation_respects_max_live():
    tasks = LineSuite().split("train")
    plenty = evaluate_split(GoPolicy(0.3), LineEnv, tasks, k=4, history_window=2, seed=5, batch=3)
    scarce = evaluate_split(GoPolicy(0.3), ScarceEnv, tasks, k=4, history_window=2, seed=5)
    assert ScarceEnv.created == 3 and ScarceEnv.most_live == 3 and ScarceEnv.live == 0
    assert scarce.outcomes == plenty.outcomes
    assert (scarce.avg, scarce.pass_, scarce.env_steps) == (plenty.avg, plenty.pass_, plenty.env_steps)
    assert 0 < plenty.avg < 1  # the policy is stochastic: reused envs must not leak outcomes
