"""Environments, registered by name. Built-in ones are imported on first use, so that asking
for ``mobile`` never imports the browser stack and vice versa."""

from __future__ import annotations

import importlib
import inspect
import json
from collections.abc import Callable
from typing import Any

from adaroll.envs.base import ENVS, SUITES, GUIEnv, RegisteredEnv, TaskSuite
from adaroll.envs.gymnasium_ids import register_gymnasium_ids
from adaroll.registry import UnknownNameError

BUILTIN = {
    "mobile": "adaroll.envs.mobile",
    "web": "adaroll.envs.web",
    "apps": "adaroll.envs.apps",
    "gymnasium": "adaroll.envs.gymnasium",
    "browsergym": "adaroll.envs.browsergym",
}

register_gymnasium_ids()  # gymnasium.make("adaroll/Mobile-v0", ...): adaroll/envs/gymnasium_ids.py


def _ensure(name: str) -> None:
    """Import the built-in package of env ``name``. An unknown name, or a built-in package
    missing from this build, is left to the registry lookup, whose error lists valid names."""
    if name not in BUILTIN and name not in ENVS:
        raise UnknownNameError(
            f"unknown environment {name!r}; valid names: {', '.join(env_names())}"
        )
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


def check_options(what: str, target: Callable[..., Any], options: dict[str, Any]) -> None:
    """Raise :class:`~adaroll.config.ConfigError` naming every option ``target`` does not take
    (and the ones it does): a misspelt option must not be silently ignored."""
    from adaroll.config import ConfigError

    params = inspect.signature(target).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return  # takes anything: it validates its own options
    known = [
        p.name
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ConfigError(
            f"unknown {what} option(s) {', '.join(map(str, unknown))}; valid: "
            f"{', '.join(known) or '(none)'}"
        )


def make_env_factory(name: str, **options: Any) -> Callable[[], GUIEnv]:
    """A zero-argument factory of fresh envs of kind ``name`` (unknown name or option -> clear
    error, raised here rather than by the first env built)."""
    factory = env_kind(name)
    what = f"{name} environment (env.options)"
    check_options(what, factory, options)
    from adaroll.config import ConfigError

    try:  # values too (e.g. a device profile), before any env is built
        factory.validate_options(**options)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{what}: {exc}") from None
    return lambda: factory(**options)


def env_kind(name: str) -> RegisteredEnv:
    """The registered factory of env ``name`` with its declared capabilities
    (:class:`~adaroll.envs.base.EnvKind`)."""
    _ensure(name)
    kind: RegisteredEnv = ENVS.get(name)
    return kind


def env_settings(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """What decides how envs of kind ``name`` made with ``options`` behave, defaults resolved
    and as JSON values: the factory's declared ``settings(**options)`` (the web env adds its
    browser flags; by default the options as given). A run records this, so that a default
    changed in the code later cannot silently change a resumed run's env (``env.json``)."""
    resolved = env_kind(name).settings(**options)
    return json.loads(json.dumps(resolved, default=str))  # tuples -> lists, as read back


def episodes_per_env(name: str) -> int:
    """The env kind's default for ``rollout.episodes_per_env`` (declared; 1 by default)."""
    return int(env_kind(name).episodes_per_env)


def make_env(name: str, **options: Any) -> GUIEnv:
    return make_env_factory(name, **options)()


def get_suite(name: str, env_options: dict[str, Any] | None = None, **options: Any) -> TaskSuite:
    """The task suite of env ``name``; an unknown or invalid option raises
    :class:`~adaroll.config.ConfigError` naming it. A suite class that declares
    ``takes_env_options`` (e.g. ``gymnasium``, whose adapter is an env option) gets
    ``env_options`` first."""
    from adaroll.config import ConfigError

    _ensure(name)
    cls: type[TaskSuite] = SUITES.get(name)
    what = f"{name} task suite (env.suite_options)"
    check_options(what, cls, options)
    first = (dict(env_options or {}),) if cls.takes_env_options else ()
    try:
        suite: TaskSuite = cls(*first, **options)
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{what}: {exc}") from None
    return suite
