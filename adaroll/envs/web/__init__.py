"""The web environment: MiniWoB++ tasks on headless Chromium over the DevTools protocol.

Importing this package registers ``ENVS["web"]`` (:class:`WebEnv`) and ``SUITES["web"]``
(:class:`MiniWoBSuite`).
"""

from adaroll.envs.web.browser import BrowserConfig, BrowserProcess, BrowserUnavailableError
from adaroll.envs.web.env import WebEnv, WebEnvConfig
from adaroll.envs.web.suite import MiniWoBSuite

__all__ = [
    "BrowserConfig",
    "BrowserProcess",
    "BrowserUnavailableError",
    "MiniWoBSuite",
    "WebEnv",
    "WebEnvConfig",
]
