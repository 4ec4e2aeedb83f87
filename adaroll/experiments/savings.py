"""Predicted next to measured savings, per Hybrid configuration and its Vanilla pair.

The prediction is each run's own cost model (``summary.json`` ``cost_model.savings``: S(N) at
the updating iterations N its Vanilla needed to first cross the target, priced with the run's
measured per-iteration costs); the measurement is the paired difference of total env steps to
the target (Vanilla - Hybrid: positive when Hybrid saves), a run that never reached the target
counted at the larger budget of its pair. Both are shown as means over seeds with 95% bootstrap
intervals, so a reader sees at once whether the model's saving was there to be measured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from adaroll.experiments.stats import (
    Censored,
    bootstrap_ci,
    fmt_interval,
    mean_std,
    paired_cost_difference,
)
from adaroll.training.cost_report import HYBRID_PAIRS

HEADER = (
    "Hybrid vs Vanilla",
    "seeds",
    "Vanilla's updating iterations to the target",
    "predicted S(N)",
    "predicted env steps saved",
    "measured env steps saved (Vanilla - Hybrid)",
    "measured, fraction of Vanilla's",
)


def _to_target(row: Mapping[str, Any]) -> Censored:
    reached = row.get("reached_target")
    return Censored(row["steps_to_target"] if reached else None, row["total_env_steps"])


def saving_rows(
    summaries: Sequence[Mapping[str, Any]], labels: Mapping[str, str]
) -> list[list[str]]:
    """One row per Hybrid configuration present in every summary (one summary per seed)."""
    rows = []
    for hybrid, vanilla in HYBRID_PAIRS.items():
        seeds = [
            s
            for s in summaries
            if hybrid in s.get("cost_model", {}).get("savings", {})
            and vanilla in s.get("configurations", {})
        ]
        if not seeds:
            continue
        updates, fractions, predicted, measured, measured_fraction = [], [], [], [], []
        for s in seeds:
            model = s["cost_model"]
            entry = model["savings"][hybrid]
            per_iteration = model["phases"][vanilla]["predicted_per_iteration"]
            updates.append(entry["updates"])
            fractions.append(entry["predicted_saving"])
            predicted.append(entry["predicted_saving"] * entry["updates"] * per_iteration)
            v = _to_target(s["configurations"][vanilla])
            h = _to_target(s["configurations"][hybrid])
            saved = paired_cost_difference(v, h)
            measured.append(saved)
            measured_fraction.append(
                saved / (max(v.budget, h.budget) if v.censored else v.observed)
            )
        mean_updates, sd_updates, _ = mean_std(updates)
        rows.append(
            [
                f"{labels.get(hybrid, hybrid)} vs {labels.get(vanilla, vanilla)}",
                str(len(seeds)),
                f"{mean_updates:.1f} ± {sd_updates or 0:.1f}",
                fmt_interval(bootstrap_ci(fractions), scale=100.0, unit="%"),
                fmt_interval(bootstrap_ci(predicted)),
                fmt_interval(bootstrap_ci(measured)),
                fmt_interval(bootstrap_ci(measured_fraction), scale=100.0, unit="%"),
            ]
        )
    return rows
