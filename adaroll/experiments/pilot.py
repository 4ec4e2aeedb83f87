"""The pilot behind a prediction: what the cost model needs, measured on the train split only,
before any RL run of a profile.

For one profile and seed it builds Base as ``adaroll run`` does (experts on the pretrain and
train splits, behaviour cloning on the pretrain pool), then, on the **train** tasks alone:

1. ``routing_probes`` root rollouts per task with Base: its success p(x), the episode lengths
   by outcome, and the route each task would take (the paper's thresholds);
2. pivots scored with Base (the RL phase's pivot settings), as Hybrid's would be;
3. one Suffix group of ``group_size`` from the deepest pivot of every task routed Suffix: the
   length of a rollout from the frontier.

From these the cost model (:mod:`adaroll.algos.cost_model`) predicts Vanilla's and Hybrid's env
cost per iteration, the routing pass, Hybrid's extra demonstrations, and the saving S(N) at the
given numbers of updates. Val and held-out tasks are never touched. The prediction is made at
Base's success: as both learn, Vanilla's failures shorten and Hybrid's tasks move to Root, so
it describes the start of training (docs/RESULTS.md says how it fared).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from adaroll.algos import cost_model as cm
from adaroll.config import RunConfig, dump_config, load_config
from adaroll.experiments.profiles import PROFILES
from adaroll.io import atomic_write_text, make_private_dir
from adaroll.policies.base import Policy
from adaroll.rollout.jobs import Group, Job, StartKind
from adaroll.seeding import derive_seed
from adaroll.training.cost_report import modelled_episode
from adaroll.training.scheduler import route_for

UPDATES = (10, 30, 100)
"""Numbers of updates at which the saving is predicted (the budget sweep's Vanilla updates)."""


def _stats(groups: Sequence[Group]) -> dict[str, int]:
    out = {
        "samples": 0,
        "successes": 0,
        "success_decisions": 0,
        "failure_decisions": 0,
        "env_steps": 0,
    }
    for group in groups:
        out["env_steps"] += group.cost.env_steps
        for decisions, reward in zip(group.decisions, group.rewards, strict=True):
            out["samples"] += 1
            won = reward > 0
            out["successes"] += int(won)
            out["success_decisions" if won else "failure_decisions"] += len(decisions)
    return out


def pilot_base(
    profile: str, seed: int, root: Path, *, say: Callable[[str], None] = print
) -> tuple[RunConfig, Path, Any, Policy]:
    """A pilot's config, directory, pipeline and Base: experts on the pretrain and train
    splits and behaviour cloning on the pretrain pool, as `adaroll run` makes them (reused
    when ``ROOT/PROFILE/seedK`` already holds them)."""
    from adaroll.training.pipeline import Pipeline

    if profile not in PROFILES:
        raise KeyError(f"unknown profile {profile!r}; profiles: {', '.join(PROFILES)}")
    prof = PROFILES[profile]
    cfg = load_config(None, [*prof.overrides, f"seed={seed}", "configurations=[base]"])
    out = Path(root) / profile / f"seed{seed}"
    make_private_dir(out)
    atomic_write_text(out / "config.yaml", dump_config(cfg))
    pipe = Pipeline(cfg, out, progress=False, say=say)
    pipe.experts("pretrain")
    pipe.experts("train")
    return cfg, out, pipe, pipe.sft_policy("base", None, "pretrain")


def run_pilot(
    profile: str,
    seed: int,
    root: Path,
    *,
    updates: Sequence[int] = UPDATES,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Measure and predict for one profile and seed; writes ``ROOT/PROFILE/seedK/pilot.json``
    (returned as well). Resumes: experts, Base and pivots already there are reused."""
    cfg, out, pipe, base = pilot_base(profile, seed, root, say=say)
    tasks = pipe.split("train")
    sched, grpo = cfg.rl.scheduler, cfg.rl.grpo
    collector = pipe.collector(base)
    try:
        probes = collector.collect(
            [Job(StartKind.ROOT, t, sched.routing_probes, purpose="routing") for t in tasks],
            seed=derive_seed(seed, "pilot", "probes"),
        )
        pivots = pipe.pivots("pilot", base, cfg.rl).pivots
        routes = {}
        for group in probes:
            task = group.job.task.id
            mode = route_for(group.success_rate, sched.tau_low, sched.tau_high)
            routes[task] = mode if pivots.get(task) or mode == "root" else "root"
        suffix_jobs = [
            Job(StartKind.SUFFIX, t, grpo.group_size, checkpoint_id=pivots[t.id][-1])
            for t in tasks
            if routes[t.id] == "suffix"
        ]
        suffix = (
            collector.collect(suffix_jobs, seed=derive_seed(seed, "pilot", "suffix"))
            if suffix_jobs
            else []
        )
    finally:
        collector.close()
    store = pipe.store("train")
    depths = [store.get(str(j.checkpoint_id)).step for j in suffix_jobs]
    by_mode = {
        m: [g for g in probes if routes[g.job.task.id] == m] for m in ("local", "suffix", "root")
    }
    root_all = _stats(probes)
    n = len(tasks)
    shares = {m: len(g) / n for m, g in by_mode.items()}
    e_root = modelled_episode(root_all)
    c_v = cm.vanilla_cost(cm.VanillaInputs(sched.tasks_per_iteration, grpo.group_size, e_root))
    hybrid = cm.HybridInputs(
        tasks_per_iteration=sched.tasks_per_iteration,
        group_size=grpo.group_size,
        routing_probes=sched.routing_probes,
        root_probes=sched.root_probes,
        reeval_every=sched.local_reeval_every,
        share_local=shares["local"],
        share_suffix=shares["suffix"],
        share_root=shares["root"],
        local_probe_episode=modelled_episode(_stats(by_mode["local"])),
        suffix_episode=modelled_episode(_stats(suffix)),
        root_episode=modelled_episode(_stats(by_mode["root"])),
    )
    c_h = cm.hybrid_cost(hybrid)
    routing = cm.routing_pass_cost(n, sched.routing_probes, e_root)
    extra_demos = pipe.expert_env_steps(
        "train"
    )  # Hybrid's checkpoints; Vanilla starts from Base alone
    fixed = routing + extra_demos
    result = {
        "profile": profile,
        "seed": seed,
        "train_tasks": n,
        "base_root_success": root_all["successes"] / max(root_all["samples"], 1),
        "root_length_success": root_all["success_decisions"] / max(root_all["successes"], 1),
        "root_length_failure": root_all["failure_decisions"]
        / max(root_all["samples"] - root_all["successes"], 1),
        "suffix_episode": hybrid.suffix_episode,
        "shares": shares,
        "suffix_depth": (sum(depths) / len(depths) if depths else None),
        "vanilla_per_iteration": c_v,
        "hybrid_per_iteration": c_h,
        "routing_pass": routing,
        "extra_demo_env_steps": extra_demos,
        "predicted_saving": {str(u): cm.saving(c_v, c_h, u, fixed) for u in updates},
        "break_even_updates": cm.break_even_updates(c_v, c_h, fixed),
        "pilot_env_steps": root_all["env_steps"] + sum(g.cost.env_steps for g in suffix),
        # what the options' predictions (adaroll/experiments/route_pilot.py) start from
        "hybrid_inputs": asdict(hybrid),
        "probe_successes": {g.job.task.id: sum(r > 0 for r in g.rewards) for g in probes},
    }
    atomic_write_text(out / "pilot.json", json.dumps(result, indent=2))
    return result


def pilot_table(results: Sequence[dict[str, Any]], updates: Sequence[int] = UPDATES) -> str:
    """The predictions as a markdown table, one row per (profile, seed)."""
    head = [
        "profile",
        "seed",
        "Base p (train)",
        "root length success / failure",
        "shares L/S/R",
        "C_V",
        "C_H",
        "routing pass",
        "extra demos",
        *[f"S({u})" for u in updates],
        "break-even N",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        s = r["shares"]
        lines.append(
            "| "
            + " | ".join(
                [
                    r["profile"],
                    str(r["seed"]),
                    f"{r['base_root_success']:.2f}",
                    f"{r['root_length_success']:.1f} / {r['root_length_failure']:.1f}",
                    f"{s['local']:.2f}/{s['suffix']:.2f}/{s['root']:.2f}",
                    f"{r['vanilla_per_iteration']:,.0f}",
                    f"{r['hybrid_per_iteration']:,.0f}",
                    f"{r['routing_pass']:,.0f}",
                    f"{r['extra_demo_env_steps']:,}",
                    *[f"{100 * r['predicted_saving'][str(u)]:+.0f}%" for u in updates],
                    f"{r['break_even_updates']:.1f}",
                ]
            )
            + " |"
        )
    return "\n".join(lines)
