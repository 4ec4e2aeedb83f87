"""summary.json: the rows, curves and cost model of a run directory, from its phases' files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

from adaroll.algos.targets import SPLITS, target_costs, vanilla_target
from adaroll.config import ConfigurationName, TrainConfig
from adaroll.training.bill import Bill
from adaroll.training.cost_report import phase_costs, predicted_savings

RL_CONFIGS = {  # configuration -> (starting policy, algorithm)
    "base_vanilla": ("base", "vanilla"),
    "base_hybrid": ("base", "hybrid"),
    "base_onestep": ("base", "onestep"),
    "action_vanilla": ("action", "vanilla"),
    "action_hybrid": ("action", "hybrid"),
    "sft_vanilla": ("sft", "vanilla"),
    "sft_hybrid": ("sft", "hybrid"),
}
RUN_FORMAT = 2
"""Version of a run directory's accounting; 2: complete bills (demonstrations, selection,
replays, scoring) and a `val` split. A directory of another format is refused, never mixed."""
FINAL_SPLITS = ("train", "val", "heldout")


def keep_earlier_rows(path: Path, results: dict[str, Any], curves: dict[str, Any]) -> None:
    """A run directory's summary covers every configuration it holds, not only this call's."""
    if not path.exists():
        return
    earlier = json.loads(path.read_text())
    for name, row in earlier.get("configurations", {}).items():
        results.setdefault(name, row)
    for name, points in earlier.get("curves", {}).items():
        curves.setdefault(name, points)


def read_metrics(directory: Path) -> list[dict[str, Any]]:
    path = directory / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def curve_point(
    point: dict[str, Any], before: Bill, expert_steps: dict[str, int]
) -> dict[str, Any]:
    """One evaluation of a phase, placed on the configuration's whole bill (what it had spent
    before the phase, plus the phase's own spend at that evaluation)."""
    return {
        "iteration": point["iteration"],
        "total_env_steps": before.total_env_steps(expert_steps) + point["phase_env_steps"],
        "policy_samples": before.policy_samples + point["policy_samples"],
        "train_samples": before.training_samples + point["train_samples"],
        "phase_env_steps": point["phase_env_steps"],
        **{f"{split}_avg": point.get(f"{split}_avg") for split in FINAL_SPLITS},
        "routes": point.get("routes"),
    }


def summarise(
    results: dict[str, dict[str, Any]], curves: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    """summary.json: per configuration its bill and scores, and the cost at which it first
    reached the target (Base->Vanilla's :func:`vanilla_target` on ``val``). A configuration
    that never reached it has ``reached_target: false`` and its cost keys at None: censored at
    its budget (its own ``total_env_steps``). Beside it, the paper's yardstick: the same on
    ``train`` (``target_train_avg4``, ``reached_train_target``, ``steps_to_train_target``, ...),
    all None when the phases did not evaluate train at their marks."""
    order = get_args(ConfigurationName)
    results = {name: results[name] for name in sorted(results, key=order.index)}
    targets = {split: vanilla_target(curves.get("base_vanilla", []), split) for split in SPLITS}
    for name, row in results.items():
        for split, target in targets.items():
            row |= target_costs(row, curves.get(name, []), target, split)
    return {
        "format": RUN_FORMAT,
        "target_val_avg4": targets["val"],
        "target_train_avg4": targets["train"],
        "configurations": results,
        "curves": curves,
    }


def cost_model(out: Path, rl: TrainConfig, summary: dict[str, Any], n_tasks: int) -> dict[str, Any]:
    """The cost model fed from the run's RL phases under ``out`` (:mod:`adaroll.training.cost_report`):
    predicted and measured env steps per iteration, and Hybrid's predicted saving."""
    phases: dict[str, Any] = {}
    for name, (_, algorithm) in RL_CONFIGS.items():
        if name in summary["configurations"] and (out / name / "metrics.jsonl").exists():
            phase = rl.model_copy(update={"algorithm": algorithm})
            phases[name] = phase_costs(read_metrics(out / name), algorithm, phase, n_tasks)
    savings = predicted_savings(
        phases, summary["configurations"], summary["curves"], summary.get("target_val_avg4")
    )
    return {"phases": phases, "savings": savings}
