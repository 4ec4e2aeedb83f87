"""What makes a run directory the same experiment when it is resumed: the config up to the
fields that only change where work runs (:func:`experiment_changes`), and the env's settings
with every default resolved (:func:`settings_changes`, the run's ``env.json``). And what it
does not check but records: the machine each start and resume ran on (:func:`record_machine`,
the run's ``machines.jsonl``)."""

from __future__ import annotations

import json
import os
import platform
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from adaroll.config import (
    ChecksConfig,
    ConfigError,
    RolloutConfig,
    RunConfig,
    SchedulerConfig,
    TrainConfig,
    load_config,
)

_EXECUTION_ONLY = (
    "backend",
    "workers",
    "ray_address",
    "max_retries",
    "job_timeout_s",
    "parallel_jobs",
    "prefetch_branches",
    "ray_start_timeout_s",
    "ray_worker_resources",
)
"""Rollout fields that change where work runs, never its results: a run may resume with others."""


def experiment_changes(saved_yaml: str, cfg: RunConfig) -> list[str]:
    """How ``cfg`` differs from a saved config as an experiment (``field: saved -> new``; empty:
    the same experiment): equal up to the execution-only rollout fields (e.g. resuming a local
    run on Ray workers) and the list of configurations (each is seeded by its own name, so
    adding one later reuses the others)."""
    import yaml

    try:
        saved = load_config(yaml.safe_load(saved_yaml) or {})  # a missing section = its defaults
    except (ConfigError, yaml.YAMLError) as exc:
        return [f"unreadable: {str(exc).splitlines()[0]}"]
    old, new = _flat(_identity(saved).model_dump()), _flat(_identity(cfg).model_dump())
    return [
        f"{k}: {old.get(k)!r} -> {new.get(k)!r}"
        for k in sorted(old.keys() | new.keys())
        if old.get(k) != new.get(k)
    ]


def settings_changes(then: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """How two env settings (:func:`env_settings`) differ, one line per setting; a list (a
    command line) as the items it lost and gained."""
    old, new = _flat(then), _flat(now)
    lines = []
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, list) and isinstance(b, list):
            lost, gained = [x for x in a if x not in b], [x for x in b if x not in a]
            items = [f"-{x}" for x in lost] + [f"+{x}" for x in gained] or ["reordered"]
            lines.append(f"{key}: {' '.join(map(str, items))}")
        else:
            lines.append(f"{key}: {a!r} -> {b!r}")
    return lines


def _flat(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict) and value:
            out |= _flat(value, f"{prefix}{key}.")
        else:
            out[f"{prefix}{key}"] = value
    return out


def _identity(cfg: RunConfig) -> RunConfig:
    default = RolloutConfig()
    keep = {key: getattr(default, key) for key in _EXECUTION_ONLY}
    rollout = cfg.rollout.model_copy(update=keep)
    phases = {name: _read_settings_only(getattr(cfg, name)) for name in ("stage1", "rl")}
    return cfg.model_copy(
        update={"rollout": rollout, "configurations": (), "checks": ChecksConfig(), **phases}
    )


def _read_settings_only(phase: TrainConfig) -> TrainConfig:
    """The phase with the bandit's settings at their defaults when the thresholds route (they
    are never read then): changing an unread setting does not change the experiment."""
    if phase.scheduler.routing == "bandit":
        return phase  # the validator already pins the threshold-only settings
    defaults = SchedulerConfig()
    unread = {
        k: getattr(defaults, k) for k in SchedulerConfig.model_fields if k.startswith("bandit_")
    }
    return phase.model_copy(update={"scheduler": phase.scheduler.model_copy(update=unread)})


def cpu_model() -> str:
    """The CPU's model name as the kernel reports it (``unknown CPU`` where it does not)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def machine() -> dict[str, Any]:
    """Where this process computes: CPU model, cores, Python, torch and numpy versions."""
    versions: dict[str, str | None] = {}
    for dist in ("torch", "numpy"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    return {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        **versions,
    }


def record_machine(path: Path) -> str | None:
    """Append this machine (:func:`machine`, with the time) to ``path`` (a run's
    ``machines.jsonl``, one line per start or resume) and return a note when its CPU or
    versions differ from the run's first line: the same commit on another CPU family takes
    other floating-point paths (SFT gives another Base from the same seed), so the run stays a
    valid run of its experiment but is no longer reproducible bit for bit on one machine. Not an
    error: a long run may have to finish elsewhere. An unreadable first line is no comparison."""
    now = machine()
    first: dict[str, Any] | None = None
    if path.exists():
        try:
            first = json.loads(path.read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            first = None
    with path.open("a") as f:
        f.write(json.dumps({"ts": round(time.time(), 3), **now}) + "\n")
    if first is None:
        return None
    # the core count changes how many runs go at once, not what one computes
    changed = [
        f"{k}: {first.get(k)} -> {v}" for k, v in now.items() if k != "cores" and first.get(k) != v
    ]
    if not changed:
        return None
    return (
        f"note: this run started on another machine ({'; '.join(changed)}); it resumes, "
        "but its results are no longer reproducible bit for bit on one machine "
        "(docs/RESULTS.md, 'How we measure': reproducing a run)"
    )
