"""Tables and plots from run directories: the paper's views of our runs.

* Table 3: every configuration with Train, Val and Held-Out Avg@4/Pass@4 and its whole bill
  (env steps by kind, their total, policy and training samples) and cost to the target;
* Figure 4: Val Avg@4 against total env steps and against policy samples, at the cost marks;
* Figure 5: share of tasks in Local/Suffix/Root over hybrid training;
* where the env steps go and the gradient comes from: per configuration, mode and purpose
  (routing pass, re-evaluation, Local, Suffix, Root) a table of env steps, groups, groups
  skipped for equal rewards and decisions with a gradient, and a figure of each configuration's
  env steps by purpose over its iterations (:mod:`adaroll.training.purposes`).

Everything is redrawn from ``summary.json`` and the phases' ``metrics.jsonl``. Table 2 and the
views over several seeds are in :mod:`adaroll.experiments`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from adaroll.io import atomic_write_text  # noqa: E402
from adaroll.jsonl import read_jsonl  # noqa: E402
from adaroll.routes import Route  # noqa: E402
from adaroll.training.pipeline import RUN_FORMAT  # noqa: E402
from adaroll.training.purposes import LABELS as PURPOSE_LABELS  # noqa: E402
from adaroll.training.purposes import PHASES, phase_series, purpose_table  # noqa: E402

LABELS = {
    "base": "Base",
    "sft": "SFT",
    "action": "Action (Stage I)",
    "base_vanilla": "Base->Vanilla",
    "base_hybrid": "Base->Hybrid",
    "base_onestep": "Base->OneStep",
    "action_vanilla": "Action->Vanilla",
    "action_hybrid": "Action->Hybrid",
    "sft_vanilla": "SFT->Vanilla",
    "sft_hybrid": "SFT->Hybrid",
}
RL_RUNS = (
    "base_vanilla",
    "base_hybrid",
    "base_onestep",
    "action_vanilla",
    "action_hybrid",
    "sft_vanilla",
    "sft_hybrid",
)
HYBRID_RUNS = ("base_hybrid", "action_hybrid", "sft_hybrid")


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.2f}"


def _num(v: Any) -> str:
    return "-" if v is None else f"{v:,}"


def table3(summary: dict[str, Any]) -> str:
    """Scores and whole bills of every configuration (units: docs/RESULTS.md)."""
    rows = [
        "| configuration | Train Avg@4 | Val Avg@4 | Held-Out Avg@4 | Held-Out Pass@4 | "
        "env steps | replay | demos | selection | total env steps | policy samples | "
        "train samples | total env steps to target |",
        "|---|" + "---:|" * 12,
    ]
    for name, r in summary["configurations"].items():
        to_target = r.get("steps_to_target")
        censored = r.get("reached_target") is False
        reach = f">= {_num(r['total_env_steps'])}" if censored else _num(to_target)
        rows.append(
            f"| {LABELS.get(name, name)} | {_pct(r['train_avg4'])} | {_pct(r['val_avg4'])} | "
            f"{_pct(r['heldout_avg4'])} | {_pct(r['heldout_pass4'])} | {_num(r['env_steps'])} | "
            f"{_num(r['replay_steps'])} | {_num(r['demo_env_steps'])} | "
            f"{_num(r['selection_env_steps'])} | {_num(r['total_env_steps'])} | "
            f"{_num(r['policy_samples'])} | {_num(r['train_samples'])} | {reach} |"
        )
    return "\n".join(rows)


PURPOSES_NOTE = (
    "Each configuration's own RL phase (Action's: Stage I), per mode and purpose: routing pass "
    "(every task's first probes), re-evaluation (later probes), Local (one-step groups, no env "
    "step), Suffix, Root. Skipped: groups whose rewards were all equal (no gradient); "
    "decisions with a gradient: the decisions of the groups that entered an update."
)


def _evals(run: Path, name: str) -> list[dict[str, Any]]:
    records, _ = read_jsonl(run / name / "metrics.jsonl")
    return [r for r in records if r.get("kind") == "eval"]


def figure4(summary: dict[str, Any], out: Path) -> Path | None:
    curves = summary.get("curves", {})
    present = [n for n in RL_RUNS if curves.get(n)]
    if not present:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for name in present:
        pts = [p for p in curves[name] if p.get("val_avg") is not None]
        ys = [100 * p["val_avg"] for p in pts]
        style = "--" if "vanilla" in name else "-"
        axes[0].plot([p["total_env_steps"] for p in pts], ys, style, marker="o", label=LABELS[name])
        axes[1].plot([p["policy_samples"] for p in pts], ys, style, marker="o", label=LABELS[name])
    target = summary.get("target_val_avg4")
    for ax, xlabel in zip(
        axes, ("total env steps (whole bill)", "policy samples (whole bill)"), strict=True
    ):
        if target is not None:
            ax.axhline(100 * target, color="grey", lw=0.8, ls=":", label="target")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("Val Avg@4 (%)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle("Training efficiency (Figure 4 analogue)")
    fig.tight_layout()
    path = out / "figure4_efficiency.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _panels(
    out: Path,
    filename: str,
    title: str,
    phases: dict[str, Path],
    draw: Callable[[Any, list[dict[str, Any]]], None],
    ylabel: str,
) -> Path | None:
    """One panel per configuration of ``phases`` (name -> phase directory), each drawn by
    ``draw(ax, metrics records)`` over the iterations; None when there is none."""
    if not phases:
        return None
    fig, axes = plt.subplots(1, len(phases), figsize=(5 * len(phases), 4), squeeze=False)
    for ax, (name, phase) in zip(axes[0], phases.items(), strict=True):
        records, _ = read_jsonl(phase / "metrics.jsonl")
        draw(ax, records)
        ax.set_title(LABELS.get(name, name), fontsize=9)
        ax.set_xlabel("iteration")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    path = out / filename
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def figure5(run: Path, out: Path) -> Path | None:
    def draw(ax: Any, records: list[dict[str, Any]]) -> None:
        rows = [r for r in records if r.get("kind") == "iteration"]
        its = [r["iteration"] for r in rows]
        for route in Route:
            shares = [r["routes"].get(route, 0) / max(1, sum(r["routes"].values())) for r in rows]
            if any(shares):
                ax.plot(its, [100 * s for s in shares], label=route.value)

    phases = {n: run / n for n in HYBRID_RUNS if (run / n / "metrics.jsonl").exists()}
    return _panels(
        out,
        "figure5_routing.png",
        "Routing dynamics (Figure 5 analogue)",
        phases,
        draw,
        "share of tasks (%)",
    )


def purposes_figure(run: Path, summary: dict[str, Any], out: Path) -> Path | None:
    """Each configuration's env steps by mode and purpose, cumulated over its iterations."""

    def draw(ax: Any, records: list[dict[str, Any]]) -> None:
        for key, steps in phase_series(records).items():
            if any(steps):
                cumulative = [sum(steps[: i + 1]) for i in range(len(steps))]
                ax.plot(range(1, len(steps) + 1), cumulative, label=PURPOSE_LABELS.get(key, key))

    dirs = {PHASES.get(p.name, p.name): p for p in run.iterdir() if (p / "metrics.jsonl").exists()}
    phases = {n: dirs[n] for n in summary.get("purposes", {}) if n in dirs}
    return _panels(
        out, "purposes.png", "Env steps by mode and purpose", phases, draw, "env steps so far"
    )


