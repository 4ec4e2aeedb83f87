"""The target a configuration is costed against, and what it cost to reach it (pure functions
over evaluation curves: ``[{"val_avg", "train_avg", "total_env_steps", "policy_samples",
"train_samples"}, ...]``).

Two yardsticks: ours, Val Avg@k (``split="val"``: does the saving generalise to new seeds of the
train templates), and the paper's, Train Avg@k on the tasks being trained (``split="train"``,
Figure 4 of the paper). Each target is the mean of Base->Vanilla's last evaluations on its split.
The Train target exists only for runs that evaluate ``train`` at every mark
(``eval.splits`` holds it): a curve with Train only at its end has no target on it.
"""

from __future__ import annotations

from typing import Any

TARGET_EVALS = 3
"""The target is the mean of this many last evaluations of Base->Vanilla."""
SPLITS = ("val", "train")
"""The splits a target is built on: ours (val) and the paper's (train)."""


def target_keys(split: str = "val") -> dict[str, str]:
    """The summary keys of the costs to a ``split`` target: ``reached``, ``steps``, ``samples``
    and ``train_samples`` -> ``reached_target``, ``steps_to_target``, ... for ``val`` (the keys
    every table reads) and ``reached_train_target``, ``steps_to_train_target``, ... for
    ``train``."""
    if split not in SPLITS:
        raise ValueError(f"a target is built on {' or '.join(SPLITS)}, not {split!r}")
    tag = "target" if split == "val" else f"{split}_target"
    return {
        "reached": f"reached_{tag}",
        "steps": f"steps_to_{tag}",
        "samples": f"samples_to_{tag}",
        "train_samples": f"train_samples_to_{tag}",
    }


def at_every_mark(curve: list[dict[str, Any]], split: str) -> bool:
    """Whether every evaluation of ``curve`` scored ``split`` (so that it has a learning curve
    there, not just a final score)."""
    return bool(curve) and all(p.get(f"{split}_avg") is not None for p in curve)


def vanilla_target(curve: list[dict[str, Any]], split: str = "val") -> float | None:
    """Mean ``split`` Avg@k of the last :data:`TARGET_EVALS` evaluations of a curve (fewer if it
    has fewer; None if it has none): one noisy evaluation is not a target. On ``train`` the
    curve must have evaluated it at every mark (:func:`at_every_mark`), else None."""
    if split != "val" and not at_every_mark(curve, split):
        return None
    key = f"{split}_avg"
    values = [p[key] for p in curve if p.get(key) is not None][-TARGET_EVALS:]
    return sum(values) / len(values) if values else None


def first_reaching(
    curve: list[dict[str, Any]], target: float | None, split: str = "val"
) -> dict[str, Any] | None:
    """The first evaluation of ``curve`` whose ``split`` Avg@k reaches ``target`` (None if none
    does or there is no target)."""
    if target is None:
        return None
    key = f"{split}_avg"
    return next((p for p in curve if p.get(key) is not None and p[key] >= target - 1e-9), None)


def target_costs(
    row: dict[str, Any], curve: list[dict[str, Any]], target: float | None, split: str = "val"
) -> dict[str, Any]:
    """Whether a configuration reached the ``split`` target and the costs (total env steps,
    policy samples, training samples) at its first evaluation reaching it, under the keys of
    :func:`target_keys`; all None without a target, the costs None when it never reached it. A
    ``train`` target is read only from a curve that evaluated train at every mark."""
    keys = target_keys(split)
    out: dict[str, Any] = dict.fromkeys(keys.values())
    if target is None or (split != "val" and not at_every_mark(curve, split)):
        return out
    points = curve or [{**row, "val_avg": row.get("val_avg4")}]
    hit = first_reaching(points, target, split)
    out[keys["reached"]] = hit is not None
    if hit is not None:
        out |= {
            keys["steps"]: hit["total_env_steps"],
            keys["samples"]: hit["policy_samples"],
            keys["train_samples"]: hit["train_samples"],
        }
    return out
