"""Restore cost (Table 1 analogue): time to get a fresh branch at the state after a 10-step
expert prefix, by each snapshot backend of an environment, against replaying the prefix.

Per seed, one task (train or pretrain split of the env's default suite: the training
subset of a profile does not matter here) whose expert needs more than ``prefix`` steps is
picked at random; the live env walks the expert prefix, each backend saves that state once and restores
it ``restores`` times. Each restore is timed until the branch is usable and checked: its
element tree must equal the live one (a restore that is fast but wrong would not count).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Sequence
from typing import Any

from adaroll.actions import Action
from adaroll.envs import get_suite, make_env_factory
from adaroll.envs.base import GUIEnv, TaskSpec, TaskSuite
from adaroll.experiments.stats import fmt_count, mean_std
from adaroll.seeding import derive_seed
from adaroll.snapshots.base import SNAPSHOT_BACKENDS

BACKENDS = {
    "mobile": ("memory", "forkserver", "replay"),
    "web": ("criu", "replay"),
    "apps": ("app-criu", "replay"),
}
"""The backends measured per environment (replay is the baseline everywhere)."""
PREFIX = 10


def expert_prefix(env: GUIEnv, suite: TaskSuite, task: TaskSpec, n: int) -> list[Action] | None:
    """The first ``n`` expert actions of ``task`` if its expert needs more than ``n`` steps."""
    env.reset(options={"task": task})
    prefix: list[Action] = []
    while len(prefix) < n:
        action = suite.expert_action(env)
        _, _, terminated, truncated, _ = env.step(action)
        prefix.append(action)
        if terminated or truncated:
            return None
    return prefix


def pick_task(env: GUIEnv, suite: TaskSuite, seed: int, n: int) -> tuple[TaskSpec, list[Action]]:
    tasks = [*suite.split("train"), *suite.split("pretrain")]
    random.Random(derive_seed(seed, "restore-cost")).shuffle(tasks)
    for task in tasks:
        prefix = expert_prefix(env, suite, task, n)
        if prefix is not None:
            return task, prefix
    raise RuntimeError(f"no train or pretrain task's expert needs more than {n} steps")


def measure(
    env_name: str,
    seeds: Sequence[int],
    restores: int,
    env_options: dict[str, Any],
    prefix: int = PREFIX,
) -> dict[str, Any]:
    suite = get_suite(env_name)
    make_env = make_env_factory(env_name, **env_options)
    per_seed: list[dict[str, Any]] = []
    live = make_env()
    try:
        for seed in seeds:
            task, actions = pick_task(live, suite, seed, prefix)
            want = live.observe().element_tree_hash()
            entry: dict[str, Any] = {"seed": seed, "task": task.id, "prefix": len(actions)}
            for name in BACKENDS[env_name]:
                backend = SNAPSHOT_BACKENDS.get(name)(make_env=make_env)
                try:
                    ref = backend.save(live, tuple(actions))
                    times = []
                    for _ in range(restores):
                        t0 = time.perf_counter()
                        branch = backend.restore(ref)
                        seconds = time.perf_counter() - t0
                        try:
                            got = branch.observe().element_tree_hash()
                            if got != want:
                                raise RuntimeError(
                                    f"{name} restored a different state of {task.id}"
                                )
                        finally:
                            branch.close()
                        times.append(seconds)
                    entry[name] = statistics.median(times)
                finally:
                    backend.close()
            per_seed.append(entry)
    finally:
        live.close()
    return {"per_seed": per_seed, "restores": restores}


def markdown(result: dict[str, Any], env_name: str) -> str:
    rows = result["per_seed"]
    base = [r["replay"] for r in rows]
    lines = [
        f"Median of {result['restores']} restores per seed of a {PREFIX}-step expert prefix "
        "(seconds until the branch is usable, its element tree checked against the live "
        "state); mean ± standard deviation over seeds (one random task per seed: "
        f"{', '.join(r['task'] for r in rows)}).",
        "",
        "| backend | restore (ms) | vs replay |",
        "|---|---:|---:|",
    ]
    for name in BACKENDS[env_name]:
        ms = [1000 * r[name] for r in rows]
        speed = mean_std([b / r[name] for b, r in zip(base, rows, strict=True)])[0]
        versus = "1x" if name == "replay" else _versus(speed)
        lines.append(f"| {name} | {fmt_count(ms) if min(ms) >= 10 else _fine(ms)} | {versus} |")
    return "\n".join(lines) + "\n"


def _versus(speedup: float | None) -> str:
    if speedup is None:
        return "-"
    return f"{speedup:,.1f}x faster" if speedup >= 1 else f"{1 / speedup:,.1f}x slower"


def _fine(ms: list[float]) -> str:
    mean, std, _ = mean_std(ms)
    return f"{mean:.3f} ± {std:.3f}"
