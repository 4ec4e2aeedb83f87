"""Table 2 under the protocol: one-step RL (Stage I) from Base on each pivot signal, its selected
policy (Action, chosen on ``val``) scored on Train, Val and Held-Out, its pivots and its whole
bill, and the paper's comparisons judged by paired per-seed differences
(:data:`adaroll.experiments.claims.PIVOT_CLAIMS`), beside the paper's numbers.

A variant whose pivot set is empty for a seed trained nothing (the pipeline skips such a Stage
I, ``empty_pivots`` in its summary row): that seed is named, left out of the variant's means and
of every pair it is in. For the first seed, where the signals differ
(:mod:`adaroll.experiments.pivot_signals`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from adaroll.experiments import pivot_signals  # noqa: E402
from adaroll.experiments.claims import (  # noqa: E402
    CLOSE_MARGIN,
    MIN_SEEDS,
    PIVOT_CLAIMS,
    Claim,
    claims_table,
    judge,
)
from adaroll.experiments.inputs import Inputs, Section, analysis, markdown_table, save_figure  # noqa: E402
from adaroll.experiments.stats import fmt_count, fmt_interval, fmt_pct, mean_std  # noqa: E402
from adaroll.experiments.variants import VARIANTS  # noqa: E402

SPLITS = ("train", "val", "heldout")
SCORE_KEYS = tuple(f"{split}_{kind}4" for split in SPLITS for kind in ("avg", "pass"))

PAPER_ROWS: dict[str, dict[str, str]] = {
    "mobile": {
        "default": "48.83 / 62.50 (8.2K samples; Train 58.73 / 74.70)",
        "pivots-reward_variance": "45.70 / 60.16 (same budget)",
        "pivots-reward_variance-any": "45.70 / 60.16 (same budget)",
        "pivots-all-long": "50.00 / - (38.4K samples)",
    },
    "web": {
        "default": "52.08 / 61.67 (15.4K samples)",
        "pivots-reward_variance": "47.50 / 57.87 (14.3K samples)",
        "pivots-all": "47.08 / 60.00 (16.4K samples)",
    },
}
"""The paper's Held-Out Avg@4 / Pass@4 per signal (MobileGym for ``mobile``, CUA-Gym-Hub for
``web``; from the paper summary in the project's seed material). The summary gives no figure
for entropy or random pivots."""

VAL_COMPARISONS = tuple(
    Claim(
        c.key.replace("_avg4", "_val"),
        c.text.replace("Held-Out Avg@4", "Val Avg@4"),
        c.ours,
        c.theirs,
        "val_avg4",
        c.direction,
        margin=c.margin,
    )
    for c in PIVOT_CLAIMS
    if c.metric == "heldout_avg4"
)
"""The same pairs on Val Avg@4 (the split every choice reads; not a claim of the paper's)."""


def label(variant: str) -> str:
    return "action disagreement" if variant == "default" else VARIANTS[variant].label


def pivot_file(x: Inputs, variant: str, seed: int) -> dict[str, Any]:
    """Stage I's saved pivot set of a run (``pivots/stage1.json``)."""
    return dict(json.loads((x.run_dir(variant, seed) / "pivots" / "stage1.json").read_text()))


def fallback_tasks(saved: Mapping[str, Any]) -> int:
    """Tasks whose pivots all score at or below their gate: none passed it, so the task kept its
    highest-scoring checkpoints (``pivots.fallback_top_k``)."""
    scores, gates = saved["scores"], saved.get("thresholds", {})
    return sum(
        1
        for task, ids in saved["pivots"].items()
        if ids and task in gates and not any(scores[c] > gates[task] for c in ids)
    )


def is_empty(x: Inputs, variant: str, seed: int, saved: Mapping[str, Any]) -> bool:
    row = x.row(variant, seed, "action")
    return bool(row.get("empty_pivots")) or not any(saved["pivots"].values())


@analysis("pivots")
def table2(x: Inputs) -> Section:
    variants = x.exp.variants_for(x.profile)
    data: dict[str, dict[str, Any]] = {}
    for variant in variants:
        files = [pivot_file(x, variant, s) for s in x.seeds]
        empty = [s for s, f in zip(x.seeds, files, strict=True) if is_empty(x, variant, s, f)]
        rows = [
            {} if s in empty else x.row(variant, s, "action") for s in x.seeds
        ]  # an empty pivot set trained nothing: no scores
        base = [x.row(variant, s, "base") for s in x.seeds]
        d: dict[str, Any] = {k: [r.get(k) for r in rows] for k in SCORE_KEYS}
        d |= {
            "label": label(variant),
            "pivots": [sum(len(v) for v in f["pivots"].values()) for f in files],
            "checkpoints": [len(f["scores"]) for f in files],
            "fallback_tasks": [fallback_tasks(f) for f in files],
            "empty_seeds": empty,
            "policy_samples": [r.get("policy_samples") for r in rows],
            "scoring_samples": [r.get("scoring_samples") for r in rows],
            "stage1_train_samples": [
                r["train_samples"] - b["train_samples"] if r else None
                for r, b in zip(rows, base, strict=True)
            ],
            "total_env_steps": [r.get("total_env_steps") for r in rows],
            "optimizer_steps": [r.get("optimizer_steps") for r in rows],
        }
        data[variant] = d
    paired = [
        {v: x.row(v, s, "action") for v in variants if s not in data[v]["empty_seeds"]}
        for s in x.seeds
    ]
    claims_md, claims = claims_table(x.profile.env, paired, PIVOT_CLAIMS)
    val = [
        {"key": c.key, "text": c.text, **judge(c, paired)}
        for c in VAL_COMPARISONS
        if c.ours in variants and c.theirs in variants
    ]
    budget = _budget_share(data)
    plot = _plot(x, claims)
    signals = _signals(x)
    markdown = "\n\n".join(
        part
        for part in (
            _legend(x),
            _scores_table(x, data),
            _costs_table(data),
            _empty_note(data),
            "#### The paper's comparisons on these runs\n\n"
            "Paired per-seed differences (disagreement minus the other signal), 95% bootstrap "
            "interval of the mean; held / contradicted: the interval excludes zero in / against "
            "the paper's direction, inconclusive otherwise. A closeness claim is held when the "
            f"interval lies within +-{100 * CLOSE_MARGIN:.1f} points (`CLOSE_MARGIN`, fixed "
            'before the runs), contradicted when it lies outside; "close within m" is the '
            "smallest margin these seeds support.",
            _provisional(x, claims),
            claims_md,
            _val_table(val),
            _budget_sentence(budget),
            f"![{x.exp.title}]({plot})",
            signals.markdown,
        )
        if part
    )
    return Section(
        markdown + "\n",
        {"rows": data, "claims": claims, "val": val, "budget_share": budget, **signals.data},
    )


def _legend(x: Inputs) -> str:
    return (
        "One-step RL (Stage I) from Base on each signal's pivots; every signal trains the same "
        "iterations of the same number of OneStep groups (equal budget), except all checkpoints "
        "at 4.7x the iterations (the paper's All Pivots at 38.4K vs 8.2K samples). Action is "
        "Stage I's best policy on `val` (the paper selects on Train); Held-Out is evaluated "
        "after, only to report. Bills are whole: Base's and the pivot scoring's included."
    )


def _scores_table(x: Inputs, data: Mapping[str, Mapping[str, Any]]) -> str:
    paper = PAPER_ROWS.get(x.profile.env, {})
    rows = [
        [
            d["label"],
            fmt_count(d["pivots"]),
            fmt_count(d["fallback_tasks"]),
            *(fmt_pct(d[k]) for k in SCORE_KEYS),
            paper.get(variant, "-"),
        ]
        for variant, d in data.items()
    ]
    return markdown_table(
        [
            "pivot signal",
            "pivots",
            "tasks on fallback",
            "Train Avg@4",
            "Train Pass@4",
            "Val Avg@4",
            "Val Pass@4",
            "Held-Out Avg@4",
            "Held-Out Pass@4",
            "paper Held-Out Avg@4 / Pass@4",
        ],
        rows,
    )


def _costs_table(data: Mapping[str, Mapping[str, Any]]) -> str:
    rows = [
        [
            d["label"],
            fmt_count(d["policy_samples"]),
            fmt_count(d["scoring_samples"]),
            fmt_count(d["stage1_train_samples"]),
            fmt_count(d["total_env_steps"]),
            fmt_count(d["optimizer_steps"]),
        ]
        for d in data.values()
    ]
    return markdown_table(
        [
            "pivot signal",
            "policy samples (whole bill)",
            "of which pivot scoring",
            "Stage I training samples",
            "total env steps (whole bill)",
            "Stage I optimizer steps",
        ],
        rows,
    )


def _empty_note(data: Mapping[str, Mapping[str, Any]]) -> str:
    empty = {v: d["empty_seeds"] for v, d in data.items() if d["empty_seeds"]}
    if not empty:
        return "No signal left a seed with an empty pivot set."
    return "Empty pivot sets (Stage I had nothing to train on and was skipped; these seeds are " + (
        "left out of the means and the pairs): "
        + "; ".join(
            f"{data[v]['label']}: seed(s) {', '.join(map(str, s))}" for v, s in empty.items()
        )
        + "."
    )


def _provisional(x: Inputs, claims: Sequence[Mapping[str, Any]]) -> str:
    """A warning when the verdicts rest on fewer seeds than a headline claim needs."""
    needed = MIN_SEEDS.get(x.profile.env, 10)
    fewest = min((c["seeds"] for c in claims), default=0)
    if fewest >= needed:
        return ""
    return (
        f"**Provisional:** {fewest} paired seed(s), fewer than the {needed} a headline claim "
        f"needs on `{x.profile.env}`; an interval of one seed is that seed's difference."
    )


def _val_table(val: Sequence[Mapping[str, Any]]) -> str:
    if not val:
        return ""
    rows = [
        [
            c["text"],
            fmt_interval(c["interval"], scale=100, unit=" pts"),
            str(c["seeds"]),
            c["verdict"],
        ]
        for c in val
    ]
    return "The same pairs on Val Avg@4 (the split selection reads):\n\n" + markdown_table(
        ["comparison", "mean paired difference [95% CI]", "seeds", "verdict"], rows
    )


def _budget_share(data: Mapping[str, Mapping[str, Any]]) -> float | None:
    """Disagreement's whole-bill policy samples as a share of all checkpoints' at its own
    budget (mean over the seeds both have; the paper's 21% = 8.2K / 38.4K)."""
    ours, theirs = data.get("default"), data.get("pivots-all-long")
    if ours is None or theirs is None:
        return None
    shares = [
        a / b
        for a, b in zip(ours["policy_samples"], theirs["policy_samples"], strict=True)
        if a is not None and b
    ]
    return mean_std(shares)[0]


def _budget_sentence(share: float | None) -> str:
    if share is None:
        return ""
    return (
        f"Disagreement's whole bill is {100 * share:.0f}% of the policy samples of all "
        "checkpoints at its own budget (the paper: 21%, 8.2K of 38.4K)."
    )


def _plot(x: Inputs, claims: Sequence[Mapping[str, Any]]) -> str:
    """Per comparison, the per-seed paired Held-Out Avg@4 differences and their interval."""
    shown = [c for c in claims if c["metric"] == "heldout_avg4"]
    fig, ax = plt.subplots(figsize=(8, 0.8 + 0.7 * max(len(shown), 1)))
    for i, c in enumerate(shown):
        ax.scatter(
            [100 * d for d in c["differences"]], [i] * len(c["differences"]), s=14, alpha=0.6
        )
        if c["interval"] is not None:
            mean, low, high = (100 * v for v in c["interval"])
            ax.plot([low, high], [i, i], color="k", lw=2)
            ax.plot([mean], [i], "k|", ms=14)
    ax.axvline(0, color="grey", lw=0.8)
    for edge in (-CLOSE_MARGIN, CLOSE_MARGIN):
        ax.axvline(100 * edge, color="grey", lw=0.6, ls=":")
    ax.set_yticks(range(len(shown)), [c["text"].split(": ", 1)[1] for c in shown], fontsize=7)
    ax.set_xlabel("Held-Out Avg@4: disagreement minus the other signal (points; per seed, 95% CI)")
    return save_figure(fig, x.out / "table2.png")


def _signals(x: Inputs) -> Section:
    """Where the signals differ, on the first seed (its default run scores every signal)."""
    seed = x.seeds[0]
    result = pivot_signals.measure(x.run_dir("default", seed), say=lambda _: None)
    summary = pivot_signals.write(result, x.out)
    body = (x.out / "signals.md").read_text()
    return Section(f"#### Where the signals differ (seed {seed})\n\n{body}", {"signals": summary})
