"""The Gymnasium ids of AdaRoll's own envs, registered by ``import adaroll.envs``. Apart from
:mod:`adaroll.envs.as_gymnasium` (the adapter they point at) so that registering imports
neither the adapter nor an env package: the entry point is a string, resolved on
``gymnasium.make``."""

from __future__ import annotations

import gymnasium

GYMNASIUM_IDS = {"adaroll/Mobile-v0": "mobile", "adaroll/MiniWoB-v0": "web"}
"""Registered Gymnasium id -> AdaRoll env name."""


def register_gymnasium_ids() -> None:
    """Register :data:`GYMNASIUM_IDS` with Gymnasium (once)."""
    for gym_id, env in GYMNASIUM_IDS.items():
        if gym_id not in gymnasium.registry:
            gymnasium.register(
                gym_id, entry_point="adaroll.envs.as_gymnasium:AdaRollGymEnv", kwargs={"env": env}
            )
