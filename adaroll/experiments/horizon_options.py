"""The horizon sweep's option rows (issue 40, item 7): each option variant's Base->Hybrid
against the same seed's Base->Vanilla (the saving) and against the default Base->Hybrid (the
promotion rule), cut at each budget of the sweep, to the Val target and to the Train target,
with the pilot's prediction and the share of its env steps that only measured (probes).

An option variant trains Base->Hybrid alone (``own_configurations``), from the seed's Base;
its targets are the default run's (Base->Vanilla's, within each cut), so every row of a cell is
paired with the same Vanilla and the same default Hybrid seed by seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from adaroll.experiments.claims import MIN_SEEDS
from adaroll.experiments.inputs import Inputs, markdown_table
from adaroll.experiments.profiles import OPTION_PILOT
from adaroll.experiments.stats import (
    Censored,
    bootstrap_ci,
    fmt_censored,
    fmt_interval,
    fmt_pct,
    paired_cost_difference,
    verdict,
)
from adaroll.experiments.variants import VARIANTS

DEFAULT_RUN = "own-run"
"""The variant whose runs train the default Base->Hybrid."""
NOT_OPTIONS = ("default", DEFAULT_RUN, "own-run-sft")
PROBE_KEYS = ("root/routing", "root/reeval")


def option_variants(x: Inputs) -> list[str]:
    """The option variants of the experiment whose runs are there for every seed."""
    return [
        v
        for v in x.exp.variants_for(x.profile)
        if v not in NOT_OPTIONS and all(s in x.summaries.get(v, {}) for s in x.seeds)
    ]


def probe_share(x: Inputs, variant: str) -> float | None:
    """The share of the variant's Base->Hybrid env steps spent on probes (routing pass and
    re-evaluation), over its whole run, pooled over seeds as the purpose table pools them (a
    seed that spent few env steps does not weigh as much as one that spent many); None for runs
    without the breakdown."""
    probes = total = 0
    for seed in x.seeds:
        by_key = x.summaries[variant][seed].get("purposes", {}).get("base_hybrid")
        if not by_key:
            return None
        total += sum(v["env_steps"] for v in by_key.values())
        probes += sum(by_key.get(k, {}).get("env_steps", 0) for k in PROBE_KEYS)
    return probes / total if total else None


def option_cell(
    x: Inputs, cell: Mapping[str, Any], variant: str, cut: Any, to_target: Any
) -> dict[str, Any]:
    """One option at one budget: per split (Val; Train when the runs evaluated it at the
    marks) the option's costs to the cell's targets, its saving against Vanilla and its paired
    difference against the default Hybrid (positive: the option is cheaper), with intervals,
    verdicts and the promotion rule; and its Val at the cut against the default's."""
    budget = cell["budget"]
    curves = [cut(x.curve(variant, s, "base_hybrid"), budget) for s in x.seeds]
    out: dict[str, Any] = {"variant": variant, "val_avg": [c[-1]["val_avg"] for c in curves]}
    for split in ("val", "train"):
        seeds = [s if split == "val" else s["train"] for s in cell["seeds"]]
        if any(s is None for s in seeds):
            out[split] = None
            continue
        costs, vs_vanilla, vs_default = [], [], []
        for seed, curve in zip(seeds, curves, strict=True):
            option = to_target(curve, seed["target"], split)
            vanilla = Censored(seed["vanilla"]["value"], seed["vanilla"]["budget"])
            default = Censored(seed["hybrid"]["value"], seed["hybrid"]["budget"])
            costs.append({"value": option.value, "budget": option.budget})
            vs_vanilla.append(paired_cost_difference(vanilla, option))
            vs_default.append(paired_cost_difference(default, option))
        saved, gained = bootstrap_ci(vs_vanilla), bootstrap_ci(vs_default)
        out[split] = {
            "costs": costs,
            "saved": saved,
            "saved_verdict": verdict(saved, +1),
            "vs_default": gained,
            "vs_default_verdict": verdict(gained, +1),
        }
    val_diff = bootstrap_ci(
        [a - s["val"]["hybrid"] for a, s in zip(out["val_avg"], cell["seeds"], strict=True)]
    )
    out["val_vs_default"] = val_diff
    out["promotion"] = _promotion(out, val_diff)
    return out


