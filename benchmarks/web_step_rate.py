"""Steps per second of AdaRoll's WebEnv (CDP) vs the ``miniwob`` package's own Selenium env.

Same tasks, same seeds, same action sequences, side by side in one run:

1. record the scripted expert's action sequence for every (task, seed) with ``WebEnv`` (not
   timed);
2. replay every sequence in each configuration, timing ``reset`` and ``step`` separately:
   * ``adaroll``            - WebEnv, element-list observations (the default);
   * ``adaroll+screenshot`` - WebEnv with a screenshot per observation (element list +
     screenshot, as the Selenium env observes), in a browser it launches for that (frames
     drawn on demand, :data:`adaroll.envs.web.browser.FAST_FRAME_FLAGS`);
   * ``selenium``           - ``gymnasium.make("miniwob/<task>-v1")`` as shipped (DOM +
     screenshot per observation), Debian's chromedriver;
   * ``selenium-dom``       - the same without screenshots (``record_screenshots=False``).

3. the untrained-policy workload (``collector``): Root groups (``--group`` episodes each) of a
   freshly initialised small policy on every curated training template (``--collector-seeds``
   seeds each), collected by the real :class:`~adaroll.rollout.collector.Collector` with
   ``--parallel-jobs`` jobs at once, after one warm-up group that starts the browsers. It
   reports env steps per second of collection time (``collector_steps_per_s``: resets, policy
   calls and steps together), the CPU this process and its browsers used per step
   (``cpu_ms_per_step``; on a shared machine 2000 / it bounds the rate two idle cores could
   reach) and how many resets reused the loaded page.

Actions map one to one: ``tap`` -> ``CLICK_COORDS``, ``type`` -> ``TYPE_TEXT``, ``key`` ->
``PRESS_KEY``, ``swipe(up/down)`` -> ``SCROLL_DOWN/UP_COORDS`` (scroll amount matched). Success
of each replayed sequence is reported per configuration: both envs should accept them.
Note the envs' different step semantics: WebEnv waits for pending short timers after every
action (its settle policy) and reloads the page on reset; the Selenium env does neither.

Usage: ``python benchmarks/web_step_rate.py [--seeds 5] [--tasks ...] [--skip-selenium]
[--collector-seeds 2] [--collector-templates ...] [--group 8] [--parallel-jobs 2]
[--skip-collector] [--only-collector] [--smoke]``; prints a
table and a final JSON line with the load average at start and end. ``--smoke`` (CI) runs
click-button and enter-text with 1 seed each in every configuration, and the collector on those
two templates with groups of 2.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("SE_AVOID_STATS", "true")  # Selenium must not phone home

import torch  # noqa: E402

from adaroll.actions import Action, ActionKind  # noqa: E402
from adaroll.config import RolloutConfig, RunConfig  # noqa: E402
from adaroll.envs.base import TaskSpec  # noqa: E402
from adaroll.envs.web import BrowserProcess, WebEnv  # noqa: E402
from adaroll.envs.web.experts import run_expert_episode  # noqa: E402

DEFAULT_TASKS = [
    "click-button",
    "click-link",
    "click-checkboxes",
    "click-tab-2",
    "enter-text",
    "enter-password",
    "login-user",
    "email-inbox",
    "search-engine",
    "social-media",
]
SMOKE_TASKS = ["click-button", "enter-text"]
SELENIUM_KEYS = {
    "enter": "<Enter>",
    "backspace": "<Backspace>",
    "tab": "<Tab>",
    "escape": "<Escape>",
    "delete": "<Delete>",
    "space": "<Space>",
    "up": "<ArrowUp>",
    "down": "<ArrowDown>",
    "left": "<ArrowLeft>",
    "right": "<ArrowRight>",
    "page_up": "<PageUp>",
    "page_down": "<PageDown>",
}


def record(env: WebEnv, tasks: list[str], seeds: list[int]) -> dict[tuple[str, int], list[Action]]:
    sequences = {}
    for name in tasks:
        for seed in seeds:
            actions, ok = run_expert_episode(env, TaskSpec("web", name, seed))
            if ok:
                sequences[(name, seed)] = actions
    return sequences


def _summary(
    step_times: list[float], reset_times: list[float], failed: list[str], episodes: int
) -> dict:
    steps, step_s, reset_s = len(step_times), sum(step_times), sum(reset_times)
    wins = episodes - len(failed)
    return {
        "failed": failed,
        "episodes": episodes,
        "steps": steps,
        "success": wins / max(1, episodes),
        "steps_per_s": steps / step_s if step_s else 0.0,
        "median_step_ms": 1000 * statistics.median(step_times) if step_times else 0.0,
        "mean_reset_ms": 1000 * reset_s / max(1, episodes),
        "episodes_per_s": episodes / (step_s + reset_s) if step_s + reset_s else 0.0,
    }


def run_webenv(env: WebEnv, sequences: dict[tuple[str, int], list[Action]]) -> dict:
    step_times: list[float] = []
    reset_times: list[float] = []
    failed: list[str] = []
    for (name, seed), actions in sequences.items():
        t0 = time.perf_counter()
        env.reset(options={"task": TaskSpec("web", name, seed)})
        reset_times.append(time.perf_counter() - t0)
        info: dict[str, Any] = {}
        for action in actions:
            t0 = time.perf_counter()
            _, _, terminated, truncated, info = env.step(action)
            step_times.append(time.perf_counter() - t0)
            if terminated or truncated:
                break
        if not info.get("success"):
            failed.append(f"{name}#{seed}")
    return _summary(step_times, reset_times, failed, len(sequences))


def _selenium_action(env: Any, action: Action) -> Any:
    import numpy as np
    from miniwob.action import ActionTypes

    u = env.unwrapped
    cfg = u.action_space_config
    if action.kind is ActionKind.TAP:
        coords = np.array([action.x * cfg.screen_width, action.y * cfg.screen_height])
        return u.create_action(ActionTypes.CLICK_COORDS, coords=coords)
    if action.kind is ActionKind.TYPE:
        return u.create_action(ActionTypes.TYPE_TEXT, text=action.text)
    if action.kind is ActionKind.KEY:
        return u.create_action(
            ActionTypes.PRESS_KEY, key=list(cfg.allowed_keys).index(SELENIUM_KEYS[action.key])
        )
    if action.kind is ActionKind.SWIPE and action.direction in ("up", "down"):
        kind = (
            ActionTypes.SCROLL_DOWN_COORDS
            if action.direction == "up"
            else ActionTypes.SCROLL_UP_COORDS
        )
        coords = np.array([cfg.screen_width / 2, cfg.screen_height / 2])
        return u.create_action(kind, coords=coords)
    return u.create_action(ActionTypes.NONE)


def run_selenium(sequences: dict[tuple[str, int], list[Action]], *, screenshots: bool) -> dict:
    import gymnasium
    import miniwob  # noqa: F401  (registers the gymnasium envs)
    from miniwob.action import ActionSpaceConfig
    from miniwob.constants import DEFAULT_ALLOWED_KEYS

    from adaroll.envs.web.stock import configure_stock_browser

    configure_stock_browser()
    step_times: list[float] = []
    reset_times: list[float] = []
    failed: list[str] = []
    by_task: dict[str, list[tuple[int, list[Action]]]] = {}
    for (name, seed), actions in sequences.items():
        by_task.setdefault(name, []).append((seed, actions))
    for name, runs in by_task.items():
        cfg = ActionSpaceConfig.get_preset("all_supported")
        cfg.allowed_keys = tuple(DEFAULT_ALLOWED_KEYS) + ("<Escape>",)
        cfg.scroll_amount = 105  # = WebEnv's swipe: half the 210 px task height
        env = gymnasium.make(f"miniwob/{name}-v1", action_space_config=cfg)
        try:
            for seed, actions in runs:
                t0 = time.perf_counter()
                env.reset(seed=seed, options={"record_screenshots": screenshots})
                reset_times.append(time.perf_counter() - t0)
                reward = 0.0
                for action in actions:
                    sel = _selenium_action(env, action)
                    t0 = time.perf_counter()
                    _, reward, terminated, truncated, _ = env.step(sel)
                    step_times.append(time.perf_counter() - t0)
                    if terminated or truncated:
                        break
                if not reward > 0:
                    failed.append(f"{name}#{seed}")
        finally:
            env.close()
    return _summary(step_times, reset_times, failed, len(sequences))


def tree_cpu_s(root: int) -> float:
    """CPU seconds (user + system) used so far by process ``root`` and its live descendants
    (here: this process and its browsers). On a shared machine, CPU per step says more than
    wall time: 2 cores / (CPU per step) bounds the rate on an idle machine."""
    parents, cpu = {}, {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        pid = int(stat.parent.name)
        parents[pid], cpu[pid] = int(fields[1]), int(fields[11]) + int(fields[12])

    def descends(pid: int) -> bool:
        while pid > 1 and pid in parents:
            if pid == root:
                return True
            pid = parents[pid]
        return False

    return sum(ticks for pid, ticks in cpu.items() if descends(pid)) / os.sysconf("SC_CLK_TCK")


def run_collector(
    templates: list[str], seeds: int, group: int, parallel_jobs: int, episodes_per_env: int = 1
) -> dict:
    """Root groups of an untrained small policy through the real collector (see above)."""
    from adaroll.checkpoints import CheckpointStore
    from adaroll.config import PolicyConfig
    from adaroll.envs import make_env_factory
    from adaroll.policies import make_policy
    from adaroll.rollout.collector import Collector
    from adaroll.rollout.jobs import Job
    from adaroll.snapshots.memory import MemorySnapshots

    torch.set_num_threads(RunConfig().threads)  # as a training run sets it
    jobs = [
        Job("root", TaskSpec("web", name, seed), group)
        for name in templates
        for seed in range(seeds)
    ]
    cfg = PolicyConfig()
    policy = make_policy(cfg, seed=0)
    collector = Collector(
        policy,
        make_env_factory("web"),
        CheckpointStore(),
        MemorySnapshots(),
        history_window=cfg.history,
        parallel_jobs=parallel_jobs,
        episodes_per_env=episodes_per_env,
    )
    try:
        warmup = [
            Job("root", TaskSpec("web", templates[0], 10_000 + k), group)
            for k in range(parallel_jobs)
        ]
        collector.collect(warmup, seed=1)  # browsers started, caches warm
        began, cpu_began = time.perf_counter(), tree_cpu_s(os.getpid())
        groups = collector.collect(jobs, seed=0)
        seconds, cpu = time.perf_counter() - began, tree_cpu_s(os.getpid()) - cpu_began
        resets = {"loaded": 0, "reused": 0, "reuse_refused": 0}
        for env in collector.pool.idle():
            for key in resets:
                resets[key] += getattr(env, "reset_counts", {}).get(key, 0)
    finally:
        collector.close()
    steps = sum(g.cost.env_steps for g in groups)
    return {
        "jobs": len(jobs),
        "group": group,
        "parallel_jobs": parallel_jobs,
        "episodes_per_env": episodes_per_env,
        "env_steps": steps,
        "episodes": sum(len(g.rewards) for g in groups),
        "seconds": round(seconds, 3),
        "steps_per_s": steps / seconds,
        "cpu_s": round(cpu, 1),
        "cpu_ms_per_step": 1000 * cpu / max(1, steps),
        "success": sum(sum(g.rewards) for g in groups)
        / max(1, sum(len(g.rewards) for g in groups)),
        "resets_incl_warmup": resets,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--tasks", nargs="*", default=DEFAULT_TASKS)
    parser.add_argument("--skip-selenium", action="store_true")
    parser.add_argument(
        "--collector-seeds",
        type=int,
        default=2,
        help="untrained-policy workload: Root jobs per curated training template",
    )
    parser.add_argument("--group", type=int, default=8, help="episodes per Root group")
    parser.add_argument(
        "--parallel-jobs",
        type=int,
        default=RolloutConfig().parallel_jobs,
        help="Collector(parallel_jobs=...); default: rollout.parallel_jobs's",
    )
    parser.add_argument(
        "--episodes-per-env",
        type=int,
        default=WebEnv.episodes_per_env,
        help="Collector(episodes_per_env=...); default: the web env's, which a run "
        "with rollout.episodes_per_env unset uses",
    )
    parser.add_argument(
        "--collector-templates",
        nargs="*",
        help="untrained-policy workload on these templates only (default: every curated "
        "training template)",
    )
    parser.add_argument("--skip-collector", action="store_true")
    parser.add_argument(
        "--only-collector",
        action="store_true",
        help="skip the expert replay and Selenium configurations",
    )
    parser.add_argument(
        "--smoke", action="store_true", help=f"{' + '.join(SMOKE_TASKS)}, 1 seed (CI)"
    )
    args = parser.parse_args(argv)
    from adaroll.envs.web.suite import MiniWoBSuite

    templates = args.collector_templates or MiniWoBSuite().train_templates()
    if args.smoke:
        args.seeds, args.tasks = 1, SMOKE_TASKS
        templates, args.collector_seeds, args.group, args.parallel_jobs = SMOKE_TASKS, 1, 2, 2
    load_start = os.getloadavg()[0]
    seeds = list(range(args.seeds))
    if args.only_collector:
        args.tasks, args.skip_selenium = [], True
    results: dict[str, dict] = {}
    sequences: dict[tuple[str, int], list[Action]] = {}
    if args.tasks:
        browser = BrowserProcess.launch()
        try:
            env = WebEnv(browser=browser)
            sequences = record(env, args.tasks, seeds)
            print(
                f"recorded {len(sequences)} expert sequences, "
                f"{sum(map(len, sequences.values()))} actions",
                flush=True,
            )
            results["adaroll"] = run_webenv(env, sequences)
            env.close()
            shot_env = WebEnv(screenshot=True)  # its own browser, launched for screenshots
            results["adaroll+screenshot"] = run_webenv(shot_env, sequences)
            shot_env.close()
        finally:
            browser.kill()
    if sequences and not args.skip_selenium:
        results["selenium"] = run_selenium(sequences, screenshots=True)
        results["selenium-dom"] = run_selenium(sequences, screenshots=False)
    if not args.skip_collector:
        results["collector"] = run_collector(
            templates, args.collector_seeds, args.group, args.parallel_jobs, args.episodes_per_env
        )
    print(
        f"{'config':20s} {'steps/s':>8s} {'med step ms':>11s} {'reset ms':>9s} "
        f"{'episodes/s':>10s} {'success':>8s}"
    )
    for name, r in results.items():
        if name == "collector":
            print(
                f"collector (untrained policy, Root groups): {r['steps_per_s']:.1f} env steps/s, "
                f"{r['env_steps']} steps in {r['seconds']:.1f} s ({r['cpu_ms_per_step']:.0f} ms CPU "
                f"per step, browsers included), {r['jobs']} jobs x {r['group']}, "
                f"{r['parallel_jobs']} at once, {r['episodes_per_env']} episode(s) per env, "
                f"resets {r['resets_incl_warmup']}"
            )
            continue
        print(
            f"{name:20s} {r['steps_per_s']:8.1f} {r['median_step_ms']:11.1f} "
            f"{r['mean_reset_ms']:9.1f} {r['episodes_per_s']:10.2f} {r['success']:8.2f}"
            + (f"  failed: {' '.join(r['failed'])}" if r["failed"] else "")
        )
    summary: dict[str, Any] = {
        "benchmark": "web_step_rate",
        "tasks": args.tasks,
        "seeds": args.seeds,
        "results": results,
        "load_avg_start": round(load_start, 2),
    }
    if args.tasks:
        summary["env_steps_per_s"] = results["adaroll"]["steps_per_s"]
    if "collector" in results:
        summary["collector_steps_per_s"] = results["collector"]["steps_per_s"]
    if "selenium" in results:
        summary["step_speedup_vs_selenium"] = (
            results["adaroll"]["steps_per_s"] / results["selenium"]["steps_per_s"]
        )
        summary["step_speedup_vs_selenium_dom"] = (
            results["adaroll"]["steps_per_s"] / results["selenium-dom"]["steps_per_s"]
        )
        summary["screenshot_step_speedup_vs_selenium"] = (
            results["adaroll+screenshot"]["steps_per_s"] / results["selenium"]["steps_per_s"]
        )
    summary["load_avg_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
