"""The gymnasium env on Gymnasium's real FrozenLake through the shipped adapter: splits, the BFS
expert, episode semantics, every snapshot backend (verified restores), config errors."""

from __future__ import annotations

from typing import Any

import pytest

from adaroll.actions import Action
from adaroll.config import ConfigError
from adaroll.envs import get_suite, make_env_factory
from adaroll.envs.base import InvalidActionError, TaskSpec, replay, run_expert
from adaroll.envs.gymnasium import GymnasiumEnv, GymnasiumSuite, StatefulGymnasiumEnv
from adaroll.snapshots.base import SNAPSHOT_BACKENDS, SnapshotError
from adaroll.snapshots.fallback import restore_verified

LAKE = {"id": "FrozenLake-v1", "adapter": "frozen_lake"}
STATELESS = {**LAKE, "adapter": "tests.envs.gymnasium.lakes:StatelessLakeAdapter"}
SIZES = {"n_train": 6, "n_heldout": 3, "n_heldout_templates": 2, "n_pretrain": 6}


def suite(options: dict[str, Any] = LAKE) -> GymnasiumSuite:
    built = get_suite("gymnasium", options, **SIZES)
    assert isinstance(built, GymnasiumSuite)
    return built


def lake(options: dict[str, Any] = LAKE) -> GymnasiumEnv:
    env = make_env_factory("gymnasium", **options)()
    assert isinstance(env, GymnasiumEnv)
    return env


def task(template: str = "lake-4x4", seed: int = 0) -> TaskSpec:
    return TaskSpec("gymnasium", template, seed)


def test_splits_are_disjoint_and_the_bfs_expert_solves_every_task() -> None:
    s, env = suite(), lake()
    splits = {
        name: s.split(name) for name in ("pretrain", "train", "val", "heldout", "heldout-templates")
    }
    assert {name: len(tasks) for name, tasks in splits.items()} == {
        "pretrain": 6,
        "train": 6,
        "val": 3,
        "heldout": 3,
        "heldout-templates": 2,
    }
    instances = [t for tasks in splits.values() for t in tasks]
    assert len(set(instances)) == len(instances)
    assert {t.template for t in splits["heldout-templates"]} == {"lake-7x7"}
    assert "lake-7x7" not in {t.template for t in splits["train"] + splits["pretrain"]}
    for t in instances:
        actions, success = run_expert(env, s, t)
        assert success, t.id
        assert {a.key for a in actions} <= {"left", "down", "right", "up"}
    assert s.policy_hints() == {"kinds": ("key",), "keys": ("left", "down", "right", "up")}


def test_a_task_is_one_seeded_lake_and_resets_are_deterministic() -> None:
    env = lake()
    first, info = env.reset(options={"task": task(seed=3)})
    assert (
        info["task"] == "gymnasium:lake-4x4#3"
        and info["max_steps"] == 16
        and "goal" in info["instruction"]
    )
    assert (
        len(first.elements) == 16
        and [e.flags for e in first.elements].count(frozenset({"selected"})) == 1
    )
    other, _ = env.reset(options={"task": task(seed=4)})
    again, _ = env.reset(options={"task": "gymnasium:lake-4x4#3"})
    assert again.element_tree_hash() == first.element_tree_hash() != other.element_tree_hash()
    with pytest.raises(
        ValueError, match=r"no task gymnasium:lake-9x9#0; templates: lake-4x4, lake-5x5"
    ):
        env.reset(options={"task": task("lake-9x9")})


def test_episode_semantics_goal_hole_truncation_done_and_invalid_actions() -> None:
    env, s = lake(), suite()
    env.reset(options={"task": task()})
    *_, info = env.step(s.expert_action(env))
    while not (env._ended[0] or env._ended[1]):  # the expert to the goal: reward 1 on the last step
        _, reward, terminated, truncated, info = env.step(s.expert_action(env))
    assert (reward, terminated, truncated, info["success"], info["env_reward"]) == (
        1.0,
        True,
        False,
        True,
        1.0,
    )

    obs, _ = env.reset(options={"task": task()})
    start_hash = obs.element_tree_hash()
    with pytest.raises(
        InvalidActionError, match=r"key\(left\|down\|right\|up\), not tap\(0.5, 0.5\)"
    ):
        env.step(Action.tap(0.5, 0.5))
    assert env.steps_taken == 0
    for n in range(1, 17):  # bumping into the top edge never moves: truncated at 4 x 4 steps
        obs, reward, terminated, truncated, info = env.step(Action.press("up"))
        assert (terminated, truncated) == (False, n == 16) and obs.element_tree_hash() == start_hash
    assert info["success"] is False and reward == 0.0
    with pytest.raises(RuntimeError, match="has ended"):
        env.step(Action.press("up"))

    env.reset(options={"task": task()})
    _, reward, terminated, _, info = env.step(Action.done())
    assert (reward, terminated, info["success"]) == (0.0, True, False)


