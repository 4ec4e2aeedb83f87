"""From the run directories of an experiment to its table, plot and per-seed numbers.

Every figure is computed from the runs' ``summary.json`` (scores, costs, evaluation curves)
and, for routing, the hybrid phases' ``metrics.jsonl``; nothing is typed in by hand.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from adaroll.experiments.specs import VARIANTS, Experiment, Profile  # noqa: E402
from adaroll.experiments.stats import cost_to_reach, fmt_count, fmt_pct, mean_std, ratio  # noqa: E402
from adaroll.jsonl import read_jsonl  # noqa: E402
from adaroll.report import LABELS  # noqa: E402

Summaries = dict[str, dict[int, dict[str, Any]]]
"""variant -> seed -> the run's summary.json."""
SCORES = ("train_avg4", "train_pass4", "heldout_avg4", "heldout_pass4")


@dataclass
class Section:
    markdown: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class Inputs:
    exp: Experiment
    home: Path
    profile: Profile
    summaries: Summaries
    seeds: Sequence[int]
    out: Path
    quick: bool = False

    def row(self, variant: str, seed: int, configuration: str) -> dict[str, Any]:
        return self.summaries[variant][seed]["configurations"].get(configuration, {})

    def values(self, variant: str, configuration: str, key: str) -> list[Any]:
        return [self.row(variant, s, configuration).get(key) for s in self.seeds]

    def curve(self, variant: str, seed: int, configuration: str) -> list[dict[str, Any]]:
        return list(self.summaries[variant][seed]["curves"].get(configuration, []))

    def offset(self, variant: str, seed: int, configuration: str) -> tuple[int, int]:
        """Stage I's cost, which the Action->* configurations carry."""
        if not configuration.startswith("action_"):
            return 0, 0
        action = self.row(variant, seed, "action")
        return int(action.get("env_steps") or 0), int(action.get("train_samples") or 0)

    def run_dir(self, variant: str, seed: int) -> Path:
        return self.home / "runs" / variant / f"seed{seed}"


ANALYSES: dict[str, Callable[[Inputs], Section]] = {}


def analysis(*names: str) -> Callable[[Callable[[Inputs], Section]], Callable[[Inputs], Section]]:
    def add(fn: Callable[[Inputs], Section]) -> Callable[[Inputs], Section]:
        for name in names:
            ANALYSES[name] = fn
        return fn

    return add


def analyse(exp: Experiment, home: Path, profile: Profile, summaries: Summaries,
            seeds: Sequence[int], out: Path, quick: bool) -> Section:  # fmt: skip
    section = ANALYSES[exp.name](Inputs(exp, home, profile, summaries, seeds, out, quick))
    units = "" if exp.name == "restore-cost" else " Avg@4 and Pass@4 in percent."
    header = (f"### {exp.title}: {profile.env}\n\nSeeds {', '.join(map(str, seeds))}; mean ± "
              f"standard deviation over seeds.{units}\n\n")  # fmt: skip
    section.markdown = header + section.markdown + (f"\n{exp.note}\n" if exp.note else "")
    return section


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _save(fig: Any, path: Path) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name


