"""Any Gymnasium env inside AdaRoll (``env.name: gymnasium``), through a small adapter.

Importing this package registers ``ENVS["gymnasium"]``, ``SUITES["gymnasium"]`` and the
shipped adapters (``frozen_lake``, ``taxi``). docs/envs.md is the guide; :mod:`.adapter` the contract.
"""

from adaroll.envs.gymnasium.adapter import ADAPTERS, AdapterError, GymAdapter, resolve_adapter
from adaroll.envs.gymnasium.env import GymnasiumEnv, GymnasiumEnvConfig, StatefulGymnasiumEnv
from adaroll.envs.gymnasium.examples import FrozenLakeAdapter, TaxiAdapter
from adaroll.envs.gymnasium.suite import GymnasiumSuite

__all__ = [
    "ADAPTERS",
    "AdapterError",
    "FrozenLakeAdapter",
    "GymAdapter",
    "GymnasiumEnv",
    "GymnasiumEnvConfig",
    "GymnasiumSuite",
    "StatefulGymnasiumEnv",
    "TaxiAdapter",
    "resolve_adapter",
]
