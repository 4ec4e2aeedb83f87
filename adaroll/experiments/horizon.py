"""The horizon sweep (issue 28): on one horizon bucket, Base->Vanilla against Base->Hybrid at
each budget of :data:`~adaroll.experiments.profiles.HORIZON_SWEEP`, the measured saving beside the
saving the train-split pilot predicted before the runs, and SFT and SFT->Vanilla against the same
targets.

Every budget is read from the same runs per seed, trained at the largest budget: a phase's
first b env steps, and the Val evaluations it makes on the way, do not depend on its budget
(each iteration and each evaluation is seeded by its own index;
tests/experiments/test_horizon.py checks a run against a shorter one). A budget's cut keeps the
evaluations up to the one at which a phase with that budget would have stopped.
"""

from __future__ import annotations

import json
from typing import Any

import matplotlib.pyplot as plt

from adaroll.algos.targets import at_every_mark, vanilla_target
from adaroll.config import load_config
from adaroll.experiments.horizon_options import options_section
from adaroll.experiments.inputs import Inputs, Section, analysis, markdown_table, save_figure
from adaroll.experiments.profiles import (
    HORIZON_BUCKETS,
    HORIZON_PILOT,
    HORIZON_SWEEP,
    horizon_budget,
)
from adaroll.experiments.stats import (
    Censored,
    bootstrap_ci,
    bootstrap_ratio_ci,
    cost_to_reach,
    fmt_censored,
    fmt_count,
    fmt_interval,
    fmt_pct,
    paired_cost_difference,
    verdict,
)
from adaroll.jsonl import read_jsonl

HYBRID_RUN = "own-run"
"""The variant whose runs train Base->Hybrid (the default runs train Base->Vanilla)."""
SIDES = ("vanilla", "hybrid")
"""The two phases a cell compares, in the order its columns list them."""
SFT_RUN = "own-run-sft"
"""The variant whose runs train SFT and SFT->Vanilla."""


