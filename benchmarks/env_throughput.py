"""Mobile env throughput on one core: env steps/s, snapshot and restore times (element-list
observations), and the separate cost of screenshots.

    .venv/bin/python benchmarks/env_throughput.py [--seeds 4] [--repeat 5] [--cpu N] [--shots 200]
        [--smoke]

Workloads: ``expert`` replays the verified expert trajectories of every template (actions that
navigate, type and change app data: each step builds a new screen); ``random`` replays episodes
of uniform random taps/swipes/keys/typing (many no-ops, as an untrained policy does). Actions
are built before timing; steps/s counts ``env.step`` only, resets are timed apart. Each episode
is timed ``--repeat`` times: "best" sums each episode's fastest pass (what one core does when
other processes leave it alone; the machine this was written on is shared), "mean" its average
pass. The 1-minute load average is printed with the results. Snapshots are timed at
every state of the expert trajectories, both at the env level (``get_state``/``branch``, what
the memory backend stores and calls) and through the ``memory`` snapshot backend, whose
``save`` also hashes the element list for the ref. ``--smoke`` (CI) runs 4 templates x 1 seed,
1 pass and 5 screenshots per size. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time
from typing import Any

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import TaskSpec, run_expert
from adaroll.envs.mobile import TEMPLATES, MobileEnv, MobileTaskSuite
from adaroll.snapshots.base import SNAPSHOT_BACKENDS


def stats_us(samples_ns: list[int]) -> dict[str, float]:
    xs = sorted(samples_ns)
    return {
        "median_us": round(statistics.median(xs) / 1e3, 3),
        "p95_us": round(xs[min(len(xs) - 1, int(0.95 * len(xs)))] / 1e3, 3),
        "n": len(xs),
    }


def random_actions(rng: random.Random, n: int) -> list[Action]:
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.65:
            out.append(Action.tap(rng.random(), rng.random()))
        elif r < 0.75:
            out.append(Action.swipe(rng.choice(("up", "down"))))
        elif r < 0.85:
            out.append(Action.press(rng.choice(("back", "home", "enter"))))
        elif r < 0.95:
            out.append(Action.type_text(rng.choice(("hello", "Alice", "555-0100"))))
        else:
            out.append(Action(ActionKind.LONG_PRESS, x=rng.random(), y=rng.random()))
    return out


def time_episodes(
    env: MobileEnv, episodes: list[tuple[TaskSpec, list[Action]]], passes: int, reset_ns: list[int]
) -> tuple[float, float]:
    """(steps/s from each episode's fastest pass, steps/s from its mean pass)."""
    steps, best, mean = 0, 0, 0.0
    for task, actions in episodes:
        times = []
        for _ in range(passes):
            t0 = time.perf_counter_ns()
            env.reset(options={"task": task})
            t1 = time.perf_counter_ns()
            for action in actions:
                env.step(action)
            times.append(time.perf_counter_ns() - t1)
            reset_ns.append(t1 - t0)
        steps += len(actions)
        best += min(times)
        mean += sum(times) / len(times)
    return steps / (best / 1e9), steps / (mean / 1e9)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seeds", type=int, default=4, help="task seeds per template")
    ap.add_argument("--repeat", type=int, default=5, help="passes over the workloads")
    ap.add_argument(
        "--cpu", type=int, default=None, help="pin to this CPU (default: first allowed)"
    )
    ap.add_argument("--shots", type=int, default=200, help="screenshots to time per size")
    ap.add_argument(
        "--smoke", action="store_true", help="4 templates x 1 seed, 1 pass, 5 shots (CI)"
    )
    args = ap.parse_args()
    if args.smoke:
        args.seeds, args.repeat, args.shots = 1, 1, 5
    cpu = args.cpu if args.cpu is not None else min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})

    env, suite = MobileEnv(), MobileTaskSuite()
    templates = sorted(TEMPLATES)[: 4 if args.smoke else None]
    tasks = [TaskSpec("mobile", t, s) for t in templates for s in range(args.seeds)]
    trajectories = []
    for task in tasks:  # also warms the instance cache (the expert runs once per instance)
        actions, ok = run_expert(env, suite, task)
        assert ok, task
        trajectories.append((task, actions))
    n_expert = sum(len(a) for _, a in trajectories)

    # -- steps/s ------------------------------------------------------------------------------
    reset_ns: list[int] = []
    expert_best, expert_mean = time_episodes(env, trajectories, args.repeat, reset_ns)
    rng, pool, episodes = random.Random(0), [], []
    for task, _ in trajectories:  # fix one random episode per task, then time its replay
        env.reset(options={"task": task})
        actions = []
        while True:
            action = random_actions(rng, 1)[0]
            actions.append(action)
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                break
        episodes.append((task, actions))
        pool.extend(actions)
    random_best, random_mean = time_episodes(env, episodes, args.repeat, [])

    # -- snapshot / restore at every expert state (3 samples each) -----------------------------
    get_ns, branch_ns, first_obs_ns, save_ns, restore_ns = [], [], [], [], []
    backend = SNAPSHOT_BACKENDS.get("memory")()
    for task, actions in trajectories:
        env.reset(options={"task": task})
        for k, action in enumerate(actions):
            for _ in range(3):
                t0 = time.perf_counter_ns()
                state = env.get_state()
                t1 = time.perf_counter_ns()
                branch = env.branch(state)
                t2 = time.perf_counter_ns()
                branch.observe()
                t3 = time.perf_counter_ns()
                ref = backend.save(env, tuple(actions[:k]))
                t4 = time.perf_counter_ns()
                restored = backend.restore(ref)
                t5 = time.perf_counter_ns()
                assert restored.get_state() == state
                backend.release(ref)
                get_ns.append(t1 - t0)
                branch_ns.append(t2 - t1)
                first_obs_ns.append(t3 - t2)
                save_ns.append(t4 - t3)
                restore_ns.append(t5 - t4)
            env.step(action)

    # -- screenshots --------------------------------------------------------------------------
    shots: dict[str, Any] = {}
    states = []
    for task, actions in trajectories[:: max(1, len(trajectories) // 40)]:
        env.reset(options={"task": task})
        for action in actions:
            states.append(env.get_state())
            env.step(action)
    for size in ((540, 1200), (270, 600)):
        shooter = MobileEnv(screenshot_size=size)
        samples = []
        for k in range(args.shots):
            s = shooter.branch(states[k % len(states)])
            t0 = time.perf_counter_ns()
            s.render()
            samples.append(time.perf_counter_ns() - t0)
        st = stats_us(samples)
        shots[f"{size[0]}x{size[1]}"] = {
            "median_ms": round(st["median_us"] / 1e3, 3),
            "p95_ms": round(st["p95_us"] / 1e3, 3),
        }

    elements = [len(env.branch(s).observe().elements) for s in states]
    result = {
        "cpu": cpu,
        "python": platform.python_version(),
        "templates": len(templates),
        "tasks": len(tasks),
        "expert_steps": n_expert,
        "load_avg_1min": round(os.getloadavg()[0], 2),
        "random_steps": len(pool),
        "steps_per_s_expert_best": round(expert_best),
        "steps_per_s_expert_mean": round(expert_mean),
        "steps_per_s_random_best": round(random_best),
        "steps_per_s_random_mean": round(random_mean),
        "reset": stats_us(reset_ns),
        "snapshot_get_state": stats_us(get_ns),
        "restore_branch": stats_us(branch_ns),
        "restore_first_observe": stats_us(first_obs_ns),
        "memory_backend_save": stats_us(save_ns),
        "memory_backend_restore": stats_us(restore_ns),
        "screenshot": shots,
        "elements_per_screen": {"median": statistics.median(elements), "max": max(elements)},
    }
    print(
        f"mobile env, 1 core (cpu {cpu}), {len(templates)} templates x {args.seeds} seeds, "
        f"{n_expert} expert steps x {args.repeat} passes"
    )
    print(f"load average (1 min) {result['load_avg_1min']} on {os.cpu_count()} CPUs")
    print(
        f"env steps/s, element lists, expert workload: best {expert_best:,.0f}   mean {expert_mean:,.0f}"
    )
    print(
        f"env steps/s, element lists, random workload: best {random_best:,.0f}   mean {random_mean:,.0f}"
        f"   ({len(pool)} steps/pass)"
    )
    print(
        f"reset (cached task instance): median {result['reset']['median_us']} us, p95 {result['reset']['p95_us']} us"
    )
    for label, key in (
        ("snapshot  env.get_state()", "snapshot_get_state"),
        ("restore   env.branch(state)", "restore_branch"),
        ("          + first observe()", "restore_first_observe"),
        ("memory backend save()", "memory_backend_save"),
        ("memory backend restore()", "memory_backend_restore"),
    ):
        r = result[key]
        print(
            f"{label:30s} median {r['median_us']:8.3f} us   p95 {r['p95_us']:8.3f} us   (n={r['n']})"
        )
    for size, r in shots.items():
        print(f"screenshot {size:10s} median {r['median_ms']:.2f} ms   p95 {r['p95_ms']:.2f} ms")
    print(
        f"elements per screen: median {result['elements_per_screen']['median']}, max {result['elements_per_screen']['max']}"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
