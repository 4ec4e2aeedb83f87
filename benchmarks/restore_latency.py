"""Restore latency: CRIU branches vs replaying the action prefix (paper: 2.97 s vs 15.7 s).

For a 10-step expert prefix on book-flight, book-flight-nodelay and choose-date (multi-step
MiniWoB++ tasks whose experts need more than 10 steps on the seeds used), this measures

* replay: a fresh browser + reset + the prefix (what a new branch costs without snapshots),
  and reset + prefix on an already running browser (the cheapest possible replay);
* snapshot: ``CriuSnapshots.save`` wall time (observation + screenshot hash + ``criu dump``),
  the dump alone, and the image size (criu image + copied browser state);
* restore per branch, median and p95 over ``--restores`` sequential restores: ``restore()``
  wall time (what a rollout waits for: criu restore, CDP reconnect, verification), and its
  parts - ``criu restore`` alone, time to the first DevTools answer after criu returns,
  reconnecting the env, verifying (element-tree and screenshot hashes);
* 1 vs 4 vs 8 concurrent restores (wall time and wall time per branch; at most
  ``max_concurrent_restores`` = cores run at once, the rest queue);
* memory per live branch (PSS summed over the branch's processes) with 1 and with 8 live
  (``branch_pss_mb``: with the most live);
* the wait of a rollout for its branch when branches are prefetched
  (``prefetched_wait_s``, one value per Suffix start): the local collector with
  ``prefetch_branches`` runs a Root group and ``--suffix-jobs`` Suffix groups of ``--group``
  samples of an untrained small policy at the prefix's expert checkpoint, the branches
  restored in the background while other groups run (``Collector.branch_waits``);
* flatness: restore time for snapshots after 1, 5 and 10 steps of book-flight.

Goals (issue 17): a cold restore (verification included) <= 0.1 s per branch, a prefetched
wait <= 0.02 s, >= 10x faster than a fresh-browser replay on every task whose expert needs at
least ``LONG_TASK_STEPS`` steps on average (issue 4 asked <= 0.3 s and 5x over a warm replay).
Figures are printed as they come; the last line is one JSON object with all of them. The
machine is shared: the load average is printed with the figures.

Usage: ``python benchmarks/restore_latency.py [--restores 10] [--tasks book-flight,book-flight-nodelay,choose-date]
[--prefix 10] [--replays 3] [--concurrent 1,4,8] [--flatness 1,5,10] [--suffix-jobs 4] [--group 8]
[--prefetch 8] [--single-process] [--smoke]`` (root, Chromium and ``scripts/install_criu.sh`` needed). ``--smoke``
(CI) runs book-flight alone with a 2-step prefix, 1 replay of each kind, 1 restore, 1 and 2
concurrent restores, 2 Suffix groups of 2 with 2 prefetched branches, and flatness at prefixes
1 and 2 with 1 restore each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from adaroll.actions import Action
from adaroll.envs.base import SUITES, TaskSpec, replay
from adaroll.envs.web.miniwob import get_task

SEEDS = {"book-flight": 0, "book-flight-nodelay": 0, "choose-date": 0}
"""Seeds whose expert trajectories are longer than 10 steps (e.g. book-flight 15, choose-date 14)."""
LONG_TASK_STEPS = 10
"""The 10x goal over a fresh replay is judged on the curated tasks whose expert needs at least
this many steps on average (the registry's ``expert_steps``: book-flight, book-flight-nodelay);
choose-date's expert needs 8.2, and a fresh browser replays its prefix in about 0.4 s."""


def pct(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of ``values``."""
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, int(round(q * (len(ordered) - 1)))))
    return ordered[k]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 4),
        "p95": round(pct(values, 0.95), 4),
        "min": round(min(values), 4),
        "max": round(max(values), 4),
        "n": len(values),
    }


def tree_pss_kb(root: int) -> int:
    """PSS (kB) summed over ``root`` and all its descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def expert_prefix(env: Any, suite: Any, task: TaskSpec, n: int) -> list[Action]:
    env.reset(options={"task": task})
    prefix = []
    for _ in range(n):
        action = suite.expert_action(env)
        _, _, terminated, truncated, _ = env.step(action)
        prefix.append(action)
        if terminated or truncated:
            raise RuntimeError(f"expert finished {task.id} within {len(prefix)} steps")
    return prefix


WEB_ENV_OPTIONS: dict[str, Any] = {}
"""WebEnv options of every browser here (``--single-process`` sets ``single_process``)."""


def make_web_env() -> Any:
    from adaroll.envs.web import WebEnv

    return WebEnv(**WEB_ENV_OPTIONS)


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def bench_prefetch(
    backend: Any, task: TaskSpec, prefix_len: int, suffix_jobs: int, group: int, prefetch: int
) -> dict[str, Any]:
    """Waits of Suffix starts in the local collector with prefetched branches (see the module
    docstring): a Root group first, then ``suffix_jobs`` Suffix groups at the expert's
    checkpoint after ``prefix_len`` steps."""
    from adaroll.config import PolicyConfig
    from adaroll.experts import collect_experts
    from adaroll.policies import make_policy
    from adaroll.rollout.collector import Collector
    from adaroll.rollout.jobs import Job

    store = collect_experts(make_web_env, SUITES.get("web")(), [task], progress=False).store
    checkpoint = store.for_task(task.id)[prefix_len]
    cfg = PolicyConfig()
    collector = Collector(
        make_policy(cfg, seed=0),
        make_web_env,
        store,
        backend,
        history_window=cfg.history,
        prefetch_branches=prefetch,
    )
    jobs = [Job("root", task, group)] + [
        Job("suffix", task, group, checkpoint_id=checkpoint.id) for _ in range(suffix_jobs)
    ]
    try:
        t0 = time.perf_counter()
        groups = collector.collect(jobs, seed=0)
        wall = time.perf_counter() - t0
    finally:
        collector.close()
    waits = collector.branch_waits
    out = {
        "prefetched_wait_s": summary(waits),
        "prefetch_branches": collector.prefetch_branches,
        "suffix_groups": suffix_jobs,
        "group": group,
        "collect_wall_s": round(wall, 3),
        "env_steps": sum(g.cost.env_steps for g in groups),
        "restore_fallbacks": sum(g.cost.restore_fallbacks for g in groups),
    }
    print(
        f"  prefetched branches ({prefetch}): wait per Suffix start median "
        f"{out['prefetched_wait_s']['median'] * 1000:.1f} ms, p95 "
        f"{out['prefetched_wait_s']['p95'] * 1000:.1f} ms over {len(waits)} starts; collection "
        f"{wall:.1f} s, {out['env_steps']} env steps (load {load()})",
        flush=True,
    )
    return out


def bench_task(
    backend: Any,
    template: str,
    prefix_len: int,
    restores: int,
    replays: int,
    concurrent: list[int],
    suffix_jobs: int,
    group: int,
    prefetch: int,
) -> dict[str, Any]:
    from adaroll.envs.web import WebEnv

    suite = SUITES.get("web")()
    task = TaskSpec("web", template, SEEDS.get(template, 0))
    out: dict[str, Any] = {
        "task": task.id,
        "prefix": prefix_len,
        "expert_steps": get_task(template).expert_steps,
    }
    env = make_web_env()
    try:
        prefix = expert_prefix(env, suite, task, prefix_len)
        # replay, warm browser: reset + prefix on a running browser
        warm = []
        for _ in range(replays):
            t0 = time.perf_counter()
            replay(env, task, prefix)
            warm.append(time.perf_counter() - t0)
        # replay, fresh browser: what a new branch costs without snapshots
        fresh = []
        for _ in range(replays):
            t0 = time.perf_counter()
            other = WebEnv(env.config)
            try:
                replay(other, task, prefix)
                fresh.append(time.perf_counter() - t0)
            finally:
                other.close()
        out["replay_fresh_s"] = summary(fresh)
        out["replay_warm_s"] = summary(warm)
        print(
            f"[{task.id} prefix {prefix_len}] replay fresh browser median "
            f"{out['replay_fresh_s']['median']:.3f} s, warm browser median "
            f"{out['replay_warm_s']['median']:.3f} s  (load {load()})",
            flush=True,
        )

        t0 = time.perf_counter()
        ref = backend.save(env, tuple(prefix))
        out["save_s"] = round(time.perf_counter() - t0, 4)
        out["dump_s"] = ref.meta["dump_seconds"]
        out["image_mb"] = round(ref.meta["image_bytes"] / 2**20, 1)
        state_mb = sum(
            size for rel, size in _manifest_sizes(ref).items() if rel.startswith("state/")
        )
        out["state_copy_mb"] = round(state_mb / 2**20, 2)
        print(
            f"  snapshot: save {out['save_s']:.3f} s (criu dump {out['dump_s']:.3f} s), image "
            f"{out['image_mb']} MB (of which browser state {out['state_copy_mb']} MB)",
            flush=True,
        )

        walls, parts = [], {"criu": [], "connect": [], "verify": []}
        for _ in range(restores):
            t0 = time.perf_counter()
            branch = backend.restore(ref)
            walls.append(time.perf_counter() - t0)
            info = branch.restore_info
            assert info["check"].ok, info["check"].describe()
            parts["criu"].append(info["criu_seconds"])
            parts["connect"].append(info["connect_seconds"])
            parts["verify"].append(info["verify_seconds"])
            branch.close()
        out["restore_s"] = summary(walls)
        out["restore_parts_s"] = {k: summary(v) for k, v in parts.items()}
        rp = out["restore_parts_s"]
        print(
            f"  restore per branch (n={restores}): median {out['restore_s']['median']:.3f} s, "
            f"p95 {out['restore_s']['p95']:.3f} s | criu restore median "
            f"{rp['criu']['median']:.3f} s, reconnect {rp['connect']['median'] * 1000:.1f} ms, verify "
            f"{rp['verify']['median'] * 1000:.1f} ms  (load {load()})",
            flush=True,
        )

        out["concurrent"] = {}
        for n in concurrent:
            t0 = time.perf_counter()
            with ThreadPoolExecutor(n) as pool:
                branches = list(pool.map(lambda _: backend.restore(ref), range(n)))
            wall = time.perf_counter() - t0
            entry: dict[str, Any] = {"wall_s": round(wall, 4), "per_branch_s": round(wall / n, 4)}
            if n in (1, max(concurrent)):
                time.sleep(0.5)  # let the branches settle before reading memory
                pss = [tree_pss_kb(b.browser.pid) / 1024 for b in branches]
                entry["pss_mb_per_branch"] = round(statistics.mean(pss), 1)
            assert all(b.restore_info["check"].ok for b in branches)
            for b in branches:
                b.close()
            out["concurrent"][str(n)] = entry
            mem = (
                f", PSS {entry['pss_mb_per_branch']} MB/branch"
                if "pss_mb_per_branch" in entry
                else ""
            )
            print(
                f"  {n} concurrent: wall {wall:.3f} s, {wall / n:.3f} s per branch{mem} "
                f"(load {load()})",
                flush=True,
            )
        out["branch_pss_mb"] = out["concurrent"][str(max(concurrent))]["pss_mb_per_branch"]
        backend.release(ref)
        out.update(bench_prefetch(backend, task, prefix_len, suffix_jobs, group, prefetch))
        rmed = out["restore_s"]["median"]
        out["speedup_vs_replay_fresh"] = round(out["replay_fresh_s"]["median"] / rmed, 2)
        out["speedup_vs_replay_warm"] = round(out["replay_warm_s"]["median"] / rmed, 2)
        print(
            f"  speed-up of restore over replay: {out['speedup_vs_replay_fresh']}x (fresh "
            f"browser), {out['speedup_vs_replay_warm']}x (warm browser)",
            flush=True,
        )
    finally:
        env.close()
    return out


def _manifest_sizes(ref: Any) -> dict[str, int]:
    """Relative path -> size (bytes) of every file of the snapshot's image and copied state.

    The manifest maps each path to ``[size, mtime_ns]`` (:func:`adaroll.snapshots.criu.images.image_manifest`;
    images written before the mtime was recorded hold the size alone)."""
    manifest = json.loads(Path(ref.meta["image_dir"], "manifest.json").read_text())
    return {rel: entry if isinstance(entry, int) else entry[0] for rel, entry in manifest.items()}


def bench_flatness(
    backend: Any, template: str, lengths: list[int], restores: int
) -> dict[str, Any]:

    suite = SUITES.get("web")()
    task = TaskSpec("web", template, SEEDS.get(template, 0))
    out: dict[str, Any] = {}
    env = make_web_env()
    try:
        for n in lengths:
            prefix = expert_prefix(env, suite, task, n)
            ref = backend.save(env, tuple(prefix))
            walls = []
            for _ in range(restores):
                t0 = time.perf_counter()
                backend.restore(ref).close()
                walls.append(time.perf_counter() - t0)
            backend.release(ref)
            out[str(n)] = {
                "restore_median_s": round(statistics.median(walls), 4),
                "image_mb": round(ref.meta["image_bytes"] / 2**20, 1),
            }
            print(
                f"[flatness {task.id}] prefix {n:2d}: restore median "
                f"{out[str(n)]['restore_median_s']:.3f} s, image {out[str(n)]['image_mb']} MB "
                f"(load {load()})",
                flush=True,
            )
    finally:
        env.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", default="book-flight,book-flight-nodelay,choose-date")
    parser.add_argument("--prefix", type=int, default=10)
    parser.add_argument("--restores", type=int, default=10)
    parser.add_argument("--replays", type=int, default=3)
    parser.add_argument("--flatness", default="1,5,10", help="prefix lengths ('' to skip)")
    parser.add_argument("--concurrent", default="1,4,8", help="concurrent restore counts")
    parser.add_argument(
        "--suffix-jobs", type=int, default=4, help="Suffix groups of the prefetch workload"
    )
    parser.add_argument("--group", type=int, default=8, help="group size of the prefetch workload")
    parser.add_argument("--prefetch", type=int, default=8, help="Collector(prefetch_branches=...)")
    parser.add_argument(
        "--single-process",
        action="store_true",
        help="launch Chromium with --single-process (WebEnv option single_process)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="book-flight, prefix 2, 1 replay/restore, 1,2 concurrent, 2 Suffix groups "
        "of 2 with 2 prefetched, flatness 1,2 (CI)",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.tasks, args.prefix, args.restores, args.replays = "book-flight", 2, 1, 1
        args.concurrent, args.flatness = "1,2", "1,2"
        args.suffix_jobs, args.group, args.prefetch = 2, 2, 2
    concurrent = [int(v) for v in args.concurrent.split(",")]
    if args.single_process:
        WEB_ENV_OPTIONS["single_process"] = True

    import adaroll.envs.web  # noqa: F401  (registers the env and suite)
    from adaroll.snapshots.criu import CriuSnapshots

    backend = CriuSnapshots(max_branches=16)
    results: dict[str, Any] = {
        "machine": {
            "cores": os.cpu_count(),
            "load_start": load(),
            "criu": backend.tool.version_text,
            "max_concurrent_restores": backend.max_restores,
            "python": sys.version.split()[0],
            "single_process": args.single_process,
        },
        "tasks": [],
    }
    print(
        f"criu {backend.tool.version_text}, {os.cpu_count()} cores, at most "
        f"{backend.max_restores} restores at once, pool {backend.max_branches} branches, "
        f"load {load()}",
        flush=True,
    )
    try:
        for template in [t for t in args.tasks.split(",") if t]:
            results["tasks"].append(
                bench_task(
                    backend,
                    template,
                    args.prefix,
                    args.restores,
                    args.replays,
                    concurrent,
                    args.suffix_jobs,
                    args.group,
                    args.prefetch,
                )
            )
        if args.flatness:
            lengths = [int(v) for v in args.flatness.split(",")]
            flat_restores = 1 if args.smoke else max(3, args.restores // 2)
            results["flatness"] = bench_flatness(backend, "book-flight", lengths, flat_restores)
    finally:
        backend.close()
    medians = [t["restore_s"]["median"] for t in results["tasks"]]
    long_tasks = [t for t in results["tasks"] if t["expert_steps"] >= LONG_TASK_STEPS]
    results["goals"] = {
        "restore_le_0.1s": all(m <= 0.1 for m in medians),
        "prefetched_wait_le_0.02s": all(
            t["prefetched_wait_s"]["median"] <= 0.02 for t in results["tasks"]
        ),
        # judged on the long tasks only (LONG_TASK_STEPS); None when none was measured
        "speedup_ge_10x_vs_fresh_replay": all(
            t["speedup_vs_replay_fresh"] >= 10 for t in long_tasks
        )
        if long_tasks
        else None,
        "speedup_ge_5x_vs_warm_replay": all(
            t["speedup_vs_replay_warm"] >= 5 for t in results["tasks"]
        ),
    }
    results["machine"]["load_end"] = load()
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