def _promotion(option: Mapping[str, Any], val_diff: Any) -> str:
    """The rule of docs/RESULTS.md on this cell: enough seeds, fewer total env steps to the Val
    target than the default Hybrid with an interval excluding zero, Val not worse."""
    val = option["val"]
    if val is None:
        return "-"
    if len(val["costs"]) < MIN_SEEDS["mobile"]:
        return "keep the default: too few seeds"
    if val["vs_default_verdict"] != "held":
        return "keep the default: no confident saving"
    if verdict(val_diff, +1) == "contradicted":
        return "keep the default: worse on val"
    return "promote"


def options_section(
    x: Inputs, cells: Sequence[Mapping[str, Any]], cut: Any, to_target: Any, bucket: str
) -> tuple[str, dict[str, Any]]:
    """The option rows of every cell as markdown, and their data (empty without option runs)."""
    variants = option_variants(x)
    if not variants:
        return "", {}
    data: dict[str, Any] = {}
    rows = []
    predictions = OPTION_PILOT.get(bucket, {})
    default_share = probe_share(x, DEFAULT_RUN) if DEFAULT_RUN in x.summaries else None
    for cell in cells:
        label = f"{cell['iterations']} ({cell['budget']:,})"
        rows.append(
            [
                label,
                "paper defaults",
                *_split_columns(None),
                *_split_columns(None),
                fmt_pct([s["val"]["hybrid"] for s in cell["seeds"]]),
                "-",
                _predicted(predictions.get("default"), cell["iterations"]),
                "-" if default_share is None else f"{100 * default_share:.0f}%",
            ]
        )
        for variant in variants:
            option = option_cell(x, cell, variant, cut, to_target)
            data.setdefault(variant, []).append(option)
            share = probe_share(x, variant)
            rows.append(
                [
                    label,
                    VARIANTS[variant].label,
                    *_split_columns(option["val"]),
                    *_split_columns(option["train"]),
                    fmt_pct(option["val_avg"]),
                    option["promotion"],
                    _predicted(predictions.get(variant), cell["iterations"]),
                    "-" if share is None else f"{100 * share:.0f}%",
                ]
            )
    header = [
        "budget: Vanilla iterations (env steps)",
        "Base->Hybrid",
        "Val target: total env steps (median)",
        "saved vs Vanilla [95% CI]",
        "verdict",
        "saved vs default Hybrid [95% CI]",
        "Train target: total env steps (median)",
        "saved vs Vanilla [95% CI]",
        "verdict",
        "saved vs default Hybrid [95% CI]",
        "Val Avg@4",
        "promotion rule (vs default Hybrid, Val target)",
        "predicted S(N)",
        "probes' share of env steps",
    ]
    note = (
        "Each option against the same seeds' Base->Vanilla (saved: Vanilla - option) and "
        "default Base->Hybrid (saved: default - option; positive when the option is cheaper), "
        "cut at each budget, to the Val and the Train target of the cell. Predicted: the "
        "routing pilot's S(30) (docs/results/pilots, committed before the runs); probes' share: "
        "routing pass and re-evaluation, over the whole run."
    )
    return f"{note}\n\n{markdown_table(header, rows)}\n\n", {"options": data}


def _split_columns(split: Mapping[str, Any] | None) -> list[str]:
    if split is None:
        return ["-"] * 4
    costs = [Censored(c["value"], c["budget"]) for c in split["costs"]]
    return [
        fmt_censored(costs),
        fmt_interval(split["saved"]),
        split["saved_verdict"],
        fmt_interval(split["vs_default"]),
    ]


def _predicted(prediction: float | None, iterations: int) -> str:
    return "-" if prediction is None or iterations != 30 else f"{100 * prediction:+.1f}%"
