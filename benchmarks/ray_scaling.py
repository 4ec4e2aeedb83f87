"""Rollout throughput (env steps/s) of the Ray collector with 1 and 2 workers, against the
single-process collector with per-job batching (the default) and cross-job batching.

    .venv/bin/python benchmarks/ray_scaling.py [--env mobile|web] [--tasks 16] [--group 8]
        [--workers 1,2] [--repeat 3] [--policy DIR]

Workload: one fixed batch of Root jobs (``--tasks`` train tasks x ``--group`` episodes), as a
vanilla GRPO iteration collects them, sampled from a small policy (a fresh one unless
``--policy`` names a saved one, e.g. ``runs/main/policies/base``). Every collection uses the
same seed, so each configuration runs exactly the same episodes (the Ray collections are checked
to return the same env-step count as the local per-job one). Ray actors are started and
warmed up (first collection) before timing; each figure is the best of ``--repeat`` timed
collections (the machine this was written on is shared; the 1-minute load average is printed).
Torch runs one thread in this process by default (``--threads``), as in each 1-CPU Ray
worker, so that "local" and "ray x1" compare one core with one core.
``--env web`` needs Chromium (``make system``); it is skipped with a message when missing.
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


def timed(collector: Any, jobs: list[Job], repeat: int, seed: int) -> dict[str, float]:
    best, steps = float("inf"), 0
    for _ in range(repeat):
        began = time.perf_counter()
        groups = collector.collect(jobs, seed=seed)
        seconds = time.perf_counter() - began
        steps = sum(g.cost.env_steps for g in groups)
        best = min(best, seconds)
    return {"env_steps": steps, "seconds": round(best, 3), "steps_per_s": round(steps / best, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--env", default="mobile", choices=("mobile", "web"))
    ap.add_argument("--tasks", type=int, default=16, help="root jobs (train tasks)")
    ap.add_argument("--group", type=int, default=8, help="episodes per job")
    ap.add_argument("--workers", default="1,2", help="comma-separated worker counts")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--policy", default=None, help="saved small policy directory (default: fresh)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads of this process (Ray gives each 1-CPU worker one)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    if args.env == "web":
        import shutil

        if shutil.which("chromium") is None:
            print("web env unavailable (no chromium on PATH; `make system` installs it): skipped")
            print(json.dumps({"env": "web", "skipped": "chromium not installed"}))
            return
    import ray

    from adaroll.rollout.ray_workers import EnvFactory, RayCollector, connect

    suite = get_suite(args.env)
    tasks = suite.split("train")[: args.tasks]
    jobs = [Job("root", t, args.group, mode="vanilla") for t in tasks]
    cfg = PolicyConfig()
    policy = load_policy(cfg, args.policy) if args.policy else make_policy(cfg, seed=args.seed)
    make_env = make_env_factory(args.env)
    load = os.getloadavg()[0]
    print(f"{args.env}: {len(jobs)} root jobs x {args.group} episodes, {os.cpu_count()} CPUs, "
          f"{args.threads} torch thread(s) here, load average {load:.2f} at start")  # fmt: skip

    results: dict[str, Any] = {}
    for name, batched in (("local_per_job", False), ("local_batched", True)):
        local = Collector(policy, make_env, CheckpointStore(), MemorySnapshots(), history_window=cfg.history,
                          batch_across_jobs=batched)  # fmt: skip
        local.collect(jobs[:1], seed=args.seed)  # warm-up (imports, caches)
        results[name] = timed(local, jobs, args.repeat, args.seed)
        print(f"  {name:14s} {results[name]['steps_per_s']:8.1f} steps/s "
              f"({results[name]['env_steps']} steps in {results[name]['seconds']:.2f} s)")  # fmt: skip

    counts = [int(w) for w in args.workers.split(",")]
    connect(None, workers=max(counts))
    for workers in counts:
        remote = RayCollector(policy, EnvFactory(args.env), CheckpointStore(), "memory",
                              history_window=cfg.history, workers=workers)  # fmt: skip
        try:
            began = time.perf_counter()
            remote.collect(jobs[: max(1, workers)], seed=args.seed)  # start + warm the actors
            start_s = time.perf_counter() - began
            r = timed(remote, jobs, args.repeat, args.seed)
        finally:
            remote.close()
        r["actor_start_s"] = round(start_s, 2)
        if r["env_steps"] != results["local_per_job"]["env_steps"]:
            raise SystemExit(f"ray with {workers} workers ran {r['env_steps']} steps, local "
                             f"{results['local_per_job']['env_steps']}: not the same episodes")  # fmt: skip
        results[f"ray_{workers}"] = r
        print(f"  ray x{workers:<10d} {r['steps_per_s']:8.1f} steps/s "
              f"({r['env_steps']} steps in {r['seconds']:.2f} s; actors up in {start_s:.1f} s)")  # fmt: skip
    ray.shutdown()

    base = results["local_per_job"]["steps_per_s"]
    summary = {
        "per_job_vs_batched": round(base / results["local_batched"]["steps_per_s"], 3),
        **{f"ray_{w}_vs_local": round(results[f"ray_{w}"]["steps_per_s"] / base, 3) for w in counts},
    }
    if 1 in counts and 2 in counts:
        summary["ray_2_vs_ray_1"] = round(results["ray_2"]["steps_per_s"] / results["ray_1"]["steps_per_s"], 3)
    for key, value in summary.items():
        print(f"  {key}: {value}")
    print(json.dumps({"env": args.env, "jobs": len(jobs), "group": args.group,
                      "cpus": os.cpu_count(), "threads": args.threads, "load_avg_start": round(load, 2),
                      "load_avg_end": round(os.getloadavg()[0], 2), "python": platform.python_version(),
                      "results": results, "speedups": summary}))  # fmt: skip


if __name__ == "__main__":
    main()
