"""The cost model (:mod:`adaroll.algos.cost_model`) fed from a run: measured and predicted env
cost per iteration of each RL phase, and the saving it predicts for each Hybrid configuration.

Inputs come from the phase's ``metrics.jsonl``: each iteration row holds the env steps spent so
far, the routes (tasks per mode) and, per ``mode/purpose`` of its groups, samples, successes and
the decisions of successful and failed samples (:meth:`Trainer._episode_stats`). The prediction
uses only lengths by outcome, success rates, mode shares and the recipe (B, G, R, P, K); the
measurement is the env steps the ledger counted. They differ by what the model leaves out:
samples that were not executed (unparseable or rejected actions end an episode without a step),
the last iteration cut by the budget, re-evaluations falling on whole visits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from adaroll.algos import cost_model as cm
from adaroll.config import TrainConfig
from adaroll.routes import ROUTED, Route
from adaroll.training.purposes import EPISODE_STATS

Rows = Sequence[Mapping[str, Any]]


def _pool(rows: Rows, *keys: str) -> dict[str, int]:
    """The episode statistics of ``rows`` under the given ``mode/purpose`` keys, summed."""
    out = dict.fromkeys(EPISODE_STATS, 0)
    for row in rows:
        for key in keys:
            for name, value in row.get("episodes", {}).get(key, {}).items():
                out[name] = out.get(name, 0) + int(value)
    return out


def modelled_episode(stats: Mapping[str, int]) -> float:
    """E(p) from a pool's success rate and mean lengths by outcome (0 for an empty pool)."""
    samples = stats["samples"]
    if samples == 0:
        return 0.0
    wins, losses = stats["successes"], samples - stats["successes"]
    length_success = stats["success_decisions"] / wins if wins else 0.0
    length_failure = stats["failure_decisions"] / losses if losses else 0.0
    return cm.episode_cost(wins / samples, length_success, length_failure)


def _steps(rows: Rows) -> list[int]:
    """Env steps (rollouts and probes) each iteration spent."""
    out, before = [], 0
    for row in rows:
        out.append(int(row["env_steps"]) - before)
        before = int(row["env_steps"])
    return out


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def phase_costs(rows: Rows, algorithm: str, cfg: TrainConfig, n_tasks: int) -> dict[str, Any]:
    """Measured and predicted env steps per iteration of one RL phase (``vanilla`` or
    ``hybrid``; other phases spend no env steps per iteration and get only their counts).

    ``rows``: the phase's iteration rows in order; ``n_tasks``: its train tasks. Hybrid's
    first ``ceil(n / B)`` iterations are its routing pass, reported apart from its steady
    iterations."""
    rows = [r for r in rows if r.get("kind") == "iteration"]
    out: dict[str, Any] = {
        "iterations": len(rows),
        "optimizer_steps": rows[-1].get("optimizer_steps") if rows else 0,
        "updating_iterations": sum(1 for r in rows if r.get("groups_used")),
    }
    if not rows or algorithm not in ("vanilla", "hybrid"):
        return out
    sched, grpo = cfg.scheduler, cfg.grpo
    steps = _steps(rows)
    if algorithm == "vanilla":
        episode = modelled_episode(_pool(rows, "vanilla/train"))
        predicted = cm.vanilla_cost(
            cm.VanillaInputs(sched.tasks_per_iteration, grpo.group_size, episode)
        )
        return out | {
            "measured_per_iteration": _mean(steps),
            "predicted_per_iteration": predicted,
            "root_episode": episode,
        }
    routing_iterations = min(len(rows), math.ceil(n_tasks / sched.tasks_per_iteration))
    first, steady = rows[:routing_iterations], rows[routing_iterations:]
    first_probe = modelled_episode(_pool(first, "root/routing"))
    out |= {
        "routing_pass_measured": sum(steps[:routing_iterations]),
        "routing_pass_predicted": cm.routing_pass_cost(n_tasks, sched.routing_probes, first_probe),
        "routing_iterations": routing_iterations,
    }
    if not steady:
        return out
    shares = {
        route: _mean([r.get("routes", {}).get(route, 0) / n_tasks for r in steady]) or 0.0
        for route in ROUTED
    }
    routed = sum(shares.values()) or 1.0
    inputs = cm.HybridInputs(
        tasks_per_iteration=sched.tasks_per_iteration,
        group_size=grpo.group_size,
        routing_probes=sched.routing_probes,
        root_probes=sched.root_probes,
        reeval_every=sched.local_reeval_every,
        share_local=shares[Route.LOCAL] / routed,
        share_suffix=shares[Route.SUFFIX] / routed,
        share_root=shares[Route.ROOT] / routed,
        local_probe_episode=modelled_episode(_pool(steady, "root/routing", "root/reeval")),
        suffix_episode=modelled_episode(_pool(steady, "suffix/train")),
        root_episode=modelled_episode(_pool(steady, "root/train")),
    )
    return out | {
        "measured_per_iteration": _mean(steps[routing_iterations:]),
        "predicted_per_iteration": cm.hybrid_cost(inputs),
        "shares": {
            "local": inputs.share_local,
            "suffix": inputs.share_suffix,
            "root": inputs.share_root,
        },
    }


