"""The options of every environment and policy kind, for `adaroll config schema`.

``env.options`` and ``policy.options`` are passed on to an env factory or a policy class, which
check them when they are built (an unknown name fails, listing the valid ones). This module
lists what each accepts - its keyword parameters and the fields of the config dataclass its
``config`` parameter takes - with their types, defaults and the docstrings the dataclasses
give them, so that one schema documents every setting of a run.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
import typing
from typing import Any


def field_docs(cls: type) -> dict[str, str]:
    """The attribute docstrings of a class (a string right after an annotated field)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs: dict[str, str] = {}
    for node, after in zip(body, body[1:], strict=False):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs


def _default(value: Any) -> Any:
    if value is inspect.Parameter.empty or value is dataclasses.MISSING:
        return "(required)"
    return value if isinstance(value, (bool, int, float, str, type(None))) else repr(value)


def describe(target: Any, options_config: type | None = None) -> dict[str, dict[str, Any]]:
    """``{option: {"type", "default", "doc"}}`` of a factory or class taking options. Docs come
    from the attribute docstrings of the config dataclass behind a ``config`` parameter, else
    of ``options_config`` (an env kind's declared :attr:`~adaroll.envs.base.EnvKind.options_config`:
    one field per option)."""
    init = target.__init__ if inspect.isclass(target) else type(target).__call__
    option_docs = field_docs(options_config) if options_config is not None else {}
    try:
        hints = typing.get_type_hints(init)
    except Exception:  # noqa: BLE001 - unresolvable annotations: show them as written
        hints = {}
    out: dict[str, dict[str, Any]] = {}
    for p in inspect.signature(target).parameters.values():
        if p.name.startswith("_") or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        config = next(
            (t for t in typing.get_args(hints.get(p.name)) if dataclasses.is_dataclass(t)), None
        )
        if p.name == "config" and isinstance(config, type):
            docs = field_docs(config)
            for f in dataclasses.fields(config):
                default = (
                    f.default_factory()
                    if f.default_factory is not dataclasses.MISSING
                    else f.default
                )
                out[f.name] = {
                    "type": str(f.type),
                    "default": _default(default),
                    "doc": docs.get(f.name, ""),
                }
            continue
        if p.name in out:  # also a field of the config (e.g. the web env's browser)
            continue
        annotation = p.annotation if p.annotation is not p.empty else "Any"
        doc = option_docs.get(p.name, "")
        out[p.name] = {"type": str(annotation), "default": _default(p.default), "doc": doc}
    return out


def options_schemas() -> dict[str, dict[str, Any]]:
    """``{"env.options": {env: ...}, "policy.options": {kind: ...}}`` for every built-in and
    registered env and policy kind that loads in this build (one that does not says why)."""
    from adaroll.envs import _ensure, env_names
    from adaroll.envs.base import ENVS
    from adaroll.policies import BUILTIN as POLICY_KINDS
    from adaroll.policies import policy_class
    from adaroll.policies.base import POLICIES

    envs: dict[str, Any] = {}
    for name in env_names():
        try:
            _ensure(name)
            entry = ENVS.get(name)
            envs[name] = describe(entry, entry.options_config)
        except Exception as exc:  # noqa: BLE001 - the schema reports an env it cannot load
            envs[name] = {"unavailable": f"{type(exc).__name__}: {exc}"}
    policies: dict[str, Any] = {}
    for kind in sorted(set(POLICY_KINDS) | set(POLICIES.names())):
        try:
            policies[kind] = describe(policy_class(kind))
        except Exception as exc:  # noqa: BLE001
            policies[kind] = {"unavailable": f"{type(exc).__name__}: {exc}"}
    return {"env.options": envs, "policy.options": policies}