# -- Table 3 ------------------------------------------------------------------------------------
@analysis("full")
def full_method(x: Inputs) -> Section:
    names = [n for n in ("base", "sft", "action", "base_vanilla", "base_hybrid", "action_vanilla",
                         "action_hybrid") if any(x.values("default", n, "train_avg4"))]  # fmt: skip
    data = {n: {k: x.values("default", n, k) for k in (*SCORES, "train_samples", "env_steps")}
            for n in names}  # fmt: skip
    rows = [[LABELS[n], *(fmt_pct(data[n][k]) for k in SCORES), fmt_count(data[n]["train_samples"]),
             fmt_count(data[n]["env_steps"])] for n in names]  # fmt: skip
    table = _table(["configuration", "Train Avg@4", "Train Pass@4", "Held-Out Avg@4",
                    "Held-Out Pass@4", "train samples", "env steps"], rows)  # fmt: skip
    fig, ax = plt.subplots(figsize=(9, 3.8))
    for i, (split, key) in enumerate((("Train", "train_avg4"), ("Held-Out", "heldout_avg4"))):
        stats = [mean_std(data[n][key]) for n in names]
        ax.bar([j + 0.4 * i for j in range(len(names))], [100 * (m or 0) for m, _, _ in stats], 0.4,
               yerr=[100 * (s or 0) for _, s, _ in stats], capsize=3, label=f"{split} Avg@4")  # fmt: skip
    ax.set_xticks(
        [j + 0.2 for j in range(len(names))], [LABELS[n] for n in names], rotation=20, fontsize=8
    )
    ax.set_ylabel("Avg@4 (%)")
    ax.legend(fontsize=8)
    plot = _save(fig, x.out / "table3.png")
    headline = {}
    if "action_hybrid" in data and "action_vanilla" in data:
        headline = _savings(data["action_hybrid"], data["action_vanilla"])
    return Section(f"{table}\n\n![{x.exp.title}]({plot})\n", {"rows": data, "headline": headline})


def _savings(ours: dict[str, list[Any]], theirs: dict[str, list[Any]]) -> dict[str, Any]:
    """Mean over seeds of 1 - ours/theirs (samples, env steps) and of the held-out difference."""
    out: dict[str, Any] = {}
    for key in ("train_samples", "env_steps"):
        fractions = [None if r is None else 1 - r for r in map(ratio, ours[key], theirs[key])]
        out[f"{key}_saving"] = mean_std(fractions)[:2]
    diffs = [None if a is None or b is None else a - b
             for a, b in zip(ours["heldout_avg4"], theirs["heldout_avg4"], strict=True)]  # fmt: skip
    out["heldout_avg4_difference"] = mean_std(diffs)[:2]
    return out


