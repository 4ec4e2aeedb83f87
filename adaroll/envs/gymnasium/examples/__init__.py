"""Worked adapters shipped with AdaRoll; importing this package registers them."""

from adaroll.envs.gymnasium.examples.frozen_lake import FrozenLakeAdapter
from adaroll.envs.gymnasium.examples.taxi import TaxiAdapter

__all__ = ["FrozenLakeAdapter", "TaxiAdapter"]
