"""The paper's claims, judged on our runs: paired per-seed differences, bootstrap intervals and
three-way verdicts (:mod:`adaroll.experiments.stats`).

Each claim compares two configurations of the same seeds (the ``default`` variant's runs of
the ``full`` experiment) on a score (Held-Out Avg@4, reported after every decision) or on a
cost to the target (the whole bill at the first evaluation reaching the mean of Base->Vanilla's
last three Val Avg@4; a run that never reached it is censored at its budget).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from adaroll.algos.targets import target_keys
from adaroll.experiments.stats import (
    Censored,
    bootstrap_ci,
    censored_median,
    closeness,
    equivalence,
    fmt_interval,
    paired_cost_difference,
    verdict,
)


@dataclass(frozen=True)
class Claim:
    key: str
    """Key of the paper's figure in :data:`PAPER`."""
    text: str
    ours: str
    theirs: str
    metric: str
    """A score key of summary rows (``heldout_avg4``), or ``total_env_steps`` / ``train_samples``
    for the cost to reach the target in that unit."""
    direction: int
    """+1: the paper says ours - theirs > 0; -1: < 0 (a cost saving)."""
    theirs_metric: str | None = None
    """The score read from ``theirs`` when it is not ``metric``: a phase against its own start
    (``start_val_avg4``, added by :func:`with_phase_starts`)."""
    margin: float | None = None
    """Set for a claim that ours is *close to* theirs (``direction`` unused): held when the
    interval of the difference lies within +-margin (:func:`~adaroll.experiments.stats.equivalence`)."""
    target: str = "val"
    """Cost claims: the split whose target is reached - ``val`` (ours) or ``train`` (the
    paper's yardstick, :mod:`adaroll.algos.targets`)."""

    @property
    def is_cost(self) -> bool:
        return self.metric in COST_TO_TARGET

    def cost_key(self) -> str:
        """The summary key holding the cost at which the claim's target was first reached."""
        return target_keys(self.target)[COST_TO_TARGET[self.metric]]


COST_TO_TARGET = {"total_env_steps": "steps", "train_samples": "train_samples"}
"""Cost unit -> which cost of :func:`~adaroll.algos.targets.target_keys` it is."""