def cut_at_budget(curve: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    """The evaluations a phase with RL budget ``budget`` (env steps and policy samples alike)
    would have made: those up to the first whose phase spend reaches the budget, where that
    phase would have stopped. A curve that never reaches it is a run shorter than the budget."""
    samples_before = curve[0]["policy_samples"]  # the iteration-0 point: nothing spent yet
    for i, point in enumerate(curve):
        spent = max(point["phase_env_steps"], point["policy_samples"] - samples_before)
        if spent >= budget:
            return curve[: i + 1]
    raise ValueError(
        f"the run stopped at {curve[-1]['phase_env_steps']:,} phase env steps, before the "
        f"budget of {budget:,} it is read at"
    )


def to_target(curve: list[dict[str, Any]], target: float | None, split: str = "val") -> Censored:
    """Total env steps at the first evaluation whose ``split`` Avg@4 reaches ``target``,
    censored at the bill of the curve's last evaluation when none does."""
    return Censored(cost_to_reach(curve, target, split)[0], curve[-1]["total_env_steps"])


def _paired(v: Censored, h: Censored) -> tuple[float, float]:
    """Vanilla - Hybrid (a censored side at the larger budget of the pair) and Vanilla's cost in
    the same convention (the denominator of the saved fraction)."""
    return paired_cost_difference(v, h), max(v.budget, h.budget) if v.censored else v.observed


def train_yardstick(
    vanilla: list[dict[str, Any]], hybrid: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The paper's yardstick on one seed's cut curves: the Train target (mean of Vanilla's last
    three Train Avg@4 within the cut), each side's cost to it and the paired saving; None when
    either run did not evaluate train at its marks."""
    target = vanilla_target(vanilla, "train")
    if target is None or not at_every_mark(hybrid, "train"):
        return None
    v, h = to_target(vanilla, target, "train"), to_target(hybrid, target, "train")
    saved, vanilla_cost = _paired(v, h)
    return {
        "target": target,
        "vanilla": {"value": v.value, "budget": v.budget},
        "hybrid": {"value": h.value, "budget": h.budget},
        "saved": saved,
        "vanilla_cost": vanilla_cost,
    }


def yardstick_summary(seeds: list[dict[str, Any]]) -> dict[str, Any]:
    """The paired saving over seeds (mean, 95% interval), its share of Vanilla's mean cost and
    the verdict on the paper's direction (Hybrid cheaper: held)."""
    saved = bootstrap_ci([s["saved"] for s in seeds])
    return {
        "saved": saved,
        "saved_fraction": bootstrap_ratio_ci(
            [s["saved"] for s in seeds], [s["vanilla_cost"] for s in seeds]
        ),
        "verdict": verdict(saved, +1),
    }


def bucket_of(x: Inputs) -> str:
    return next(b for b, bounds in HORIZON_BUCKETS.items() if bounds == x.profile.bucket)


def sweep_budgets(x: Inputs) -> dict[int, int]:
    """The RL budget of each cell of the sweep; under ``--quick`` the same fractions of the
    quick run's tiny budget, in whole marks, so that a smoke run exercises every cell."""
    bucket = bucket_of(x)
    if not x.quick:
        return {n: horizon_budget(bucket, n) for n in HORIZON_SWEEP}
    cfg = load_config(None, [*x.profile.overrides, *x.profile.quick])
    budget, mark = cfg.rl.budget.env_steps, cfg.rl.eval.every_env_steps
    assert budget is not None and mark is not None
    return {n: mark * max(1, round(budget / mark * n / max(HORIZON_SWEEP))) for n in HORIZON_SWEEP}


def optimizer_steps_at(
    x: Inputs, variant: str, seed: int, phase: str, iteration: int
) -> int | None:
    """The phase's optimizer steps after ``iteration`` (its metrics.jsonl; None without it)."""
    path = x.run_dir(variant, seed) / phase / "metrics.jsonl"
    if not path.exists():
        return None
    records, _ = read_jsonl(path)
    return max(
        (
            r.get("optimizer_steps", 0)
            for r in records
            if r.get("kind") == "iteration" and r["iteration"] <= iteration
        ),
        default=0,
    )


def budget_cell(x: Inputs, iterations: int, budget: int) -> dict[str, Any]:
    """Per seed, both configurations cut at ``budget`` (about ``iterations`` Vanilla
    iterations): the target within it, the costs to reach it, the paired saving and the scores
    at the cut."""
    seeds: list[dict[str, Any]] = []
    for seed in x.seeds:
        vanilla = cut_at_budget(x.curve("default", seed, "base_vanilla"), budget)
        hybrid = cut_at_budget(x.curve(HYBRID_RUN, seed, "base_hybrid"), budget)
        target = vanilla_target(vanilla)
        v, h = to_target(vanilla, target), to_target(hybrid, target)
        saved, vanilla_cost = _paired(v, h)
        seeds.append(
            {
                "seed": seed,
                "target": target,
                "vanilla": {"value": v.value, "budget": v.budget},
                "hybrid": {"value": h.value, "budget": h.budget},
                "saved": saved,
                "vanilla_cost": vanilla_cost,
                "train": train_yardstick(vanilla, hybrid),
                "vanilla_iterations": vanilla[-1]["iteration"],
                "optimizer_steps": {
                    "vanilla": optimizer_steps_at(
                        x, "default", seed, "base_vanilla", vanilla[-1]["iteration"]
                    ),
                    "hybrid": optimizer_steps_at(
                        x, HYBRID_RUN, seed, "base_hybrid", hybrid[-1]["iteration"]
                    ),
                },
                "val": {"vanilla": vanilla[-1]["val_avg"], "hybrid": hybrid[-1]["val_avg"]},
                "val_start": {"vanilla": vanilla[0]["val_avg"], "hybrid": hybrid[0]["val_avg"]},
                "heldout": {
                    "vanilla": vanilla[-1].get("heldout_avg"),
                    "hybrid": hybrid[-1].get("heldout_avg"),
                },
            }
        )
    trained = [s["train"] for s in seeds if s["train"] is not None]
    return {
        "iterations": iterations,
        "budget": budget,
        "imitation": _imitation_cell(x, budget, seeds),
        "predicted_saving": HORIZON_PILOT[bucket_of(x)][1].get(iterations),
        **yardstick_summary(seeds),
        "target_margin": target_margin(seeds),
        "train": yardstick_summary(trained) if len(trained) == len(seeds) else None,
        "seeds": seeds,
    }


def target_margin(seeds: list[dict[str, Any]]) -> tuple[float, float, float] | None:
    """How far the target lies above Base->Vanilla's own iteration-0 evaluation (the same Base,
    evaluated again at the phase's start), mean and 95% interval over the seeds: an interval
    that reaches zero means the target is within the evaluation noise of where Vanilla started,
    so "the cost to reach it" reads which evaluation happened to land above it, not learning."""
    return bootstrap_ci(
        [s["target"] - s["val_start"]["vanilla"] for s in seeds if s["target"] is not None]
    )


def noise_level_target(cell: dict[str, Any]) -> bool:
    """The cell's target is not clearly above Vanilla's start (see :func:`target_margin`)."""
    margin = cell.get("target_margin")
    return margin is None or margin[1] <= 0


def _imitation_cell(x: Inputs, budget: int, paired: list[dict[str, Any]]) -> dict[str, Any] | None:
    """SFT and SFT->Vanilla against the same seed's Base->Vanilla target within ``budget``:
    the cost to reach it (SFT's whole bill when its Val is already there) and Val at the cut;
    None when the sweep's SFT runs were not trained."""
    runs = x.summaries.get(SFT_RUN, {})
    if not all(s in runs for s in x.seeds):
        return None
    seeds: list[dict[str, Any]] = []
    for seed, base_run in zip(x.seeds, paired, strict=True):
        target, sft = base_run["target"], x.row(SFT_RUN, seed, "sft")
        rl = cut_at_budget(x.curve(SFT_RUN, seed, "sft_vanilla"), budget)
        reached = target is not None and sft["val_avg4"] >= target - 1e-9
        v = Censored(base_run["vanilla"]["value"], base_run["vanilla"]["budget"])
        then_rl = to_target(rl, target)
        seeds.append(
            {
                "seed": seed,
                "sft": {
                    "value": sft["total_env_steps"] if reached else None,
                    "budget": sft["total_env_steps"],
                    "val": sft["val_avg4"],
                },
                "sft_vanilla": {
                    "value": then_rl.value,
                    "budget": then_rl.budget,
                    "val": rl[-1]["val_avg"],
                },
                "saved": paired_cost_difference(v, then_rl),
            }
        )
    return {"seeds": seeds, "saved": bootstrap_ci([s["saved"] for s in seeds])}


@analysis("horizon")
def horizon(x: Inputs) -> Section:
    bucket = bucket_of(x)
    cells = [budget_cell(x, n, budget) for n, budget in sweep_budgets(x).items()]
    rows = []
    for cell in cells:
        seeds = cell["seeds"]
        costs = {
            side: [Censored(s[side]["value"], s[side]["budget"]) for s in seeds] for side in SIDES
        }
        predicted = cell["predicted_saving"]
        rows.append(
            [
                f"{cell['iterations']} ({cell['budget']:,}){' *' if noise_level_target(cell) else ''}",
                fmt_count([s["vanilla_iterations"] for s in seeds]),
                *(_count([s["optimizer_steps"][side] for s in seeds]) for side in SIDES),
                fmt_interval(cell["target_margin"], scale=100),
                fmt_censored(costs["vanilla"]),
                fmt_censored(costs["hybrid"]),
                fmt_interval(cell["saved"]),
                fmt_interval(cell["saved_fraction"], scale=100, unit="%"),
                cell["verdict"],
                *_train_columns(cell),
                "-" if predicted is None else f"{100 * predicted:+.1f}%",
                *(fmt_pct([s["val"][side] for s in seeds]) for side in SIDES),
                *(fmt_pct([s["heldout"][side] for s in seeds]) for side in SIDES),
            ]
        )
    table = markdown_table(
        [
            "budget: Vanilla iterations (env steps)",
            "Vanilla's iterations made",
            "optimizer steps made: Vanilla",
            "Hybrid",
            "target above Vanilla's iteration-0 Val, pts [95% CI]",
            "Base->Vanilla total env steps to target (median)",
            "Base->Hybrid (median)",
            "saved: Vanilla - Hybrid [95% CI]",
            "saved, fraction of Vanilla's mean [95% CI]",
            "verdict",
            "Train target (paper's yardstick): Vanilla (median)",
            "Hybrid (median)",
            "saved to Train target [95% CI]",
            "fraction [95% CI]",
            "verdict",
            "predicted S(N)",
            "Val Avg@4 Vanilla",
            "Val Avg@4 Hybrid",
            "Held-Out Avg@4 Vanilla",
            "Held-Out Avg@4 Hybrid",
        ],
        rows,
    )
    if any(noise_level_target(cell) for cell in cells):
        table += (
            "\n\n\\* The target is not clearly above Base->Vanilla's own iteration-0 evaluation "
            "(its interval reaches zero): the cost to reach it reads evaluation noise, not "
            "learning, and so does the saving."
        )
    imitation = _imitation_table(cells)
    teaching = _teaching_table(cells)
    options, option_data = options_section(x, cells, cut_at_budget, to_target, bucket)
    plot = save_figure(_figure(bucket, cells), x.out / "saving.png")
    by_bucket = {**_sibling_cells(x), bucket: cells}
    by_horizon = save_figure(_horizon_figure(by_bucket), x.out / "saving_by_horizon.png")
    note = (
        f"Bucket {bucket} ({HORIZON_BUCKETS[bucket][0]} < expert steps <= "
        f"{HORIZON_BUCKETS[bucket][1]}); one Vanilla iteration costs "
        f"{HORIZON_PILOT[bucket][0]:,} env steps in the pilot. Held-Out is evaluated at the "
        "end of the runs only, so only the largest budget has it."
    )
    return Section(
        f"{note}\n\n{table}\n\n{options}{teaching}{imitation}![saving by budget]({plot})\n\n"
        f"The buckets whose sweep is under the same root "
        f"({', '.join(b for b in HORIZON_BUCKETS if b in by_bucket)}):\n\n"
        f"![saving by horizon]({by_horizon})\n",
        {"bucket": bucket, "cells": cells, **option_data},
    )


def _train_columns(cell: dict[str, Any]) -> list[str]:
    """The Train-target columns of a cell's row; "-" when its runs have no Train evaluations at
    the marks."""
    if cell.get("train") is None:
        return ["-"] * 5
    seeds = [s["train"] for s in cell["seeds"]]
    return [
        *(fmt_censored([Censored(s[k]["value"], s[k]["budget"]) for s in seeds]) for k in SIDES),
        fmt_interval(cell["train"]["saved"]),
        fmt_interval(cell["train"]["saved_fraction"], scale=100, unit="%"),
        cell["train"]["verdict"],
    ]


def _teaching_table(cells: list[dict[str, Any]]) -> str:
    """What an optimizer step teaches in each phase: the Val Avg@4 gained from the phase's own
    iteration-0 evaluation to the cut, per 100 optimizer steps (ratio of the seeds' sums) - the
    learning the cost model assumes equal for Vanilla and Hybrid. Empty without the runs'
    metrics."""
    if any(s["optimizer_steps"][side] is None for c in cells for s in c["seeds"] for side in SIDES):
        return ""
    rows = []
    for cell in cells:
        seeds, row = cell["seeds"], [f"{cell['iterations']} ({cell['budget']:,})"]
        for side in SIDES:
            gain = sum(s["val"][side] - s["val_start"][side] for s in seeds)
            steps = sum(s["optimizer_steps"][side] for s in seeds)
            row += [
                f"{100 * gain / len(seeds):+.2f}",
                f"{steps / len(seeds):.0f}",
                "-" if not steps else f"{100 * 100 * gain / steps:+.2f}",
            ]
        rows.append(row)
    header = [
        "budget: Vanilla iterations (env steps)",
        "Vanilla: Val gain (pts, mean)",
        "optimizer steps (mean)",
        "Val pts per 100 steps",
        "Hybrid: Val gain (pts, mean)",
        "optimizer steps (mean)",
        "Val pts per 100 steps",
    ]
    return (
        "What an update teaches (Val Avg@4 from each phase's own iteration-0 evaluation to the "
        "cut; the cost model assumes a Hybrid update teaches as much as a Vanilla one):\n\n"
        + markdown_table(header, rows)
        + "\n\n"
    )


def _count(values: list[int | None]) -> str:
    return "-" if None in values else fmt_count(values)


def _imitation_table(cells: list[dict[str, Any]]) -> str:
    """SFT and SFT->Vanilla beside the same target, or a line saying they were not trained."""
    if any(c["imitation"] is None for c in cells):
        return "SFT and SFT->Vanilla: not trained in these runs.\n\n"
    rows = []
    for cell in cells:
        seeds = cell["imitation"]["seeds"]
        rows.append(
            [
                f"{cell['iterations']} ({cell['budget']:,})",
                *(
                    fmt_censored([Censored(s[k]["value"], s[k]["budget"]) for s in seeds])
                    for k in ("sft", "sft_vanilla")
                ),
                fmt_interval(cell["imitation"]["saved"]),
                *(fmt_pct([s[k]["val"] for s in seeds]) for k in ("sft", "sft_vanilla")),
            ]
        )
    header = [
        "budget: Vanilla iterations (env steps)",
        "SFT total env steps to target (median)",
        "SFT->Vanilla (median)",
        "saved by SFT->Vanilla vs Base->Vanilla [95% CI]",
        "Val Avg@4 SFT",
        "Val Avg@4 SFT->Vanilla",
    ]
    return "Imitation first, against the same targets:\n\n" + markdown_table(header, rows) + "\n\n"


def _figure(bucket: str, cells: list[dict[str, Any]]) -> Any:
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    xs = [c["iterations"] for c in cells]
    measured = [c["saved_fraction"] for c in cells]
    ax.errorbar(
        xs,
        [100 * m[0] for m in measured],
        yerr=[[100 * (m[0] - m[1]) for m in measured], [100 * (m[2] - m[0]) for m in measured]],
        fmt="o-",
        capsize=4,
        label="measured (mean, 95% CI)",
    )
    predicted = [(c["iterations"], c["predicted_saving"]) for c in cells]
    ax.plot(
        [n for n, p in predicted if p is not None],
        [100 * p for _, p in predicted if p is not None],
        "s--",
        label="predicted by the pilot",
    )
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xscale("log")
    ax.set_xticks(xs, [str(n) for n in xs])
    ax.set_xlabel("budget (Base->Vanilla iterations)")
    ax.set_ylabel("env steps saved to the target (%)")
    ax.set_title(f"Base->Hybrid vs Base->Vanilla, mobile-{bucket}")
    ax.legend(fontsize=8)
    return fig


def _sibling_cells(x: Inputs) -> dict[str, list[dict[str, Any]]]:
    """The cells of the other buckets' sweeps written under the same root (their results.json)."""
    found = {}
    for bucket in HORIZON_BUCKETS:
        path = x.home.parent / f"mobile-{bucket}{'-quick' if x.quick else ''}" / "horizon"
        if path != x.out and (path / "results.json").exists():
            found[bucket] = json.loads((path / "results.json").read_text())["cells"]
    return found


def _horizon_figure(by_bucket: dict[str, list[dict[str, Any]]]) -> Any:
    """Measured saving (mean, 95% CI) and the pilot's prediction against the horizon bucket,
    one colour per budget of the sweep."""
    buckets = [b for b in HORIZON_BUCKETS if b in by_bucket]
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for k, iterations in enumerate(HORIZON_SWEEP):
        colour = f"C{k}"
        points = [
            (i, cell)
            for i, b in enumerate(buckets)
            for cell in by_bucket[b]
            if cell["iterations"] == iterations
        ]
        xs = [i + 0.08 * (k - (len(HORIZON_SWEEP) - 1) / 2) for i, _ in points]
        measured = [c["saved_fraction"] for _, c in points]
        ax.errorbar(
            xs,
            [100 * m[0] for m in measured],
            yerr=[
                [100 * (m[0] - m[1]) for m in measured],
                [100 * (m[2] - m[0]) for m in measured],
            ],
            fmt="o",
            color=colour,
            capsize=4,
            label=f"{iterations} iterations: measured",
        )
        ax.plot(
            xs,
            [100 * (c["predicted_saving"] or 0) for _, c in points],
            "s--",
            color=colour,
            mfc="none",
            label=f"{iterations} iterations: predicted",
        )
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xticks(range(len(buckets)), [f"{b}" for b in buckets])
    ax.set_xlabel("horizon bucket (mean expert steps)")
    ax.set_ylabel("env steps saved to the target (%)")
    ax.set_title("Base->Hybrid vs Base->Vanilla by horizon")
    ax.legend(fontsize=7)
    return fig
