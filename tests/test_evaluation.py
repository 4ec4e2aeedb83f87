"""Batch evaluation keeps at most ``max_live`` envs of a kind alive and reuses them by reset;
the clamp acts like asking for that batch size."""

from __future__ import annotations

import pytest

from adaroll.envs.base import EnvFault
from adaroll.evaluation import SplitResult, evaluate_split
from adaroll.rollout.jobs import RolloutFailed
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
    assert (scarce.avg, scarce.pass_, scarce.env_steps) == (
        plenty.avg,
        plenty.pass_,
        plenty.env_steps,
    )
    assert 0 < plenty.avg < 1  # the policy is stochastic: reused envs must not leak outcomes


class CrashOnceEnv(LineEnv):
    """Its 5th step (over all instances) raises an env fault, once."""

    steps = 0
    closed = 0

    def step(self, action):
        type(self).steps += 1
        if type(self).steps == 5:
            raise EnvFault("browser crashed")
        return super().step(action)

    def close(self) -> None:
        type(self).closed += 1
        super().close()


def test_a_crashed_env_reruns_its_chunk_instead_of_scoring_a_failure():
    tasks = LineSuite().split("train")
    result = evaluate_split(GoPolicy(5.0), CrashOnceEnv, tasks, k=2, history_window=2, seed=1)
    # the policy almost always walks to the goal: a crash scored as a failure would show
    assert result.avg == 1.0 and result.episodes == 8
    assert CrashOnceEnv.closed >= 8 + 1  # the first attempt's envs were all replaced


def test_an_env_that_keeps_crashing_fails_the_evaluation_clearly():
    class AlwaysCrash(LineEnv):
        def step(self, action):
            raise EnvFault("browser crashed")

    with pytest.raises(RolloutFailed, match="evaluation failed 2 times"):
        evaluate_split(
            GoPolicy(0.0),
            AlwaysCrash,
            LineSuite().split("train"),
            k=1,
            history_window=2,
            seed=1,
            max_retries=1,
        )


def test_envs_that_take_calls_from_threads_reset_at_once():
    """Each reset waits until the chunk's other three have started: it completes only if the
    four run at the same time (a sequential reset would time out on the barrier)."""
    import threading

    barrier = threading.Barrier(4, timeout=10)

    class BrowserLike(LineEnv):
        max_live = 4
        concurrent_calls = True

        def reset(self, *, seed=None, options=None):
            barrier.wait()
            return super().reset(seed=seed, options=options)

    tasks = LineSuite().split("train")
    together = evaluate_split(GoPolicy(0.3), BrowserLike, tasks, k=2, history_window=2, seed=5)
    alone = evaluate_split(GoPolicy(0.3), LineEnv, tasks, k=2, history_window=2, seed=5, batch=4)
    assert together.outcomes == alone.outcomes and together.env_steps == alone.env_steps


class TaskLogEnv(ScarceEnv):
    """Plays 4 attempts in turn and logs, per instance, the tasks it was reset to."""

    max_live = 2
    episodes_per_env = 4
    resets: dict[int, list[str]] = {}

    def reset(self, *, seed=None, options=None):
        type(self).resets.setdefault(id(self), []).append(options["task"].id)
        return super().reset(seed=seed, options=options)


def test_each_env_plays_its_episodes_per_env_attempts_of_one_task_in_turn():
    tasks = LineSuite().split("train")
    TaskLogEnv.created = TaskLogEnv.live = TaskLogEnv.most_live = 0
    result = evaluate_split(GoPolicy(0.3), TaskLogEnv, tasks, k=4, history_window=2, seed=5)
    assert TaskLogEnv.most_live == 2 and TaskLogEnv.live == 0
    assert result.episodes == 4 * len(tasks) and all(len(v) == 4 for v in result.outcomes.values())
    played = [ids for ids in TaskLogEnv.resets.values()]
    assert sorted(t for ids in played for t in ids) == sorted(t.id for t in tasks for _ in range(4))
    # every run of 4 consecutive resets of one env is one task's 4 attempts
    assert all(len(set(ids[i : i + 4])) == 1 for ids in played for i in range(0, len(ids), 4))
    again = evaluate_split(GoPolicy(0.3), TaskLogEnv, tasks, k=4, history_window=2, seed=5)
    assert again.outcomes == result.outcomes


def test_by_template_groups_task_ids_by_their_template_and_keeps_every_outcome():
    outcomes = {
        "web:login-user#3": [True, False],
        "web:click-shades#0": [False, False],
        "web:login-user#1": [True, True],
        "mobile:a:b#2": [False, True],
    }
    groups = SplitResult(0.5, 0.75, 8, 8, 8, outcomes).by_template()
    assert list(groups) == ["a:b", "click-shades", "login-user"]
    assert groups["login-user"] == {
        "web:login-user#3": [True, False],
        "web:login-user#1": [True, True],
    }
    assert sum(len(g) for g in groups.values()) == len(outcomes)