# -- Figure 4 -----------------------------------------------------------------------------------
@analysis("efficiency")
def efficiency(x: Inputs) -> Section:
    per_seed = []
    for seed in x.seeds:
        target = x.row("default", seed, "base_vanilla").get("train_avg4")
        entry: dict[str, Any] = {"seed": seed, "vanilla_final_train_avg4": target}
        for name in ("base_vanilla", "base_hybrid"):
            curve = x.curve("default", seed, name)
            entry[name] = {
                "to_vanilla_final": cost_to_reach(curve, target),
                "to_fixed_target": cost_to_reach(curve, x.profile.fixed_target),
                "final": {k: x.row("default", seed, name).get(k) for k in (*SCORES, "env_steps", "train_samples")},
            }  # fmt: skip
        per_seed.append(entry)
    rows = []
    for e in per_seed:
        v, h = e["base_vanilla"], e["base_hybrid"]
        for label, key in (("Vanilla's final", "to_vanilla_final"), ("fixed", "to_fixed_target")):
            (vs, vn), (hs, hn) = v[key], h[key]
            rows.append([str(e["seed"]), label, _pct_or_dash(e["vanilla_final_train_avg4"] if key == "to_vanilla_final" else x.profile.fixed_target),
                         _n(vs), _n(hs), _saving(hs, vs), _n(vn), _n(hn), _saving(hn, vn)])  # fmt: skip
    table = _table(["seed", "target", "Train Avg@4 target", "Vanilla steps", "Hybrid steps", "step saving",
                    "Vanilla samples", "Hybrid samples", "sample saving"], rows)  # fmt: skip
    savings = {
        key: {unit: mean_std([None if r is None else 1 - r for r in
                              (ratio(e["base_hybrid"][key][i], e["base_vanilla"][key][i]) for e in per_seed)])
              for i, unit in enumerate(("env_steps", "train_samples"))}
        for key in ("to_vanilla_final", "to_fixed_target")
    }  # fmt: skip
    finals = {
        n: {k: [e[n]["final"][k] for e in per_seed] for k in SCORES}
        for n in ("base_vanilla", "base_hybrid")
    }
    lines = [table, "", "Mean saving of Base->Hybrid over Base->Vanilla, over the seeds where both reached the "
             "target:", ""]  # fmt: skip
    for key, label in (
        ("to_vanilla_final", "at Vanilla's final Train Avg@4"),
        ("to_fixed_target", "at the fixed target"),
    ):
        s = savings[key]
        lines.append(
            f"* {label}: env steps {_frac(s['env_steps'])}, training samples {_frac(s['train_samples'])}"
        )
    lines.append(
        f"* final Held-Out Avg@4: Vanilla {fmt_pct(finals['base_vanilla']['heldout_avg4'])}, "
        f"Hybrid {fmt_pct(finals['base_hybrid']['heldout_avg4'])}"
    )
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for name, colour in (("base_vanilla", "tab:orange"), ("base_hybrid", "tab:blue")):
        for i, seed in enumerate(x.seeds):
            pts = x.curve("default", seed, name)
            ys = [100 * p["train_avg"] for p in pts]
            legend = LABELS[name] if i == 0 else None
            axes[0].plot(
                [p["env_steps"] for p in pts], ys, color=colour, marker=".", alpha=0.8, label=legend
            )
            axes[1].plot(
                [p["train_samples"] for p in pts],
                ys,
                color=colour,
                marker=".",
                alpha=0.8,
                label=legend,
            )
    for ax, xlabel in zip(axes, ("environment steps", "training samples"), strict=True):
        ax.axhline(100 * x.profile.fixed_target, color="grey", lw=0.8, ls=":", label="fixed target")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("Train Avg@4 (%)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    plot = _save(fig, x.out / "figure4.png")
    lines += ["", f"![{x.exp.title}]({plot})", ""]
    return Section("\n".join(lines), {"per_seed": per_seed, "savings": savings, "finals": finals})


def _n(v: int | None) -> str:
    return "never" if v is None else f"{v:,}"


def _pct_or_dash(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.2f}"


def _saving(ours: int | None, theirs: int | None) -> str:
    r = ratio(ours, theirs)
    return "-" if r is None else f"{100 * (1 - r):.1f}%"


def _frac(ms: Sequence[Any]) -> str:
    """A saving's mean ± std over the seeds where both configurations reached the target."""
    mean, std, n = ms
    return "-" if mean is None or std is None else f"{100 * mean:.1f}% ± {100 * std:.1f}% ({n} seeds)"


# -- Figure 5 -----------------------------------------------------------------------------------
@analysis("routing")
def routing(x: Inputs) -> Section:
    modes = ("local", "suffix", "root")
    data: dict[str, dict[str, list[float]]] = {}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, name in zip(axes, ("base_hybrid", "action_hybrid"), strict=True):
        per_seed = [
            _route_shares(x.run_dir("default", s) / name / "metrics.jsonl", modes) for s in x.seeds
        ]
        length = min((len(r["local"]) for r in per_seed), default=0)
        mean = {
            m: [sum(r[m][i] for r in per_seed) / len(per_seed) for i in range(length)]
            for m in modes
        }
        data[name] = mean
        for m in modes:
            ax.plot(range(1, length + 1), [100 * v for v in mean[m]], label=m)
        ax.set_title(LABELS[name])
        ax.set_xlabel("iteration")
        ax.set_ylabel("share of tasks (%), mean over seeds")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    plot = _save(fig, x.out / "figure5.png")
    rows = []
    for name, mean in data.items():
        n = len(mean["root"])
        for i in sorted({0, n // 4, n // 2, (3 * n) // 4, n - 1}) if n else ():
            rows.append([LABELS[name], str(i + 1), *(f"{100 * mean[m][i]:.1f}" for m in modes)])
    table = _table(["configuration", "iteration", "Local %", "Suffix %", "Root %"], rows)
    return Section(f"{table}\n\n![{x.exp.title}]({plot})\n", {"shares": data})


def _route_shares(path: Path, modes: Sequence[str]) -> dict[str, list[float]]:
    records, _ = read_jsonl(path)
    out: dict[str, list[float]] = {m: [] for m in modes}
    for r in records:
        if r.get("kind") != "iteration":
            continue
        routed = sum(r["routes"].get(m, 0) for m in modes)
        for m in modes:
            out[m].append(r["routes"].get(m, 0) / routed if routed else 0.0)
    return out


# -- Table 2 ------------------------------------------------------------------------------------
@analysis("pivots")
def pivot_signals(x: Inputs) -> Section:
    data, rows = {}, []
    for variant in x.exp.variants_for(x.profile):
        label = "action disagreement" if variant == "default" else VARIANTS[variant].label
        pivots, scoring = [], []
        for seed in x.seeds:
            saved = json.loads((x.run_dir(variant, seed) / "pivots" / "stage1.json").read_text())
            pivots.append(sum(len(v) for v in saved["pivots"].values()))
            scoring.append(saved["policy_samples"])
        d = {k: x.values(variant, "action", k) for k in (*SCORES, "train_samples")}
        d |= {"pivots": pivots, "scoring_samples": scoring}
        data[label] = d
        rows.append([label, fmt_count(pivots), fmt_count(d["train_samples"]), fmt_count(scoring),
                     *(fmt_pct(d[k]) for k in SCORES)])  # fmt: skip
    table = _table(["pivot signal", "pivots", "training samples", "scoring samples", "Train Avg@4",
                    "Train Pass@4", "Held-Out Avg@4", "Held-Out Pass@4"], rows)  # fmt: skip
    note = (
        "One-step RL (Stage I) from Base, the same number of iterations and pivots per "
        "iteration for every signal, so the sample budget is matched."
    )
    return Section(f"{note}\n\n{table}\n", {"rows": data})


# -- ablations of one configuration (thresholds, beyond-the-paper options) -----------------------
@analysis("sensitivity", "options", "bandit-action")
def ablation(x: Inputs) -> Section:
    (name,) = x.exp.configurations
    data, rows = {}, []
    for variant in x.exp.variants_for(x.profile):
        to_vanilla, to_fixed = [], []
        for seed in x.seeds:
            curve = x.curve(variant, seed, name)
            target = x.row("default", seed, "base_vanilla").get("train_avg4")
            to_vanilla.append(cost_to_reach(curve, target)[0])
            to_fixed.append(cost_to_reach(curve, x.profile.fixed_target)[0])
        d = {k: x.values(variant, name, k) for k in (*SCORES, "env_steps", "train_samples")}
        d |= {"steps_to_vanilla_final": to_vanilla, "steps_to_fixed_target": to_fixed}
        data[variant] = d
        rows.append([VARIANTS[variant].label, fmt_pct(d["train_avg4"]), fmt_pct(d["heldout_avg4"]),
                     fmt_count(d["env_steps"]), fmt_count(d["train_samples"]), fmt_count(to_vanilla),
                     fmt_count(to_fixed)])  # fmt: skip
    table = _table([f"{LABELS[name]} variant", "Train Avg@4", "Held-Out Avg@4", "env steps",
                    "training samples", "steps to Vanilla's final", "steps to fixed target"], rows)  # fmt: skip
    note = (f"Every variant trains {LABELS[name]} with the same budget and seeds; the Vanilla "
            f"target is each seed's Base->Vanilla final Train Avg@4 (paper defaults); the fixed target is "
            f"{100 * x.profile.fixed_target:.0f}. `(k/n)`: only k of n seeds reached it.")  # fmt: skip
    return Section(f"{note}\n\n{table}\n", {"rows": data})


# -- Table 1 ------------------------------------------------------------------------------------
@analysis("restore-cost")
def restore_cost(x: Inputs) -> Section:
    from adaroll.config import load_config
    from adaroll.experiments import restore_cost as rc

    env = load_config(None, [*x.profile.overrides, *(x.profile.quick if x.quick else ())]).env
    result = rc.measure(env.name, x.seeds, restores=2 if x.quick else 5,
                        env_options=dict(env.options))  # fmt: skip
    return Section(rc.markdown(result, env.name), result)
