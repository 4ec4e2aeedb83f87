"""Worked adapters shipped with AdaRoll; importing this package registers them."""

from adaroll.envs.gymnasium.examples.frozen_lake import FrozenLakeAdapter

__all__ = ["FrozenLakeAdapter"]
