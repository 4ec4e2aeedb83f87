"""Environments, registered by name. Built-in ones are imported on first use, so that asking
for ``mobile`` never imports the browser stack and vice versa."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from adaroll.envs.base import ENVS, SUITES, GUIEnv, TaskSuite
from adaroll.registry import UnknownNameError

BUILTIN = {"mobile": "adaroll.envs.mobile", "web": "adaroll.envs.web"}


def _ensure(name: str) -> None:
    """Import the built-in package of env ``name``. An unknown name, or a built-in package
    missing from this build, is left to the registry lookup, whose error lists valid names."""
    if name not in BUILTIN and name not in ENVS:
        raise UnknownNameError(f"unknown environment {name!r}; valid names: {', '.join(env_names())}")
    module = BUILTIN.get(name)
    if module is not None and name not in ENVS:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:  # a dependency inside the package is missing: a real error
                raise


def env_names() -> list[str]:
    return sorted(set(BUILTIN) | set(ENVS.names()))


def load_all() -> dict[str, str | None]:
    """Try to import every built-in env: ``{name: None, or why it is unavailable}``."""
    status: dict[str, str | None] = {}
    for name in env_names():
        try:
            _ensure(name)
            status[name] = None if name in ENVS else "not part of this build"
        except Exception as exc:  # a listing reports broken envs instead of crashing
            status[name] = f"{type(exc).__name__}: {exc}"
    return status


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
