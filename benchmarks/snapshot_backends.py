"""Snapshot backends on the mobile env: save/restore latency and steps/s after restore (issue 9.7).

For a 10-step expert prefix of a mobile task this measures, per backend,

* ``memory``      - the env's immutable state (``get_state``/``branch``, no copy at all);
* ``forkserver``  - zygote fork of a worker env (``make_env`` proxy: save = fork, no replay);
* ``forkserver+replay`` - the same backend given an in-process env (what
  ``env.snapshot_backend: forkserver`` does): save replays the prefix once in a worker;
* ``deepcopy``    - ``copy.deepcopy`` of the live env on save and again per restore;
* ``replay``      - save stores the prefix, each restore resets and replays it;

save and restore latency (median / p95 over ``--n`` repetitions) and env steps/s on the restored
branch (``--steps`` random-but-fixed actions; for forkserver each step is a pipe round trip).
Prints a table, then one JSON line with every figure.

Usage: ``python benchmarks/snapshot_backends.py [--n 30] [--steps 30] [--smoke]``; ``--smoke``
(CI) runs every backend with ``--n 2 --steps 5``.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from adaroll.actions import Action
from adaroll.envs import get_suite
from adaroll.envs.base import GUIEnv, InvalidActionError, run_expert
from adaroll.envs.mobile import MobileEnv
from adaroll.snapshots.base import SNAPSHOT_BACKENDS
from adaroll.snapshots.forkserver import ForkServerSnapshots

PREFIX = 10


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, int(round(q * (len(ordered) - 1)))))]


def summary_ms(values: list[float]) -> dict[str, float]:
    return {
        "median_ms": round(1000 * statistics.median(values), 3),
        "p95_ms": round(1000 * pct(values, 0.95), 3),
    }


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def walk(env: GUIEnv, actions: list[Action]) -> float:
    """Steps/s of ``actions`` on ``env`` until the episode ends (invalid actions count as steps)."""
    t, n = time.perf_counter(), 0
    for a in actions:
        n += 1
        try:
            _, _, term, trunc, _ = env.step(a)
        except InvalidActionError:
            continue
        if term or trunc:
            break
    return n / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--smoke", action="store_true", help="--n 2 --steps 5 (CI)")
    args = ap.parse_args()
    if args.smoke:
        args.n, args.steps = 2, 5
    suite = get_suite("mobile")
    task, expert = None, []
    for spec in suite.split("train"):
        expert, ok = run_expert(MobileEnv(), suite, spec)
        if ok and len(expert) > PREFIX + 2:
            task = spec
            break
    assert task is not None, "no train task with an expert longer than the prefix"
    prefix = tuple(expert[:PREFIX])
    rng = random.Random(0)
    moves = [Action.tap(rng.random(), rng.random()) for _ in range(args.steps)]

    def live() -> MobileEnv:
        env = MobileEnv()
        env.reset(options={"task": task})
        for a in prefix:
            env.step(a)
        return env

    results: dict[str, dict[str, Any]] = {}

    def bench(
        name: str,
        save: Callable[[], Any],
        restore: Callable[[Any], GUIEnv],
        close: Callable[[], None] = lambda: None,
    ) -> None:
        saves, restores, rates = [], [], []
        for _ in range(args.n):
            dt, ref = timed(save)
            saves.append(dt)
            dt, branch = timed(lambda ref=ref: restore(ref))
            restores.append(dt)
            rates.append(walk(branch, moves))
            branch.close()
        close()
        results[name] = {
            "save": summary_ms(saves),
            "restore": summary_ms(restores),
            "steps_per_s": round(statistics.median(rates), 1),
        }

    env = live()
    mem = SNAPSHOT_BACKENDS.get("memory")()
    bench("memory", lambda: mem.save(env, prefix), mem.restore, mem.close)

    fs = ForkServerSnapshots(env_name="mobile")
    proxy = fs.make_env()
    proxy.reset(options={"task": task})
    for a in prefix:
        proxy.step(a)
    refs: list[Any] = []

    def fs_save() -> Any:
        refs.append(fs.save(proxy, prefix))
        return refs[-1]

    bench("forkserver", fs_save, fs.restore)
    for r in refs:
        fs.release(r)
    bench("forkserver+replay", lambda: fs.save(env, prefix), fs.restore)
    replayed = fs.replayed_steps_on_save
    fs.close()

    bench("deepcopy", lambda: copy.deepcopy(env), lambda saved: copy.deepcopy(saved))

    rep = SNAPSHOT_BACKENDS.get("replay")(make_env=MobileEnv)
    bench("replay", lambda: rep.save(env, prefix), rep.restore, rep.close)

    print(f"task {task.id}, prefix {PREFIX} steps, n={args.n}, {args.steps} steps after restore")
    print(
        f"{'backend':<20}{'save med ms':>12}{'save p95':>10}{'restore med ms':>16}{'restore p95':>13}{'steps/s':>10}"
    )
    for name, r in results.items():
        print(
            f"{name:<20}{r['save']['median_ms']:>12.3f}{r['save']['p95_ms']:>10.3f}"
            f"{r['restore']['median_ms']:>16.3f}{r['restore']['p95_ms']:>13.3f}{r['steps_per_s']:>10.1f}"
        )
    print(f"forkserver+replay replayed {replayed} steps on save ({args.n} saves)")
    print(
        json.dumps(
            {
                "task": task.id,
                "prefix": PREFIX,
                "n": args.n,
                "steps": args.steps,
                "replayed_steps_on_save": replayed,
                "backends": results,
            }
        )
    )


if __name__ == "__main__":
    main()