CLAIMS = (
    # not the paper's: whether RL moved the policy at all, on val (an efficiency claim measured
    # where it did not reads demonstration bills, not learning)
    Claim(
        "rl_moves_val",
        "Val Avg@4: Base->Vanilla above Base (RL moves the policy)",
        "base_vanilla",
        "base",
        "val_avg4",
        +1,
    ),
    # the same question against the phase's own iteration-0 evaluation of Base: two evaluations
    # of one policy differ (on the web by several points), so the pair above can mistake
    # evaluation noise for learning
    Claim(
        "rl_moves_val_own_start",
        "Val Avg@4: Base->Vanilla above its own iteration-0 evaluation",
        "base_vanilla",
        "base_vanilla",
        "val_avg4",
        +1,
        theirs_metric="start_val_avg4",
    ),
    Claim(
        "efficiency_steps",
        "Base->Hybrid reaches the target with fewer total env steps than Base->Vanilla",
        "base_hybrid",
        "base_vanilla",
        "total_env_steps",
        -1,
    ),
    Claim(
        "efficiency_samples",
        "Base->Hybrid reaches the target with fewer training samples than Base->Vanilla",
        "base_hybrid",
        "base_vanilla",
        "train_samples",
        -1,
    ),
    # the same two claims by the paper's yardstick: the target on Train Avg@4, on the tasks
    # being trained (Figure 4 of the paper); "-" for runs without Train evaluations at the marks
    Claim(
        "efficiency_steps_train",
        "Base->Hybrid reaches the Train target with fewer total env steps than Base->Vanilla",
        "base_hybrid",
        "base_vanilla",
        "total_env_steps",
        -1,
        target="train",
    ),
    Claim(
        "efficiency_samples_train",
        "Base->Hybrid reaches the Train target with fewer training samples than Base->Vanilla",
        "base_hybrid",
        "base_vanilla",
        "train_samples",
        -1,
        target="train",
    ),
    Claim(
        "full_env_steps",
        "Action->Hybrid reaches the target with fewer total env steps than Base->Vanilla",
        "action_hybrid",
        "base_vanilla",
        "total_env_steps",
        -1,
    ),
    Claim(
        "heldout_vs_base_vanilla",
        "Held-Out Avg@4: Action->Hybrid above Base->Vanilla",
        "action_hybrid",
        "base_vanilla",
        "heldout_avg4",
        +1,
    ),
    Claim(
        "heldout_vs_base",
        "Held-Out Avg@4: Action->Hybrid above Base",
        "action_hybrid",
        "base",
        "heldout_avg4",
        +1,
    ),
    Claim(
        "heldout_vs_sft",
        "Held-Out Avg@4: Action->Hybrid above SFT",
        "action_hybrid",
        "sft",
        "heldout_avg4",
        +1,
    ),
    Claim(
        "action_vs_base",
        "Held-Out Avg@4: Action (Stage I) above Base",
        "action",
        "base",
        "heldout_avg4",
        +1,
    ),
    Claim(
        "routing_vs_onestep",
        "Held-Out Avg@4: Base->Hybrid above one-step-only training (Base->OneStep)",
        "base_hybrid",
        "base_onestep",
        "heldout_avg4",
        +1,
    ),
    Claim(
        "sft_hybrid_vs_vanilla",
        "Held-Out Avg@4: SFT->Hybrid above SFT->Vanilla",
        "sft_hybrid",
        "sft_vanilla",
        "heldout_avg4",
        +1,
    ),
    Claim(
        "base_hybrid_vs_base_vanilla",
        "Held-Out Avg@4: Base->Hybrid above Base->Vanilla",
        "base_hybrid",
        "base_vanilla",
        "heldout_avg4",
        +1,
    ),
    Claim(
        "base_hybrid_vs_sft",
        "Held-Out Avg@4: Base->Hybrid (RL from Base) above SFT",
        "base_hybrid",
        "sft",
        "heldout_avg4",
        +1,
    ),
    Claim(
        "rl_after_sft",
        "Held-Out Avg@4: SFT->Vanilla (RL after imitation) above SFT",
        "sft_vanilla",
        "sft",
        "heldout_avg4",
        +1,
    ),
    # No cost-to-target claim from SFT: SFT alone starts above Base->Vanilla's target.
)

CLOSE_MARGIN = 0.025
"""What "close to" means in a closeness claim: 2.5 Avg@4 points, about twice the paper's own
gap (All Pivots 50.00 vs disagreement 48.83) and one standard error of an Avg@4 point on 80
tasks; fixed before any pivot run was read."""

PIVOT_CLAIMS = tuple(
    Claim(
        f"pivots_vs_{name}_{metric.removeprefix('heldout_')}",
        f"{'Held-Out Avg@4' if metric == 'heldout_avg4' else 'Held-Out Pass@4'}: Action "
        f"(disagreement) {'close to' if close else 'above'} Action ({label})",
        "default",
        variant,
        metric,
        +1,
        margin=CLOSE_MARGIN if close else None,
    )
    for name, variant, label, close in (
        ("reward_variance", "pivots-reward_variance", "reward variance, equal budget", False),
        (
            "reward_variance_any",
            "pivots-reward_variance-any",
            "reward variance > 0, PivotRL's rule, equal budget",
            False,
        ),
        ("all_long", "pivots-all-long", "all checkpoints at 4.7x the budget", True),
        ("all", "pivots-all", "all checkpoints, equal budget", False),
        ("entropy", "pivots-entropy", "entropy, equal budget", False),
    )
    for metric in ("heldout_avg4", "heldout_pass4")
)
"""Table 2's comparisons (the ``pivots`` experiment): Stage I on each signal, paired by seed
across variants (``ours``/``theirs`` name variants; the rows compared are their Action rows)."""