def test_falling_into_a_hole_ends_the_episode_as_a_failure() -> None:
    env = lake()
    for seed in range(30):  # a lake with a hole next to the start
        env.reset(options={"task": task(seed=seed)})
        desc = env.gym_env.unwrapped.desc
        move = "right" if desc[0, 1] == b"H" else "down" if desc[1, 0] == b"H" else None
        if move is not None:
            _, reward, terminated, truncated, info = env.step(Action.press(move))
            assert (reward, terminated, truncated, info["success"]) == (0.0, True, False, False)
            return
    pytest.fail("no lake among 30 seeds has a hole next to the start")


@pytest.mark.parametrize("backend", ["memory", "replay", "forkserver"])
def test_every_backend_restores_a_verified_branch_the_expert_finishes(backend: str) -> None:
    options = LAKE if backend == "memory" else STATELESS
    make_env, s = make_env_factory("gymnasium", **options), suite(options)
    snapshots = SNAPSHOT_BACKENDS.get(backend)(make_env=make_env)
    t = task("lake-6x6", 2)
    env = make_env()
    try:
        expert, ok = run_expert(env, s, t)
        assert ok and len(expert) >= 4
        prefix = tuple(expert[:3])
        live = make_env()
        at = replay(live, t, prefix)
        ref = snapshots.save(live, prefix)
        live.close()
        for _ in range(2):  # branches are independent
            restored = restore_verified(snapshots, ref, make_env)
            branch = restored.env
            assert restored.fallback == "" and branch.steps_taken == 3
            assert (
                branch.observe().element_tree_hash()
                == at.element_tree_hash()
                == ref.element_tree_hash
            )
            for action in expert[3:]:
                *_, terminated, truncated, info = branch.step(action)
            assert terminated and info["success"] and not truncated
            branch.close()
    finally:
        env.close()
        snapshots.close()


def test_memory_snapshots_need_an_adapter_that_copies_state() -> None:
    assert isinstance(lake(), StatefulGymnasiumEnv)
    env = lake(STATELESS)
    assert not isinstance(env, StatefulGymnasiumEnv)
    env.reset(options={"task": task()})
    with pytest.raises(SnapshotError, match="cannot copy its state; use 'replay'"):
        SNAPSHOT_BACKENDS.get("memory")().save(env, ())


def test_a_restored_state_continues_the_gymnasium_time_limit() -> None:
    """The TimeLimit wrapper of gymnasium.make counts on from the restored step, not from 0."""
    options = {**LAKE, "make_options": {"max_episode_steps": 3}}
    env = lake(options)
    env.reset(options={"task": task()})
    env.step(Action.press("up"))
    env.step(Action.press("up"))
    assert isinstance(env, StatefulGymnasiumEnv)
    branch = env.branch(env.get_state())
    *_, truncated, _ = branch.step(Action.press("up"))
    assert truncated and branch.steps_taken == 3


def test_config_errors_name_the_option_and_the_valid_choices() -> None:
    with pytest.raises(
        ConfigError, match=r"unknown Gymnasium id 'FrozenLak-v1'.*Did you mean: `FrozenLake`"
    ):
        make_env_factory("gymnasium", id="FrozenLak-v1", adapter="frozen_lake")
    with pytest.raises(ConfigError, match=r"env.options.adapter is required"):
        make_env_factory("gymnasium", id="FrozenLake-v1")
    with pytest.raises(
        ConfigError, match=r"unknown gymnasium adapter 'lake'; valid names: frozen_lake"
    ):
        make_env_factory("gymnasium", id="FrozenLake-v1", adapter="lake")
    with pytest.raises(ConfigError, match=r"adapter 'no_such.module:Adapter' cannot be imported"):
        make_env_factory("gymnasium", id="FrozenLake-v1", adapter="no_such.module:Adapter")
    with pytest.raises(ConfigError, match=r"bad adapter_options \{'size': 4\}"):
        make_env_factory("gymnasium", **LAKE, adapter_options={"size": 4})
    with pytest.raises(
        ConfigError, match=r"unknown gymnasium environment \(env.options\) option\(s\) map"
    ):
        make_env_factory("gymnasium", **LAKE, map="4x4")
    with pytest.raises(ConfigError, match=r"needs env.options.id and env.options.adapter"):
        get_suite("gymnasium")
    custom = make_env_factory("gymnasium", **LAKE, adapter_options={"sizes": [3], "heldout": []})()
    custom.reset(options={"task": task("lake-3x3")})
    assert len(custom.observe().elements) == 9
