"""The target a configuration is costed against, and what it cost to reach it (pure functions
over evaluation curves: ``[{"val_avg", "total_env_steps", "policy_samples", "train_samples"}, ...]``)."""

from __future__ import annotations

from typing import Any

TARGET_EVALS = 3
"""The target is the mean of this many last `val` evaluations of Base->Vanilla."""


def vanilla_target(curve: list[dict[str, Any]]) -> float | None:
    """Mean ``val`` Avg@k of the last :data:`TARGET_EVALS` evaluations of a curve (fewer if it
    has fewer; None if it has none): one noisy evaluation is not a target."""
    values = [p["val_avg"] for p in curve if p.get("val_avg") is not None][-TARGET_EVALS:]
    return sum(values) / len(values) if values else None


def target_costs(
    row: dict[str, Any], curve: list[dict[str, Any]], target: float | None
) -> dict[str, Any]:
    """``reached_target`` and the costs (``steps_to_target``, ``samples_to_target``,
    ``train_samples_to_target``) at a configuration's first evaluation whose Val Avg@4 reaches
    ``target``; all None without a target, the costs None when it never reached it."""
    out: dict[str, Any] = dict.fromkeys(
        ("reached_target", "steps_to_target", "samples_to_target", "train_samples_to_target")
    )
    if target is None:
        return out
    points = curve or [{**row, "val_avg": row.get("val_avg4")}]
    hit = next(
        (p for p in points if p.get("val_avg") is not None and p["val_avg"] >= target - 1e-9), None
    )
    out["reached_target"] = hit is not None
    if hit is not None:
        out |= {
            "steps_to_target": hit["total_env_steps"],
            "samples_to_target": hit["policy_samples"],
            "train_samples_to_target": hit["train_samples"],
        }
    return out
