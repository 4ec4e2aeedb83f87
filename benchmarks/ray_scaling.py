"""Rollout throughput (env steps/s) of the Ray collector with 1 and 2 workers, against the
single-process collector with per-job batching (the default) and cross-job batching.

    .venv/bin/python benchmarks/ray_scaling.py [--env mobile|web] [--tasks 16] [--group 8]
        [--workers 1,2] [--repeat 3] [--policy DIR] [--smoke]

Workload: one fixed batch of Root jobs (``--tasks`` train tasks x ``--group`` episodes), as a
vanilla GRPO iteration collects them, sampled from a small policy (a fresh one unless
``--policy`` names a saved one, e.g. ``runs/main/policies/base``). Every collection uses the
same seed, so each configuration runs exactly the same episodes (the Ray collections are checked
to return the same env-step count as the local per-job one; cross-job batching draws other
episodes). Ray actors are started and warmed up (first collection) before timing; the timed
rounds interleave the configurations and each figure is the best of ``--repeat`` rounds. The
machine this was written on is shared: the 1-minute load average and a parallelism probe (how
many cores two busy processes actually get, 2.0 = two idle cores) are printed before and after.
Torch runs one thread in this process by default (``--threads``), as in each 1-CPU Ray
worker, so that "local" and "ray x1" compare one core with one core.
``--env web`` needs Chromium (``make system``); it is skipped with a message when missing.
``--smoke`` (CI) times 2 tasks x 2 episodes, workers 1 and 2, 1 round; CI smoke-tests the mobile
env only (``--smoke --env web`` works but takes about a minute on 2 cores, mostly browser starts).
The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from typing import Any

import torch

from adaroll.checkpoints import CheckpointStore
from adaroll.config import PolicyConfig
from adaroll.envs import get_suite, make_env_factory
from adaroll.policies import load_policy, make_policy
from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Job
from adaroll.snapshots.memory import MemorySnapshots


def _spin(n: int) -> float:
    began = time.perf_counter()
    x = 0
    for i in range(n):
        x += i
    return time.perf_counter() - began


def parallelism_probe(n: int = 2_000_000) -> float:
    """How many cores this process can actually get right now: the same pure-Python loop run
    by 1 process, then by 2 at once (2.0 = two idle cores, ~1.0 = the machine is busy)."""
    import multiprocessing as mp

    with mp.get_context("spawn").Pool(2) as pool:
        pool.map(_spin, [1000, 1000])  # start-up
        one = min(pool.map(_spin, [n])[0] for _ in range(2))
        began = time.perf_counter()
        pool.map(_spin, [n, n])
        two = time.perf_counter() - began
    return round(2 * one / two, 2)


def one_round(collector: Any, jobs: list[Job], seed: int) -> tuple[int, float]:
    began = time.perf_counter()
    groups = collector.collect(jobs, seed=seed)
    return sum(g.cost.env_steps for g in groups), time.perf_counter() - began


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--env", default="mobile", choices=("mobile", "web"))
    ap.add_argument("--tasks", type=int, default=16, help="root jobs (train tasks)")
    ap.add_argument("--group", type=int, default=8, help="episodes per job")
    ap.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--policy", default=None, help="saved small policy directory (default: fresh)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads of this process (Ray gives each 1-CPU worker one)",
    )
    ap.add_argument(
        "--smoke", action="store_true", help="2 tasks x 2 episodes, workers 1,2, 1 round (CI)"
    )
    args = ap.parse_args()
    if args.smoke:
        args.tasks, args.group, args.workers, args.repeat = 2, 2, "1,2", 1
    torch.set_num_threads(args.threads)

    if args.env == "web":
        import shutil

        if shutil.which("chromium") is None:
            print("web env unavailable (no chromium on PATH; `make system` installs it): skipped")
            print(json.dumps({"env": "web", "skipped": "chromium not installed"}))
            return
    import ray

    from adaroll.rollout.distributed import EnvFactory
    from adaroll.rollout.ray_workers import RayCollector, connect

    suite = get_suite(args.env)
    tasks = suite.split("train")[: args.tasks]
    jobs = [Job("root", t, args.group, baseline=True) for t in tasks]
    cfg = PolicyConfig()
    policy = load_policy(cfg, args.policy) if args.policy else make_policy(cfg, seed=args.seed)
    make_env = make_env_factory(args.env)
    load = os.getloadavg()[0]
    probe = parallelism_probe()
    print(
        f"{args.env}: {len(jobs)} root jobs x {args.group} episodes, {os.cpu_count()} CPUs, "
        f"{args.threads} torch thread(s) here, load average {load:.2f} at start, "
        f"parallelism probe {probe:.2f} (2.0 = two idle cores)"
    )

    counts = [int(w) for w in args.workers.split(",")]
    collectors: dict[str, Any] = {
        name: Collector(
            policy,
            make_env,
            CheckpointStore(),
            MemorySnapshots(),
            history_window=cfg.history,
            batch_across_jobs=batched,
        )
        for name, batched in (("local_per_job", False), ("local_batched", True))
    }
    connect(
        None, workers=sum(counts)
    )  # every configuration's actors up at once (idle ones cost nothing)
    start_s: dict[str, float] = {}
    for workers in counts:
        collectors[f"ray_{workers}"] = RayCollector(
            policy,
            EnvFactory(args.env),
            CheckpointStore(),
            "memory",
            history_window=cfg.history,
            workers=workers,
        )
    try:
        for name, collector in collectors.items():  # warm-up: imports, caches, actor start-up
            began = time.perf_counter()
            collector.collect(jobs[:2], seed=args.seed)
            start_s[name] = round(time.perf_counter() - began, 2)
        # Rounds interleave the configurations, so that a change of load hits them all alike.
        best: dict[str, float] = {}
        steps: dict[str, int] = {}
        for _ in range(args.repeat):
            for name, collector in collectors.items():
                n, seconds = one_round(collector, jobs, args.seed)
                steps[name], best[name] = n, min(best.get(name, float("inf")), seconds)
    finally:
        for collector in collectors.values():
            collector.close()
        ray.shutdown()
    results: dict[str, Any] = {}
    for name in collectors:
        results[name] = {
            "env_steps": steps[name],
            "seconds": round(best[name], 3),
            "steps_per_s": round(steps[name] / best[name], 1),
            "warmup_s": start_s[name],
        }
        if name.startswith("ray_") and steps[name] != steps["local_per_job"]:
            raise SystemExit(
                f"{name} ran {steps[name]} steps, local_per_job {steps['local_per_job']}: "
                "not the same episodes"
            )
        r = results[name]
        print(
            f"  {name:14s} {r['steps_per_s']:8.1f} steps/s ({r['env_steps']} steps in "
            f"{r['seconds']:.2f} s; warm-up incl. actor start {r['warmup_s']:.1f} s)"
        )

    base = results["local_per_job"]["steps_per_s"]
    summary = {
        "per_job_vs_batched": round(base / results["local_batched"]["steps_per_s"], 3),
        **{
            f"ray_{w}_vs_local": round(results[f"ray_{w}"]["steps_per_s"] / base, 3) for w in counts
        },
    }
    if 1 in counts and 2 in counts:
        summary["ray_2_vs_ray_1"] = round(
            results["ray_2"]["steps_per_s"] / results["ray_1"]["steps_per_s"], 3
        )
    for key, value in summary.items():
        print(f"  {key}: {value}")
    probe_end = parallelism_probe()
    print(f"  parallelism probe at the end: {probe_end:.2f}")
    print(
        json.dumps(
            {
                "env": args.env,
                "jobs": len(jobs),
                "group": args.group,
                "cpus": os.cpu_count(),
                "threads": args.threads,
                "load_avg_start": round(load, 2),
                "load_avg_end": round(os.getloadavg()[0], 2),
                "parallelism_probe": [probe, probe_end],
                "python": platform.python_version(),
                "results": results,
                "speedups": summary,
            }
        )
    )


if __name__ == "__main__":
    main()
