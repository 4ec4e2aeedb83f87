"""Verifiers are not trivially satisfied: a uniform random policy rarely succeeds."""

from __future__ import annotations

import random

from adaroll.actions import Action
from adaroll.envs.mobile import TEMPLATES, MobileEnv

from .conftest import spec

WORDS = ("hello", "Groceries", "555-123-4567", "ok", "Alice", "Tokyo")


def random_action(rng: random.Random) -> Action:
    r = rng.random()
    if r < 0.65:
        return Action.tap(rng.random(), rng.random())
    if r < 0.75:
        return Action.swipe(rng.choice(("up", "down", "left", "right")))
    if r < 0.85:
        return Action.press(rng.choice(("back", "home", "enter")))
    if r < 0.95:
        return Action.type_text(rng.choice(WORDS))
    return Action(kind="long_press", x=rng.random(), y=rng.random())


def test_random_policy_rarely_passes() -> None:
    env, rng = MobileEnv(), random.Random(0)
    episodes = successes = 0
    for template in sorted(TEMPLATES):
        for seed in (0, 1, 2):
            env.reset(options={"task": spec(template, seed)})
            while True:
                _, reward, terminated, truncated, info = env.step(random_action(rng))
                if terminated or truncated:
                    break
            episodes += 1
            successes += bool(info["success"])
            assert truncated or terminated
    assert successes / episodes < 0.05, (successes, episodes)