HYBRID_PAIRS = {
    "base_hybrid": "base_vanilla",
    "action_hybrid": "action_vanilla",
    "sft_hybrid": "sft_vanilla",
}
"""Each Hybrid configuration and the Vanilla configuration that starts from the same policy."""


def predicted_savings(
    phases: Mapping[str, Mapping[str, Any]],
    rows: Mapping[str, Mapping[str, Any]],
    curves: Mapping[str, Sequence[Mapping[str, Any]]],
    target: float | None,
) -> dict[str, dict[str, Any]]:
    """Per Hybrid configuration: S(N) predicted at N = the updating iterations its Vanilla pair
    made up to its first crossing of the target (all of them when it never crossed), with the
    routing pass and the extra demonstration steps as Hybrid's fixed cost; and the measured
    saving of total env steps to the target, when both reached it."""
    out: dict[str, dict[str, Any]] = {}
    for hybrid, vanilla in HYBRID_PAIRS.items():
        h, v = phases.get(hybrid), phases.get(vanilla)
        if (
            not h
            or not v
            or not v.get("predicted_per_iteration")
            or "predicted_per_iteration" not in h
        ):
            continue
        n = _updates_to_target(curves.get(vanilla, []), target)
        if n is None:  # never crossed: priced at every updating iteration it made
            n = v["updating_iterations"]
        extra = rows[hybrid].get("demo_env_steps", 0) - rows[vanilla].get("demo_env_steps", 0)
        fixed = h["routing_pass_predicted"] + max(extra, 0)
        entry: dict[str, Any] = {
            "vanilla": vanilla,
            "updates": n,
            "fixed_env_steps": fixed,
            # a start policy already at the target needs no update: there is nothing to save
            "predicted_saving": cm.saving(
                v["predicted_per_iteration"], h["predicted_per_iteration"], n, fixed
            )
            if n > 0
            else 0.0,
            "break_even_updates": cm.break_even_updates(
                v["predicted_per_iteration"], h["predicted_per_iteration"], fixed
            ),
        }
        hv, vv = rows[hybrid], rows[vanilla]
        if hv.get("reached_target") and vv.get("reached_target") and vv.get("steps_to_target"):
            entry["measured_saving"] = 1.0 - hv["steps_to_target"] / vv["steps_to_target"]
        out[hybrid] = entry
    return out


def _updates_to_target(curve: Sequence[Mapping[str, Any]], target: float | None) -> int | None:
    if target is None:
        return None
    for point in curve:
        if point.get("val_avg") is not None and point["val_avg"] >= target:
            return int(point["iteration"])
    return None


def cost_lines(summary: Mapping[str, Any], labels: Mapping[str, str]) -> list[str]:
    """What ``adaroll run`` prints of the cost model: per RL configuration its optimizer steps
    and its predicted and measured env cost per iteration; per Hybrid configuration the saving
    predicted at the measured N (and the measured one)."""
    model = summary.get("cost_model", {})
    lines = [
        "cost model (env steps per iteration: predicted | measured; docs/RESULTS.md, 'Seeing the saving'):"
    ]
    for name, phase in model.get("phases", {}).items():
        cost = ""
        if phase.get("predicted_per_iteration") is not None:
            cost = (
                f", {phase['predicted_per_iteration']:,.0f} | "
                f"{phase['measured_per_iteration']:,.0f} env steps per iteration"
            )
        if phase.get("routing_iterations"):
            cost += (
                f" (routing pass: {phase['routing_pass_predicted']:,.0f} | "
                f"{phase['routing_pass_measured']:,.0f})"
            )
        lines.append(
            f"  {labels.get(name, name)}: {phase['optimizer_steps']} optimizer steps in "
            f"{phase['iterations']} iterations{cost}"
        )
    for name, s in model.get("savings", {}).items():
        measured = s.get("measured_saving")
        vanilla = labels.get(s["vanilla"], s["vanilla"])
        predicted = (
            f"S({s['updates']}) = {100 * s['predicted_saving']:+.1f}% (break-even at "
            f"{s['break_even_updates']:.1f} updates)"
            if s["updates"]
            else f"none ({vanilla} is at the target before any update)"
        )
        lines.append(
            f"  {labels.get(name, name)} vs {vanilla}: predicted saving {predicted}; measured "
            + (f"{100 * measured:+.1f}%" if measured is not None else "n/a (a target not reached)")
        )
    return lines
