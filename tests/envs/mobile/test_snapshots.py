"""Snapshots: O(1) immutable states, exact restores, independent branches (memory and replay
backends)."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from adaroll.actions import Action
from adaroll.envs.base import run_expert
from adaroll.envs.mobile import EpisodeState, MobileEnv
from adaroll.snapshots.base import SNAPSHOT_BACKENDS, SupportsStateCopy

from .conftest import spec

TASK = spec("shop.buy", 4)


@pytest.fixture
def mid(env: MobileEnv, suite) -> tuple[MobileEnv, list[Action]]:  # type: ignore[no-untyped-def]
    actions, ok = run_expert(env, suite, TASK)
    assert ok
    env.reset(options={"task": TASK})
    for a in actions[:8]:
        env.step(a)
    return env, actions


def test_protocol_and_immutability(mid) -> None:  # type: ignore[no-untyped-def]
    env, _ = mid
    assert isinstance(env, SupportsStateCopy)
    state = env.get_state()
    assert isinstance(state, EpisodeState) and state is env.get_state()
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.steps = 0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.phone.stack = ()  # type: ignore[misc]
    assert hash(state.phone.stack) == hash(env.get_state().phone.stack)


def test_restore_equal_state_and_identical_next_observations(mid) -> None:  # type: ignore[no-untyped-def]
    env, actions = mid
    state = env.get_state()
    branch = env.branch(state)
    assert branch.get_state() == state and branch is not env
    assert branch.observe() == env.observe()
    assert branch.observe().element_tree_hash() == env.observe().element_tree_hash()
    for a in actions[8:]:
        out_a, out_b = env.step(a), branch.step(a)
        assert out_a[0] == out_b[0] and out_a[1:4] == out_b[1:4]
        assert env.get_state() == branch.get_state()
    assert env.get_state().success


def test_many_branches_from_one_snapshot_do_not_interfere(mid) -> None:  # type: ignore[no-untyped-def]
    env, actions = mid
    state = env.get_state()
    reference = env.observe()
    moves = [
        Action.press("back"),
        Action.press("home"),
        Action.type_text("x"),
        Action.swipe("up"),
        Action.tap(0.5, 0.5),
        Action.tap(0.05, 0.06),
        actions[8],
        Action.done("42"),
    ]
    branches = [env.branch(state) for _ in moves]
    for branch, move in zip(branches, moves, strict=True):
        branch.step(move)
    assert env.get_state() == state and env.observe() == reference
    assert len({b.get_state() for b in branches}) > 4  # they went different ways
    fresh = env.branch(state)  # the snapshot itself is unchanged
    assert fresh.get_state() == state and fresh.observe() == reference
    assert fresh.step(actions[8])[0] == env.branch(state).step(actions[8])[0]


def test_set_state_rewinds_in_place(mid) -> None:  # type: ignore[no-untyped-def]
    env, actions = mid
    state = env.get_state()
    env.step(actions[8])
    env.set_state(state)
    assert env.get_state() == state and env.steps_taken == 8


@pytest.mark.parametrize("backend", ["memory", "replay"])
def test_snapshot_backends(backend: str, mid) -> None:  # type: ignore[no-untyped-def]
    env, actions = mid
    snaps = SNAPSHOT_BACKENDS.get(backend)(make_env=MobileEnv)
    ref = snaps.save(env, tuple(actions[:8]))
    assert ref.element_tree_hash == env.observe().element_tree_hash()
    branches = [snaps.restore(ref) for _ in range(3)]
    for b in branches:
        assert b.get_state() == env.get_state()
        assert b.observe().element_tree_hash() == ref.element_tree_hash
    branches[0].step(Action.press("home"))
    assert branches[1].get_state() == env.get_state()
    for a in actions[8:]:
        branches[2].step(a)
    assert branches[2].get_state().success
    snaps.close()


def test_states_pickle_for_other_processes(mid) -> None:  # type: ignore[no-untyped-def]
    env, actions = mid
    state = env.get_state()
    copy = pickle.loads(pickle.dumps(state))
    assert copy == state and copy.task is state.task  # the instance comes back from the cache
    branch = env.branch(copy)
    assert branch.observe() == env.observe()
    assert branch.step(actions[8])[0] == env.step(actions[8])[0]