def write_report(run: Path, out: Path | None = None) -> Path:
    """Write ``report.md`` and its PNGs for one run directory; return the report's path."""
    run = Path(run)
    summary_path = run / "summary.json"
    if not summary_path.exists():
        raise FileNotFoundError(
            f"{summary_path} does not exist: is {run} a finished `adaroll run`?"
        )
    summary = json.loads(summary_path.read_text())
    if summary.get("format") != RUN_FORMAT:
        raise FileNotFoundError(
            f"{summary_path} is of an older accounting format (no complete "
            "bills): rerun it with `adaroll run --fresh`"
        )
    out = Path(out) if out else run / "report"
    out.mkdir(parents=True, exist_ok=True)
    parts = [
        f"# AdaRoll report: `{run}`",
        "",
        "## Table 3 analogue: configurations",
        "",
        table3(summary),
        "",
        f"Target = mean of Base->Vanilla's last three Val Avg@4 = {_pct(summary.get('target_val_avg4'))}; "
        "`>= N`: never reached within the whole bill N (censored).",
        "",
    ]
    for title, path in (
        ("Figure 4 analogue: efficiency", figure4(summary, out)),
        ("Figure 5 analogue: routing", figure5(run, out)),
    ):
        if path is not None:
            parts += [f"## {title}", "", f"![{title}]({path.name})", ""]
    table = purpose_table(summary.get("purposes", {}), LABELS)
    if table:
        title = "Where the env steps go and where the gradient comes from"
        parts += [f"## {title}", "", PURPOSES_NOTE, "", table, ""]
        figure = purposes_figure(run, summary, out)
        if figure is not None:
            parts += [f"![{title}]({figure.name})", ""]
    report = out / "report.md"
    atomic_write_text(report, "\n".join(parts))
    return report
