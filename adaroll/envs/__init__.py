"""Environments, registered by name. Built-in ones are imported on first use, so that asking
for ``mobile`` never imports the browser stack and vice versa."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from adaroll.envs.base import ENVS, SUITES, GUIEnv, TaskSuite

BUILTIN = {"mobile": "adaroll.envs.mobile", "web": "adaroll.envs.web"}


def _ensure(name: str) -> None:
    module = BUILTIN.get(name)
    if module is not None and name not in ENVS:
        importlib.import_module(module)


def env_names() -> list[str]:
    return sorted(set(BUILTIN) | set(ENVS.names()))


def make_env_factory(name: str, **options: Any) -> Callable[[], GUIEnv]:
    """A zero-argument factory of fresh envs of kind ``name`` (unknown name -> clear error)."""
    _ensure(name)
    factory = ENVS.get(name)
    return lambda: factory(**options)


def make_env(name: str, **options: Any) -> GUIEnv:
    return make_env_factory(name, **options)()


def get_suite(name: str, **options: Any) -> TaskSuite:
    _ensure(name)
    suite: TaskSuite = SUITES.get(name)(**options)
    return suite
