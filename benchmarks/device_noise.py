"""The noisy device against the clean one: expert success, how often each perturbation
happens, and env steps/s on one core.

    .venv/bin/python benchmarks/device_noise.py [--seeds 5] [--repeat 3] [--device noisy] [--smoke]

The scripted experts run every trainable template x ``--seeds`` seeds on the noisy device
(seeds 0.. of each template, as ``adaroll envs play`` would draw them). Then their recorded
actions are replayed and only ``env.step`` is timed (actions built beforehand, resets timed
apart, each episode's fastest of ``--repeat`` passes), on the noisy device and, for the same
templates and seeds, on the clean one. Every replay must reproduce its recorded episode
exactly (same observations, rewards and perturbation counts), or the script fails. The last
line is JSON: ``expert_success``, ``perturbed_episode_share``, ``perturbations_by_kind``,
``steps_per_s``, ``clean_steps_per_s`` and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from typing import Any

from adaroll.actions import Action
from adaroll.envs.base import TaskSpec
from adaroll.envs.mobile import MobileEnv, MobileTaskSuite
from adaroll.envs.mobile.device import KINDS, PROFILES


def expert_episode(env: MobileEnv, suite: MobileTaskSuite, task: TaskSpec) -> dict[str, Any]:
    obs, _ = env.reset(options={"task": task})
    actions: list[Action] = []
    trace = [obs.element_tree_hash()]
    while True:
        action = suite.expert_action(env)
        actions.append(action)
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((obs.element_tree_hash(), reward))
        if terminated or truncated:
            return {
                "task": task,
                "actions": actions,
                "success": bool(info["success"]),
                "perturbations": env.perturbations(),
                "trace": trace,
            }


def replay_seconds(env: MobileEnv, episode: dict[str, Any], repeat: int, check: bool) -> float:
    """Fastest of ``repeat`` timed passes over the episode's ``env.step`` calls."""
    best = float("inf")
    for _ in range(repeat):
        obs, _ = env.reset(options={"task": episode["task"]})
        trace = [obs.element_tree_hash()] if check else None
        began = time.perf_counter()
        for action in episode["actions"]:
            obs, reward, *_ = env.step(action)
            if trace is not None:
                trace.append((obs.element_tree_hash(), reward))
        best = min(best, time.perf_counter() - began)
        if trace is not None:
            if trace != episode["trace"] or env.perturbations() != episode["perturbations"]:
                raise SystemExit(f"replaying {episode['task'].id} did not reproduce its episode")
            check = False
    return best


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--device", default="noisy", choices=sorted(set(PROFILES) - {"clean"}))
    ap.add_argument("--smoke", action="store_true", help="4 templates x 1 seed, 1 pass (CI)")
    args = ap.parse_args()
    if args.smoke:
        args.seeds, args.repeat = 1, 1
    suite = MobileTaskSuite()
    templates = suite.trainable_templates()[: 4 if args.smoke else None]
    tasks = [TaskSpec("mobile", t, s) for t in templates for s in range(args.seeds)]
    noisy, clean = MobileEnv(device=args.device), MobileEnv(device="clean")
    episodes = [expert_episode(noisy, suite, t) for t in tasks]
    by_kind: Counter[str] = Counter({kind: 0 for kind in KINDS})
    for e in episodes:
        by_kind.update(e["perturbations"])
    noisy_steps = sum(len(e["actions"]) for e in episodes)
    noisy_s = sum(replay_seconds(noisy, e, args.repeat, check=True) for e in episodes)
    clean_episodes = [expert_episode(clean, suite, t) for t in tasks]
    clean_steps = sum(len(e["actions"]) for e in clean_episodes)
    clean_s = sum(replay_seconds(clean, e, args.repeat, check=True) for e in clean_episodes)
    failed = [e["task"].id for e in episodes if not e["success"]]
    result = {
        "device": args.device,
        "templates": len(templates),
        "seeds": args.seeds,
        "episodes": len(episodes),
        "expert_success": round(sum(e["success"] for e in episodes) / len(episodes), 4),
        "failed": failed[:20],
        "perturbed_episode_share": round(
            sum(any(e["perturbations"].values()) for e in episodes) / len(episodes), 4
        ),
        "perturbations_by_kind": dict(by_kind),
        "mean_expert_steps": round(noisy_steps / len(episodes), 2),
        "clean_mean_expert_steps": round(clean_steps / len(episodes), 2),
        "steps_per_s": round(noisy_steps / noisy_s),
        "clean_steps_per_s": round(clean_steps / clean_s),
        "steps_per_s_ratio_vs_clean": round((noisy_steps / noisy_s) / (clean_steps / clean_s), 3),
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    print(
        f"{args.device}: experts {result['expert_success']:.1%} over {len(episodes)} episodes, "
        f"{result['perturbed_episode_share']:.1%} perturbed; {result['steps_per_s']:,} steps/s "
        f"against {result['clean_steps_per_s']:,} clean (x{result['steps_per_s_ratio_vs_clean']})"
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