PAPER: dict[str, dict[str, str]] = {
    "mobile": {
        "efficiency_steps": "65.0% fewer (25.0K vs 71.5K)",
        "efficiency_samples": "58.6% fewer (17.9K vs 43.3K)",
        "efficiency_steps_train": "65.0% fewer (25.0K vs 71.5K)",
        "efficiency_samples_train": "58.6% fewer (17.9K vs 43.3K)",
        "heldout_vs_base": "+9.38 pts (50.20 vs 40.82)",
        "heldout_vs_base_vanilla": "+2.54 pts (50.20 vs 47.66)",
        "action_vs_base": "+8.01 pts (48.83 vs 40.82)",
        "pivots_vs_reward_variance_avg4": "+3.13 pts (48.83 vs 45.70), same budget",
        "pivots_vs_reward_variance_pass4": "+2.34 pts (62.50 vs 60.16)",
        "pivots_vs_reward_variance_any_avg4": "+3.13 pts (48.83 vs 45.70), same budget",
        "pivots_vs_reward_variance_any_pass4": "+2.34 pts (62.50 vs 60.16)",
        "pivots_vs_all_long_avg4": "-1.17 pts (48.83 vs 50.00) at 21% of its samples "
        "(8.2K vs 38.4K): close to",
    },
    "web": {
        "efficiency_steps": "~77% fewer (9.2K vs 40.5K)",
        "efficiency_samples": "~73% fewer (9.0K vs 33.3K)",
        "efficiency_steps_train": "~77% fewer (9.2K vs 40.5K)",
        "efficiency_samples_train": "~73% fewer (9.0K vs 33.3K)",
        "heldout_vs_base_vanilla": "+12.09 pts (57.92 vs 45.83)",
        "heldout_vs_sft": "+7.09 pts (57.92 vs 50.83)",
        "pivots_vs_reward_variance_avg4": "+4.58 pts (52.08 vs 47.50; 15.4K vs 14.3K samples)",
        "pivots_vs_reward_variance_pass4": "+3.80 pts (61.67 vs 57.87)",
        "pivots_vs_all_avg4": "+5.00 pts (52.08 vs 47.08; 15.4K vs 16.4K samples)",
        "pivots_vs_all_pass4": "+1.67 pts (61.67 vs 60.00)",
    },
}
PAPER["apps"] = PAPER["web"]
"""The paper's published figures (docs/architecture.md, "The paper's published figures"): mobile rows
against MobileGym, web rows against CUA-Gym-Hub (our web env is MiniWoB++; our apps env, apps
with servers and databases, is CUA-Gym-Hub's kind and is judged against the same rows). The
paper's efficiency figures count env steps to a Train Avg@4 target (its Figure 4): they stand
beside the Train-target claims, and beside ours (Val) for comparison."""


def _cost(row: Mapping[str, Any], claim: Claim) -> Censored:
    reached = row.get(claim.cost_key())
    hit = row.get(target_keys(claim.target)["reached"])
    return Censored(None if not hit else reached, float(row[claim.metric]))


def _has_target(row: Mapping[str, Any], claim: Claim) -> bool:
    """Whether ``row`` was costed against the claim's target (a run without Train evaluations
    at its marks has no Train target)."""
    return row.get(target_keys(claim.target)["reached"]) is not None


