"""The embedded mobile GUI environment: a simulated phone with 9 apps, 80+ task templates
(plus the long-horizon family, ``LONG_TEMPLATES``), scripted experts and O(1) snapshots. Importing this package registers ``ENVS["mobile"]`` and
``SUITES["mobile"]``.

    env = MobileEnv()
    obs, info = env.reset(options={"task": TaskSpec("mobile", "notes.create", 3)})
    obs.elements          # tuple[UIElement], normalised bounds, roles and flags
    env.step(Action.tap(*obs.elements[2].center))
"""

from adaroll.envs.mobile.env import EpisodeState, MobileEnv, MobileEnvConfig
from adaroll.envs.mobile.suite import SPLITS, MobileTaskSuite, difficulty
from adaroll.envs.mobile.tasks import LONG_TEMPLATES, TEMPLATES

__all__ = [
    "LONG_TEMPLATES",
    "SPLITS",
    "TEMPLATES",
    "EpisodeState",
    "MobileEnv",
    "MobileEnvConfig",
    "MobileTaskSuite",
    "difficulty",
]
