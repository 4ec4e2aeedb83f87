"""The same MiniWoB++ templates and seeds through BrowserGym and through AdaRoll's WebEnv.

For every template and seed ``s`` the scripted expert (the web env's, :mod:`adaroll.envs.web.
experts`) plays one episode in each configuration; reset and step times are measured around the
env calls only (the expert's own page reads are not counted):

* ``webenv``          - :class:`~adaroll.envs.web.env.WebEnv` with its defaults (one Chromium
  over CDP, page reloaded per reset, settle policy after each action);
* ``browsergym``      - :class:`~adaroll.envs.browsergym.env.BrowserGymEnv` with its defaults
  (the task's Playwright ``slow_mo`` - 100 ms per call on MiniWoB++ - and a 0.1 s
  ``pre_observation_delay``); BrowserGym launches two browsers per reset (task page and chat);
* ``browsergym-fast`` - the same with ``slow_mo=0`` and ``pre_observation_delay=0``.

Same instances: BrowserGym seeds MiniWoB's ``Math.seedrandom`` with
``RandomState(s).randint(0, 1000000)``; the web env is given that number as its task seed, so
both play the same instance (``same_instruction`` counts the episodes whose instructions
agree).

Usage: ``python benchmarks/browsergym_vs_webenv.py [--seeds 5] [--templates ...] [--smoke]``;
prints a table and a final JSON line with the load average at start and end. Each
configuration first plays one warm-up episode (not counted). ``--smoke`` (CI) runs click-test-2
and enter-text with one seed each and no warm-up.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from adaroll.envs.base import GUIEnv, TaskSpec, TaskSuite

DEFAULT_TEMPLATES = ["click-test-2", "click-button", "click-link", "enter-text", "click-checkboxes"]
SMOKE_TEMPLATES = ["click-test-2", "enter-text"]
CONFIGS = ("webenv", "browsergym", "browsergym-fast")


def page_seed(seed: int) -> int:
    """The ``Math.seedrandom`` value BrowserGym's MiniWoB task derives from its seed."""
    return int(np.random.RandomState(seed).randint(0, 1000000))


def make(config: str) -> tuple[GUIEnv, TaskSuite, Callable[[str, int], TaskSpec]]:
    if config == "webenv":
        from adaroll.envs.web import MiniWoBSuite, WebEnv

        return WebEnv(), MiniWoBSuite(), lambda t, s: TaskSpec("web", t, page_seed(s))
    from adaroll.envs.browsergym import BrowserGymEnv, BrowserGymSuite

    fast: dict[str, Any] = (
        {"slow_mo": 0, "pre_observation_delay": 0.0} if config == "browsergym-fast" else {}
    )
    return (
        BrowserGymEnv(**fast),
        BrowserGymSuite(),
        lambda t, s: TaskSpec("browsergym", f"miniwob.{t}", s),
    )


def episode(env: GUIEnv, suite: TaskSuite, task: TaskSpec) -> dict[str, Any]:
    t0 = time.perf_counter()
    _, info = env.reset(options={"task": task})
    reset_s = time.perf_counter() - t0
    step_s, steps = 0.0, 0
    while True:
        action = suite.expert_action(env)
        t0 = time.perf_counter()
        _, _, terminated, truncated, step_info = env.step(action)
        step_s += time.perf_counter() - t0
        steps += 1
        if terminated or truncated:
            break
    return {
        "instruction": info["instruction"],
        "reset_s": reset_s,
        "step_s": step_s,
        "steps": steps,
        "success": bool(step_info["success"]),
    }


def run(
    config: str, templates: list[str], seeds: int, warm_up: bool = True
) -> list[dict[str, Any]]:
    env, suite, spec = make(config)
    try:
        if warm_up:  # browser start, page cache
            episode(env, suite, spec(templates[0], 10_000))
        return [
            {"template": t, "seed": s, **episode(env, suite, spec(t, s))}
            for t in templates
            for s in range(seeds)
        ]
    finally:
        env.close()


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    steps = sum(r["steps"] for r in rows)
    resets = [r["reset_s"] for r in rows]
    return {
        "episodes": len(rows),
        "success": round(sum(r["success"] for r in rows) / len(rows), 3),
        "steps": steps,
        "steps_per_s": round(steps / sum(r["step_s"] for r in rows), 2),
        "reset_s_mean": round(statistics.mean(resets), 3),
        "reset_s_median": round(statistics.median(resets), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--templates", nargs="*", default=DEFAULT_TEMPLATES)
    parser.add_argument(
        "--smoke", action="store_true", help=f"{' + '.join(SMOKE_TEMPLATES)}, 1 seed (CI)"
    )
    args = parser.parse_args(argv)
    templates, seeds = (SMOKE_TEMPLATES, 1) if args.smoke else (args.templates, args.seeds)
    load_start = os.getloadavg()[0]
    episodes = {config: run(config, templates, seeds, warm_up=not args.smoke) for config in CONFIGS}
    results = {config: summarise(rows) for config, rows in episodes.items()}
    per_template = {
        config: {t: summarise([r for r in rows if r["template"] == t]) for t in templates}
        for config, rows in episodes.items()
    }
    same = sum(
        a["instruction"] == b["instruction"]
        for a, b in zip(episodes["webenv"], episodes["browsergym"], strict=True)
    )
    print(
        f"{'config':<16} {'episodes':>8} {'success':>8} {'steps':>6} {'steps/s':>8} {'reset s':>8}"
    )
    for config, r in results.items():
        print(
            f"{config:<16} {r['episodes']:>8} {r['success']:>8.2f} {r['steps']:>6} "
            f"{r['steps_per_s']:>8.2f} {r['reset_s_mean']:>8.3f}"
        )
    summary = {
        "templates": templates,
        "seeds": seeds,
        "results": results,
        "per_template": per_template,
        "same_instruction": same,
        "episodes_per_config": len(episodes["webenv"]),
        "load_avg_start": round(load_start, 2),
        "load_avg_end": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
