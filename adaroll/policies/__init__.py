"""Policies, registered by kind. ``make_policy`` builds one from the run config; ``load_policy``
restores a saved one. Built-in kinds are imported on first use (``hf`` needs the llm extra)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from adaroll.config import PolicyConfig
from adaroll.policies.base import POLICIES, Policy
from adaroll.registry import UnknownNameError

BUILTIN = {
    "small": "adaroll.policies.small",
    "hf": "adaroll.policies.hf",
    "remote": "adaroll.policies.remote",
}


def policy_class(kind: str) -> Any:
    if kind not in BUILTIN and kind not in POLICIES:
        valid = ", ".join(sorted(set(BUILTIN) | set(POLICIES.names())))
        raise UnknownNameError(f"unknown policy {kind!r}; valid names: {valid}")
    if kind in BUILTIN and kind not in POLICIES:
        importlib.import_module(BUILTIN[kind])
    return POLICIES.get(kind)


def make_policy(cfg: PolicyConfig, *, seed: int, hints: dict[str, Any] | None = None) -> Policy:
    """A fresh policy of ``cfg.kind`` with ``cfg.options`` (history length from ``cfg.history``).

    ``hints`` are an environment's suggestions (e.g. the app names a launcher offers); the
    small policy takes them, explicit options win."""
    extra = dict(hints or {}) if cfg.kind == "small" else {}
    options: dict[str, Any] = {
        "history_len": cfg.history,
        "seed": seed % 2**31,
        **extra,
        **cfg.options,
    }
    policy: Policy = policy_class(cfg.kind)(**options)
    return policy


def load_policy(cfg: PolicyConfig, path: Path) -> Policy:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no saved policy at {path}")
    policy: Policy = policy_class(cfg.kind).load(path)
    return policy