def judge(claim: Claim, rows: Sequence[Mapping[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """``rows``: per seed, the summary's configurations. The seeds where both configurations
    exist are paired; the result holds the per-seed differences, the interval and the verdict."""
    pairs = [
        (r[claim.ours], r[claim.theirs]) for r in rows if claim.ours in r and claim.theirs in r
    ]
    out: dict[str, Any] = {}
    if claim.is_cost:
        pairs = [(a, b) for a, b in pairs if _has_target(a, claim) and _has_target(b, claim)]
        ours = [_cost(a, claim) for a, _ in pairs]
        theirs = [_cost(b, claim) for _, b in pairs]
        diffs = [paired_cost_difference(a, b) for a, b in zip(ours, theirs, strict=True)]
        out |= {
            "medians": [censored_median(ours), censored_median(theirs)],
            "censored": [sum(c.censored for c in ours), sum(c.censored for c in theirs)],
        }
    else:
        theirs_metric = claim.theirs_metric or claim.metric
        diffs = [
            a[claim.metric] - b[theirs_metric]
            for a, b in pairs
            if a.get(claim.metric) is not None and b.get(theirs_metric) is not None
        ]
    interval = bootstrap_ci(diffs)
    judged = (
        equivalence(interval, claim.margin)
        if claim.margin is not None
        else verdict(interval, claim.direction)
    )
    return out | {
        "seeds": len(diffs),
        "differences": diffs,
        "interval": interval,
        "verdict": judged,
    }


def with_phase_starts(summary: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The summary's configuration rows, each phase's with ``start_val_avg4``: the Val Avg@4 of
    its iteration-0 evaluation (its starting policy, evaluated by the phase itself)."""
    rows = {}
    for name, row in summary["configurations"].items():
        curve = summary.get("curves", {}).get(name) or [{}]
        start = curve[0]
        if start.get("phase_env_steps") == 0 and start.get("val_avg") is not None:
            row = {**row, "start_val_avg4": start["val_avg"]}
        rows[name] = row
    return rows


def claims_table(
    profile: str,
    rows: Sequence[Mapping[str, Mapping[str, Any]]],
    claims: Sequence[Claim] = CLAIMS,
) -> tuple[str, list[dict[str, Any]]]:
    """The markdown table of every claim of ``claims`` whose configurations were run, and its
    data. A closeness claim also says within how many points these seeds show the two close."""
    lines = [
        "| claim | paper | ours: mean paired difference [95% CI] | medians (ours / theirs) | seeds | verdict |",
        "|---|---|---|---|---:|---|",
    ]
    data = []
    for claim in claims:
        result = judge(claim, rows)
        if not result["seeds"]:
            if claim.target != "val" and any(
                claim.ours in r and claim.theirs in r for r in rows
            ):  # the configurations ran, without Train evaluations at the marks
                lines.append(
                    f"| {claim.text} | {PAPER.get(profile, {}).get(claim.key, '-')} | - | "
                    "no Train evaluations at the marks | 0 | - |"
                )
            continue
        data.append(
            {"key": claim.key, "text": claim.text, "metric": claim.metric, **result}
            | ({"margin": claim.margin} if claim.margin is not None else {})
        )
        if claim.is_cost:
            diff = fmt_interval(result["interval"], unit="")
            medians = " / ".join(_median(m) for m in result["medians"])
            cens = result["censored"]
            medians += f" (censored {cens[0]} / {cens[1]})" if any(cens) else ""
        else:
            diff = fmt_interval(result["interval"], scale=100, unit=" pts")
            medians = ""
            if claim.margin is not None and (within := closeness(result["interval"])) is not None:
                diff += f"; close within {100 * within:.2f} pts (claim: {100 * claim.margin:.2f})"
        lines.append(
            f"| {claim.text} | {PAPER.get(profile, {}).get(claim.key, '-')} | {diff} | "
            f"{medians} | {result['seeds']} | {result['verdict']} |"
        )
    return "\n".join(lines), data


def _median(m: Sequence[Any]) -> str:
    value, bound = m
    return "-" if value is None else f"{'>= ' if bound else ''}{value:,.0f}"


MIN_SEEDS = {"mobile": 10, "web": 5, "apps": 5}
"""Seeds a headline claim or a change of default needs on each environment."""


def promotion(
    env: str, option: Sequence[Mapping[str, Any]], default: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """Whether an option may replace the default (the rule of docs/RESULTS.md): over at least
    :data:`MIN_SEEDS` paired seeds its total env steps to the target must be lower with a 95%
    interval excluding zero, and its Val Avg@4 must not be worse (the interval of the difference
    must not lie below zero). ``option`` / ``default``: per seed, the configuration's row."""
    rows = [{"option": a, "default": b} for a, b in zip(option, default, strict=True) if a and b]
    steps = judge(Claim("", "", "option", "default", "total_env_steps", -1), rows)
    val = judge(Claim("", "", "option", "default", "val_avg4", +1), rows)
    enough = len(rows) >= MIN_SEEDS.get(env, 10)
    promote = enough and steps["verdict"] == "held" and val["verdict"] != "contradicted"
    reason = (
        "promote"
        if promote
        else "keep the default: "
        + (
            "too few seeds"
            if not enough
            else "no confident saving"
            if steps["verdict"] != "held"
            else "worse on val"
        )
    )
    return {"steps": steps, "val": val, "decision": reason}
