"""Running experts through the env: one episode (:func:`run_expert_episode`), the verification
sweep over tasks and seeds (:func:`verify`) and its command line (:func:`main`, run by
``python -m adaroll.envs.web.experts``)."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from adaroll.actions import Action
from adaroll.envs.web.experts.page import EXPERTS, ExpertError, Page

if TYPE_CHECKING:
    from adaroll.envs.web.env import WebEnv


def verify(
    task_names: Iterable[str] | None = None,
    seeds: Iterable[int] = range(5),
    *,
    env: WebEnv | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Run each task's expert on each seed through the env; per task: successes, episodes,
    rate, mean and longest solution (steps), seconds and failures (seed, reason)."""
    from adaroll.envs.base import TaskSpec
    from adaroll.envs.web.env import WebEnv
    from adaroll.envs.web.miniwob import curated_tasks

    names = list(task_names) if task_names is not None else curated_tasks()
    own = env is None
    env = env or WebEnv()
    results: dict[str, dict[str, Any]] = {}
    try:
        for name in names:
            wins, steps, most, failures = 0, 0, 0, []
            t0 = time.perf_counter()
            seed_list = list(seeds)
            for seed in seed_list:
                try:
                    actions, ok = run_expert_episode(env, TaskSpec("web", name, seed))
                    steps += len(actions)
                    most = max(most, len(actions))
                    wins += ok
                    if not ok:
                        failures.append((seed, env.page_status().get("reason") or "no reward"))
                except ExpertError as exc:
                    failures.append((seed, f"expert error: {exc}"))
            n = len(seed_list)
            results[name] = {
                "successes": wins,
                "episodes": n,
                "rate": wins / n if n else 0.0,
                "mean_steps": steps / n if n else 0.0,
                "longest": most,
                "seconds": time.perf_counter() - t0,
                "failures": failures,
            }
            if log:
                r = results[name]
                log(
                    f"{name:28s} {wins}/{n}  rate={r['rate']:.2f}  steps={r['mean_steps']:.1f}"
                    f"  {r['seconds']:.1f}s" + (f"  failures={failures}" if failures else "")
                )
    finally:
        if own:
            env.close()
    return results


def run_expert_episode(env: WebEnv, task: Any) -> tuple[list[Action], bool]:
    """Reset to ``task`` and follow its expert to the end; (actions, success)."""
    env.reset(options={"task": task})
    fn = EXPERTS[task.template]
    actions: list[Action] = []
    while True:
        action = fn(Page(env))
        actions.append(action)
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return actions, bool(info["success"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Verify the scripted MiniWoB++ experts.")
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 per task")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--tasks", nargs="*", help="task names (default: all curated)")
    parser.add_argument("--json", action="store_true", help="print a final JSON line")
    args = parser.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    results = verify(args.tasks, seeds, log=print)
    total = sum(r["successes"] for r in results.values())
    episodes = sum(r["episodes"] for r in results.values())
    print(f"overall {total}/{episodes} = {total / max(1, episodes):.3f}")
    if args.json:
        print(
            json.dumps(
                {
                    k: {
                        "rate": v["rate"],
                        "episodes": v["episodes"],
                        "mean_steps": round(v["mean_steps"], 2),
                        "longest": v["longest"],
                    }
                    for k, v in results.items()
                }
            )
        )
    return 0 if total == episodes else 1
