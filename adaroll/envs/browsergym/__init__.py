"""BrowserGym tasks (``browsergym-core`` and its benchmark packages) inside AdaRoll.

Importing this package registers ``ENVS["browsergym"]`` (:class:`BrowserGymEnv`) and
``SUITES["browsergym"]`` (:class:`BrowserGymSuite`). Needs the ``browsergym`` extra; see
docs/browsergym.md.
"""

from adaroll.envs.browsergym.env import BrowserGymEnv, BrowserGymEnvConfig
from adaroll.envs.browsergym.suite import BrowserGymSuite

__all__ = ["BrowserGymEnv", "BrowserGymEnvConfig", "BrowserGymSuite"]
