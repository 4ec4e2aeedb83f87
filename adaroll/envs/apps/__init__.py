"""The apps env: six web apps with servers and databases (mail, shop, calendar, tracker,
notes, admin), tasks judged on their databases, snapshotted whole with CRIU.

Importing this package registers ``ENVS["apps"]`` (:class:`AppsEnv`) and ``SUITES["apps"]``.
"""

from adaroll.envs.apps.config import AppsEnvConfig
from adaroll.envs.apps.env import AppsEnv
from adaroll.envs.apps.suite import AppsSuite

__all__ = ["AppsEnv", "AppsEnvConfig", "AppsSuite"]
