"""Threshold sensitivity: each threshold variant of the ``sensitivity`` experiment against the
paper's default on the same seeds - the paired difference of Val Avg@4 and of the total env
steps to the target, with 95% bootstrap intervals - and one sentence per threshold saying, from
those intervals alone, whether the result is sensitive to it.

A variant's reading:

* **sensitive** - an interval (Val or cost) excludes zero;
* **insensitive** - every interval lies inside the margins (:data:`VAL_MARGIN` Val points and
  :data:`COST_MARGIN` of the default's env steps to the target): any effect is smaller than that;
* **undetermined** - neither: no effect shown, but one as large as the margins not ruled out.

A threshold is sensitive when one of its values is, insensitive when all are, undetermined
otherwise. The margins were fixed before any sensitivity run was read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from adaroll.config import RunConfig
from adaroll.experiments.claims import MIN_SEEDS, Claim, judge
from adaroll.experiments.inputs import Inputs, Section, markdown_table
from adaroll.experiments.stats import fmt_interval, mean_std
from adaroll.experiments.variants import VARIANTS

VAL_MARGIN = 0.025
"""Val Avg@4 differences within +-2.5 points count as no effect (about one standard error of an
Avg@4 point on 80 tasks; the same margin as Table 2's closeness claim)."""
COST_MARGIN = 0.10
"""Differences of total env steps to the target within +-10% of the default's mean count as no
effect (censored runs at their budget)."""

VAL = Claim("sensitivity_val", "Val Avg@4", "variant", "default", "val_avg4", +1)
COST = Claim("sensitivity_cost", "env steps to target", "variant", "default", "total_env_steps", -1)


def threshold_of(variant: str) -> tuple[str, dict[str, float]]:
    """The thresholds a variant sets, named by their fields (``tau_low/tau_high``), and the
    values it sets them to, from its overrides."""
    values = {}
    for override in VARIANTS[variant].overrides:
        path, raw = override.split("=", 1)
        values[path] = float(raw)
    return "/".join(p.rsplit(".", 1)[1] for p in values), values


def default_value(path: str) -> float:
    """The default of a dotted config field (``rl.pivots.tau_dis`` -> 0.45)."""
    node: Any = RunConfig()
    for part in path.split("."):
        node = getattr(node, part)
    return float(node)


def reading(val: Mapping[str, Any], cost: Mapping[str, Any], cost_scale: float | None) -> str:
    """sensitive / insensitive / undetermined for one variant (see the module doc)."""
    intervals = [val["interval"], cost["interval"]]
    if any(i is None for i in intervals):
        return "undetermined"
    if any(low > 0 or high < 0 for _, low, high in intervals):
        return "sensitive"
    _, vlow, vhigh = val["interval"]
    _, clow, chigh = cost["interval"]
    cost_margin = COST_MARGIN * cost_scale if cost_scale else None
    inside = -VAL_MARGIN <= vlow and vhigh <= VAL_MARGIN
    inside &= cost_margin is not None and -cost_margin <= clow and chigh <= cost_margin
    return "insensitive" if inside else "undetermined"


def _detail(rows: Sequence[Mapping[str, Any]]) -> str:
    return "; ".join(
        f"at {r['value']}: Val Avg@4 {fmt_interval(r['val']['interval'], 100, ' pts')}, env "
        f"steps to the target {fmt_interval(r['cost']['interval'])}"
        for r in rows
    )


def sentence(
    threshold: str, default: str, rows: Sequence[Mapping[str, Any]], seeds: int, needed: int
) -> str:
    """One sentence on a threshold from its variants' readings and intervals."""
    readings = [r["reading"] for r in rows]
    margins = (
        f"+-{100 * VAL_MARGIN:.1f} Val points and +-{100 * COST_MARGIN:.0f}% of the default's "
        "env steps to the target"
    )
    if "sensitive" in readings:
        moved = [r for r in rows if r["reading"] == "sensitive"]
        text = (
            f"The result is sensitive to {threshold} (default {default}): {_detail(moved)} "
            "(an interval excludes zero)."
        )
    elif readings and all(r == "insensitive" for r in readings):
        values = ", ".join(r["value"] for r in rows)
        text = (
            f"The result is not sensitive to {threshold} between {default} (default) and "
            f"{values}: every paired interval lies within {margins}."
        )
    else:
        wide = [r for r in rows if r["reading"] == "undetermined"]
        text = (
            f"These seeds cannot tell whether the result is sensitive to {threshold} (default "
            f"{default}): no interval excludes zero, but not all lie within {margins} "
            f"({_detail(wide)})."
        )
    if seeds < needed:
        text += f" Only {seeds} paired seeds: the protocol asks for {needed}."
    return text


def sensitivity_section(x: Inputs) -> Section:
    (name,) = x.exp.configurations
    default_rows = [x.row("default", s, name) for s in x.seeds]
    costs = [c.observed for c in x.to_target("default", name)]
    cost_scale = mean_std(costs)[0]
    groups: dict[str, list[dict[str, Any]]] = {}
    defaults: dict[str, str] = {}
    for variant in x.exp.variants_for(x.profile):
        if variant == "default":
            continue
        threshold, values = threshold_of(variant)
        defaults[threshold] = "/".join(f"{default_value(p):g}" for p in values)
        rows = [
            {"variant": a, "default": b}
            for a, b in zip([x.row(variant, s, name) for s in x.seeds], default_rows, strict=True)
            if a and b
        ]
        val, cost = judge(VAL, rows), judge(COST, rows)
        groups.setdefault(threshold, []).append(
            {
                "variant": variant,
                "value": "/".join(f"{v:g}" for v in values.values()),
                "val": val,
                "cost": cost,
                "reading": reading(val, cost, cost_scale),
            }
        )
    needed = MIN_SEEDS.get(x.profile.env, 10)
    table_rows: list[list[str]] = []
    sentences: list[str] = []
    data: dict[str, Any] = {}
    for threshold, judged in groups.items():
        seeds = min(r["val"]["seeds"] for r in judged)
        said = sentence(threshold, defaults[threshold], judged, seeds, needed)
        sentences.append(f"* {said}")
        data[threshold] = {"default": defaults[threshold], "variants": judged, "sentence": said}
        for r in judged:
            table_rows.append(
                [
                    threshold,
                    f"{defaults[threshold]} -> {r['value']}",
                    fmt_interval(r["val"]["interval"], scale=100, unit=" pts"),
                    fmt_interval(r["cost"]["interval"]),
                    str(r["val"]["seeds"]),
                    r["reading"],
                ]
            )
    if not table_rows:
        return Section("")
    table = markdown_table(
        [
            "threshold",
            "default -> variant",
            "Val Avg@4 difference [95% CI]",
            "env steps to target difference [95% CI]",
            "seeds",
            "reading",
        ],
        table_rows,
    )
    legend = (
        f"Each threshold variant minus the default ({VARIANTS['default'].label}), paired by "
        f"seed, on {name}: Val Avg@4 at the budget and total env steps to the target (a run "
        "that never reached it at the larger budget of its pair). Reading: *sensitive* when an "
        f"interval excludes zero, *insensitive* when both lie within +-{100 * VAL_MARGIN:.1f} "
        f"Val points and +-{100 * COST_MARGIN:.0f}% of the default's mean env steps to the "
        f"target ({cost_scale or 0:,.0f}), *undetermined* otherwise."
    )
    markdown = (
        f"#### Is the result sensitive to the thresholds?\n\n{legend}\n\n{table}\n\n"
        + "\n".join(sentences)
    )
    return Section(markdown + "\n", {"thresholds": data, "cost_scale": cost_scale})
