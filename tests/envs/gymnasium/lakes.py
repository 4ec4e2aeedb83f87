"""Test-only variants of the FrozenLake example: a lake that breaks, adapters that break the
contract or cannot copy state. Imported by path (``env.options.adapter``) as users do."""

from __future__ import annotations

from typing import Any

import gymnasium
from gymnasium.envs.toy_text.frozen_lake import FrozenLakeEnv

from adaroll.envs.base import Observation, UIElement
from adaroll.envs.gymnasium import FrozenLakeAdapter, GymAdapter

FLAKY_ID = "tests/FlakyLake-v0"


class FlakyLake(FrozenLakeEnv):
    """FrozenLake whose ``step`` raises on chosen calls, counted over every instance."""

    fail_on: frozenset[int] = frozenset()
    steps = 0

    def step(self, a: int) -> Any:
        FlakyLake.steps += 1
        if FlakyLake.steps in FlakyLake.fail_on:
            raise ConnectionError(f"lake server went away (call {FlakyLake.steps})")
        return super().step(a)

    @classmethod
    def arm(cls, *calls: int) -> None:
        cls.fail_on, cls.steps = frozenset(calls), 0


if FLAKY_ID not in gymnasium.registry:
    gymnasium.register(FLAKY_ID, entry_point=FlakyLake, max_episode_steps=100)


class StatelessLakeAdapter(FrozenLakeAdapter):
    """The example without state copies: memory snapshots are unavailable."""

    get_state = GymAdapter.get_state  # type: ignore[assignment]
    set_state = GymAdapter.set_state  # type: ignore[assignment]


class MalformedLakeAdapter(FrozenLakeAdapter):
    """Returns tiles whose bounds leave the screen once the agent has moved off the start."""

    def observation(self, env: Any, raw: Any) -> Observation:
        obs = super().observation(env, raw)
        if env.unwrapped.s == 0:
            return obs
        first = obs.elements[0]
        broken = UIElement(first.id, first.role, first.text, (0.0, 0.0, 1.5, 0.2), first.flags)
        return Observation((broken, *obs.elements[1:]), obs.screen_size)
