"""From the run directories of an experiment to its table, plot and per-seed numbers.

Every figure is computed from the runs' ``summary.json`` (scores, costs, evaluation curves)
and, for routing, the hybrid phases' ``metrics.jsonl``; nothing is typed in by hand.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from adaroll.algos.targets import SPLITS  # noqa: E402

# register the analyses of the horizon sweep, Table 2 and the thresholds' sensitivity
from adaroll.experiments import horizon, pivot_table  # noqa: E402, F401
from adaroll.experiments.claims import (  # noqa: E402
    claims_table,
    promotion,
    with_phase_starts,
)
from adaroll.experiments.inputs import (  # noqa: E402
    ANALYSES,
    ORDER,
    SCORES,
    Inputs,
    Section,
    Summaries,
    analysis,
    markdown_table,
    save_figure,
)
from adaroll.experiments.profiles import PROFILES, Profile  # noqa: E402
from adaroll.experiments.savings import HEADER as SAVINGS_HEADER  # noqa: E402
from adaroll.experiments.savings import saving_rows  # noqa: E402
from adaroll.experiments.sensitivity import sensitivity_section  # noqa: E402
from adaroll.experiments.specs import Experiment  # noqa: E402
from adaroll.experiments.stats import (  # noqa: E402
    cost_to_reach,
    fmt_censored,
    fmt_count,
    fmt_interval,
    fmt_pct,
    mean_std,
    paired_saving,
    verdict,
)
from adaroll.experiments.variants import VARIANTS  # noqa: E402
from adaroll.jsonl import read_jsonl  # noqa: E402
from adaroll.report import LABELS, RL_RUNS  # noqa: E402
from adaroll.training.bill import BILL_KEYS  # noqa: E402
from adaroll.training.cost_report import HYBRID_PAIRS  # noqa: E402
from adaroll.training.purposes import HEADER as PURPOSE_HEADER  # noqa: E402
from adaroll.training.purposes import mean_purposes, purpose_rows  # noqa: E402


def analyse(
    exp: Experiment,
    home: Path,
    profile: Profile,
    summaries: Summaries,
    seeds: Sequence[int],
    out: Path,
    quick: bool,
) -> Section:
    section = ANALYSES[exp.name](Inputs(exp, home, profile, summaries, seeds, out, quick))
    if exp.name != "restore-cost":
        purposes = purposes_section(exp, profile, summaries, seeds)
        section.markdown += purposes.markdown
        section.data |= purposes.data
    units = "" if exp.name == "restore-cost" else " Avg@4 and Pass@4 in percent."
    name = next((k for k, v in PROFILES.items() if v is profile), profile.env)
    header = (
        f"### {exp.title}: {name}\n\n{len(seeds)} seeds ({', '.join(map(str, seeds))}); "
        f"mean ± standard deviation over seeds unless a column says otherwise.{units}\n\n"
    )
    section.markdown = header + section.markdown + (f"\n{exp.note}\n" if exp.note else "")
    return section


def purposes_section(
    exp: Experiment, profile: Profile, summaries: Summaries, seeds: Sequence[int]
) -> Section:
    """Where each variant's configurations spent their env steps and got their gradient, per
    mode and purpose (:mod:`adaroll.training.purposes`): per seed in the data, the mean over
    seeds in a table. Runs from before the breakdown was recorded are left out."""
    data: dict[str, dict[int, Any]] = {}
    rows: list[list[str]] = []
    for variant in exp.variants_for(profile):
        wanted = exp.configurations_of(variant, profile)
        per_seed = {
            s: {k: v for k, v in summaries[variant][s].get("purposes", {}).items() if k in wanted}
            for s in seeds
            if s in summaries.get(variant, {})
        }
        if not any(per_seed.values()):
            continue
        data[variant] = per_seed
        labels = {
            n: LABELS[n] if variant == "default" else f"{LABELS[n]}, {variant}" for n in ORDER
        }
        rows += purpose_rows(mean_purposes(list(per_seed.values())), labels)
    if not rows:
        return Section("")
    note = (
        "\n#### Where the env steps go and where the gradient comes from\n\n"
        "Each configuration's own RL phase (Action's: Stage I), mean over seeds, per mode and "
        "purpose: routing pass (every task's first probes), re-evaluation (later probes), Local "
        "(one-step groups, no env step), Suffix, Root. Skipped: groups whose rewards were all "
        "equal; decisions with a gradient: those of the groups that entered an update.\n\n"
    )
    return Section(note + markdown_table(PURPOSE_HEADER, rows) + "\n", {"purposes": data})


# -- Table 3 ------------------------------------------------------------------------------------
@analysis("full")
def full_method(x: Inputs) -> Section:
    markdown, data = _full_table(x, "default", "table3.png")
    return Section(markdown, data)


def _full_table(x: Inputs, variant: str, plot_name: str) -> tuple[str, dict[str, Any]]:
    names = [n for n in ORDER if any(v is not None for v in x.values(variant, n, "val_avg4"))]
    data = {n: {k: x.values(variant, n, k) for k in (*SCORES, *BILL_KEYS)} for n in names}
    rows = [
        [
            LABELS[n],
            *(fmt_pct(data[n][k]) for k in SCORES),
            fmt_count(data[n]["total_env_steps"]),
            fmt_count(data[n]["demo_env_steps"]),
            fmt_count(data[n]["selection_env_steps"]),
            fmt_count(data[n]["policy_samples"]),
            fmt_count(data[n]["train_samples"]),
            fmt_censored(x.to_target(variant, n)),
        ]
        for n in names
    ]
    table = markdown_table(
        [
            "configuration",
            "Train Avg@4",
            "Val Avg@4",
            "Held-Out Avg@4",
            "Held-Out Pass@4",
            "total env steps",
            "of which demos",
            "of which selection",
            "policy samples",
            "train samples",
            "total env steps to target (median)",
        ],
        rows,
    )
    fig, ax = plt.subplots(figsize=(11, 3.8))
    for i, (split, key) in enumerate((("Val", "val_avg4"), ("Held-Out", "heldout_avg4"))):
        stats = [mean_std(data[n][key]) for n in names]
        ax.bar(
            [j + 0.4 * i for j in range(len(names))],
            [100 * (m or 0) for m, _, _ in stats],
            0.4,
            yerr=[100 * (s or 0) for _, s, _ in stats],
            capsize=3,
            label=f"{split} Avg@4",
        )
    ax.set_xticks(
        [j + 0.2 for j in range(len(names))], [LABELS[n] for n in names], rotation=20, fontsize=8
    )
    ax.set_ylabel("Avg@4 (%)")
    ax.legend(fontsize=8)
    plot = save_figure(fig, x.out / plot_name)
    runs = [with_phase_starts(x.summaries[variant][s]) for s in x.seeds]
    claims, judged = claims_table(x.profile.env, runs)
    legend = (
        "Total env steps = training rollouts and probes + replays + the expert runs behind "
        "the demonstrations and checkpoints used + evaluations that selected something, "
        'inherited along the chain (docs/RESULTS.md, "How we measure"). Target per seed: '
        "the mean of Base->Vanilla's last three Val Avg@4; `>=`: censored at the budget."
    )
    markdown = (
        f"{legend}\n\n{table}\n\n![{x.exp.title}]({plot})\n\n#### The paper's claims on these "
        f"runs\n\nPaired per-seed differences (ours minus theirs), 95% bootstrap interval of "
        f"the mean; held / contradicted: the interval excludes zero in / against the paper's "
        f"direction; inconclusive otherwise.\n\n{claims}\n"
    )
    return markdown, {"rows": data, "claims": judged}


# -- the device: clean or noisy phone, demonstrations from either ---------------------------------
@analysis("device")
def device(x: Inputs) -> Section:
    parts, data = [], {}
    for variant in x.exp.variants_for(x.profile):
        experts = [_experts_summary(x.run_dir(variant, s)) for s in x.seeds]
        label = (
            "demonstrations from the training device"
            if variant == "default"
            else VARIANTS[variant].label
        )
        markdown, data[variant] = _full_table(x, variant, f"device-{variant}.png")
        data[variant]["experts"] = experts
        parts.append(f"#### {label}\n\n{_experts_table(experts)}\n\n{markdown}")
    return Section("\n".join(parts), data)


def _experts_summary(run: Path) -> dict[str, Any]:
    train = json.loads((run / "experts" / "train" / "experts.json").read_text())
    return {
        "verified_rate": train["verified_rate"],
        "env_steps": train["env_steps"],
        **train.get("perturbations", {"by_kind": {}, "episode_share": 0.0}),
    }


def _experts_table(experts: Sequence[dict[str, Any]]) -> str:
    kinds = sorted({k for e in experts for k in e["by_kind"]})
    rows = [
        ["expert success on train", fmt_pct([e["verified_rate"] for e in experts])],
        ["expert runs with a perturbation", fmt_pct([e["episode_share"] for e in experts])],
    ]
    rows += [
        [f"perturbations: {k}", fmt_count([e["by_kind"].get(k, 0) for e in experts])] for k in kinds
    ]
    return markdown_table(["expert runs (train split, per seed)", "value"], rows)


# -- Figure 4 -----------------------------------------------------------------------------------
@analysis("efficiency")
def efficiency(x: Inputs) -> Section:
    names = [n for n in RL_RUNS if any(x.curve("default", s, n) for s in x.seeds)]
    costs = {n: x.to_target("default", n) for n in names}
    train = {n: x.to_target("default", n, "train") for n in names}
    rows = [
        [
            LABELS[n],
            fmt_censored(costs[n]),
            str(sum(not c.censored for c in costs[n])),
            fmt_censored(train[n]) if train[n] else "-",
            str(sum(not c.censored for c in train[n])) if train[n] else "-",
            fmt_pct(x.values("default", n, "val_avg4")),
            fmt_pct(x.values("default", n, "train_avg4")),
        ]
        for n in names
    ]
    table = markdown_table(
        [
            "configuration",
            "total env steps to Val target (median)",
            "seeds reaching it",
            "to Train target (median)",
            "seeds reaching it",
            "final Val Avg@4",
            "final Train Avg@4",
        ],
        rows,
    )
    paired = _paired_rows(x, names)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    colours = dict(zip(names, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    for name in names:
        for i, seed in enumerate(x.seeds):
            pts = [p for p in x.curve("default", seed, name) if p.get("val_avg") is not None]
            ys = [100 * p["val_avg"] for p in pts]
            legend = LABELS[name] if i == 0 else None
            style = "--" if "vanilla" in name else "-"
            for ax, key in zip(axes, ("total_env_steps", "policy_samples"), strict=True):
                ax.plot(
                    [p[key] for p in pts],
                    ys,
                    style,
                    color=colours.get(name),
                    alpha=0.5,
                    lw=0.8,
                    label=legend,
                )
    for ax, xlabel in zip(
        axes, ("total env steps (whole bill)", "policy samples (whole bill)"), strict=True
    ):
        ax.set_xlabel(xlabel)
        ax.set_ylabel("Val Avg@4 (%)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    plot = save_figure(fig, x.out / "figure4.png")
    note = (
        "Every configuration is evaluated on `val` at iteration 0, at the first iteration past "
        "each cost mark and at the end; x is the configuration's whole bill at that evaluation. "
        "Two targets per seed: Val (ours, the mean of Base->Vanilla's last three Val Avg@4) and "
        "Train (the paper's yardstick: the same on Train Avg@4, the tasks being trained; `-` "
        "where the runs did not evaluate train at the marks)."
    )
    data = {n: [{"value": c.value, "budget": c.budget} for c in costs[n]] for n in names}
    to_train = {n: [{"value": c.value, "budget": c.budget} for c in train[n]] for n in names}
    table += paired
    savings = saving_rows([x.summaries["default"][s] for s in x.seeds], LABELS)
    model = (
        "\nPredicted and measured saving (mean over seeds [95% bootstrap interval]; the "
        "prediction is each run's cost model at the updating iterations N its Vanilla needed, "
        "`adaroll/experiments/savings.py`):\n\n" + markdown_table(SAVINGS_HEADER, savings) + "\n"
        if savings
        else ""
    )
    return Section(
        f"{note}\n\n{table}\n{model}\n![{x.exp.title}]({plot})\n",
        {"to_target": data, "to_train_target": to_train},
    )


def _paired_rows(x: Inputs, names: Sequence[str]) -> str:
    """Each Hybrid configuration against its Vanilla pair, to the Val and to the Train target:
    the paired saving (Vanilla - Hybrid total env steps, 95% interval) and its verdict."""
    rows = []
    for hybrid, vanilla in HYBRID_PAIRS.items():
        if hybrid not in names or vanilla not in names:
            continue
        row = [f"{LABELS[hybrid]} vs {LABELS[vanilla]}"]
        for split in SPLITS:
            pairs = [(x.row("default", s, vanilla), x.row("default", s, hybrid)) for s in x.seeds]
            saved = paired_saving(pairs, split)
            row += [fmt_interval(saved), verdict(saved, +1) if saved else "-"]
        rows.append(row)
    if not rows:
        return ""
    header = [
        "pair",
        "saved to Val target: Vanilla - Hybrid [95% CI]",
        "verdict",
        "saved to Train target [95% CI]",
        "verdict",
    ]
    return "\n\n" + markdown_table(header, rows)


# -- Figure 5 -----------------------------------------------------------------------------------
@analysis("routing")
def routing(x: Inputs) -> Section:
    modes = ("local", "suffix", "root")
    panels = [(v, n) for v in x.exp.variants_for(x.profile) for n in x.exp.configurations]
    data: dict[str, dict[str, list[float]]] = {}
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
    for ax, (variant, name) in zip(axes[0], panels, strict=True):
        per_seed = [
            _route_shares(x.run_dir(variant, s) / name / "metrics.jsonl", modes) for s in x.seeds
        ]
        length = min((len(r["local"]) for r in per_seed), default=0)
        mean = {
            m: [sum(r[m][i] for r in per_seed) / len(per_seed) for i in range(length)]
            for m in modes
        }
        title = (
            LABELS[name] if variant == "default" else f"{LABELS[name]}, {VARIANTS[variant].label}"
        )
        data[name if variant == "default" else f"{variant}/{name}"] = mean
        for m in modes:
            ax.plot(range(1, length + 1), [100 * v for v in mean[m]], label=m)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("iteration")
        ax.set_ylabel("share of tasks (%), mean over seeds")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    plot = save_figure(fig, x.out / "figure5.png")
    rows = []
    for key, mean in data.items():
        n = len(mean["root"])
        for i in sorted({0, n // 4, n // 2, (3 * n) // 4, n - 1}) if n else ():
            rows.append([key, str(i + 1), *(f"{100 * mean[m][i]:.1f}" for m in modes)])
    table = markdown_table(["configuration", "iteration", "Local %", "Suffix %", "Root %"], rows)
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


# -- ablations of one configuration (thresholds, beyond-the-paper options) -----------------------
@analysis("options", "bandit-action", "train-probes", "text-match")
def ablation(x: Inputs) -> Section:
    (name,) = x.exp.configurations
    data, rows = {}, []
    for variant in x.exp.variants_for(x.profile):
        to_fixed = [
            cost_to_reach(x.curve(variant, seed, name), x.profile.fixed_target)[0]
            for seed in x.seeds
        ]
        costs = x.to_target(variant, name)
        rule = promotion(
            x.profile.env,
            [x.row(variant, s, name) for s in x.seeds],
            [x.row("default", s, name) for s in x.seeds],
        )
        d: dict[str, Any] = {k: x.values(variant, name, k) for k in (*SCORES, *BILL_KEYS)}
        d |= {
            "steps_to_target": [{"value": c.value, "budget": c.budget} for c in costs],
            "steps_to_fixed_target": to_fixed,
            "promotion": rule,
        }
        data[variant] = d
        decision = (
            "-"
            if variant == "default"
            else (
                f"{fmt_interval(rule['steps']['interval'])} steps, "
                f"{fmt_interval(rule['val']['interval'], scale=100, unit=' pts')} val: {rule['decision']}"
            )
        )
        rows.append(
            [
                VARIANTS[variant].label,
                fmt_pct(d["val_avg4"]),
                fmt_pct(d["heldout_avg4"]),
                fmt_count(d["total_env_steps"]),
                fmt_count(d["policy_samples"]),
                fmt_censored(costs),
                fmt_count(to_fixed),
                decision,
            ]
        )
    table = markdown_table(
        [
            f"{LABELS[name]} variant",
            "Val Avg@4",
            "Held-Out Avg@4",
            "total env steps",
            "policy samples",
            "total env steps to target (median)",
            "to fixed target",
            "vs default: paired differences [95% CI] and the promotion rule",
        ],
        rows,
    )
    note = (
        f"Every variant trains {LABELS[name]} with the same budget and seeds; each seed's target "
        f"is the mean of the default run's Base->Vanilla's last three Val Avg@4 (the variants "
        f"share its Base and do not train Base->Vanilla themselves); the fixed target is "
        f"{100 * x.profile.fixed_target:.0f} Val Avg@4. Decisions read Val; Held-Out is reported."
    )
    return Section(f"{note}\n\n{table}\n", {"rows": data})


MIN_OPTIMIZER_STEPS = 50
"""A recipe must make at least this many optimizer steps in the phase the headline compares."""


@analysis("sensitivity")
def sensitivity(x: Inputs) -> Section:
    """The ablation table every option gets, then the thresholds' sensitivity."""
    rows, judged = ablation(x), sensitivity_section(x)
    return Section(f"{rows.markdown}\n{judged.markdown}", rows.data | {"sensitivity": judged.data})


@analysis("recipe")
def recipe(x: Inputs) -> Section:
    """The recipe sweep: Base->Vanilla under each recipe, judged on ``val`` only (Held-Out is
    not read). The choice is the best mean Val Avg@4 among recipes with enough optimizer steps."""
    name, rows, data = "base_vanilla", [], {}
    for variant in x.exp.variants_for(x.profile):
        val = [v for v in x.values(variant, name, "val_avg4") if v is not None]
        steps = [v for v in x.values(variant, name, "optimizer_steps") if v is not None]
        last3 = [
            sum(p["val_avg"] for p in c[-3:]) / len(c[-3:])
            for s in x.seeds
            if (c := [p for p in x.curve(variant, s, name) if p.get("val_avg") is not None])
        ]
        data[variant] = {
            "val_avg4": val,
            "val_last3": last3,
            "optimizer_steps": steps,
            "iterations": x.values(variant, name, "iterations"),
        }
        rows.append([VARIANTS[variant].label, fmt_pct(val), fmt_pct(last3), fmt_count(steps)])
    eligible = {
        v: d
        for v, d in data.items()
        if d["optimizer_steps"]
        and min(d["optimizer_steps"]) >= MIN_OPTIMIZER_STEPS
        and d["val_avg4"]
    }
    chosen = max(
        eligible,
        key=lambda v: sum(eligible[v]["val_avg4"]) / len(eligible[v]["val_avg4"]),
        default=None,
    )
    table = markdown_table(
        ["recipe", "Val Avg@4 at the budget", "Val Avg@4, last three marks", "optimizer steps"],
        rows,
    )
    verdict = (
        f"Chosen: **{VARIANTS[chosen].label}** (`{chosen}`)."
        if chosen
        else f"No recipe made {MIN_OPTIMIZER_STEPS} optimizer steps in every seed."
    )
    return Section(f"{table}\n\n{verdict}\n", {"rows": data, "chosen": chosen})


@analysis("bandit-routing")
def bandit_routing(x: Inputs) -> Section:
    """The bandit against the thresholds on Base->Hybrid - the promotion rule (profiles without
    an options run need it here) - both routers' shares over training, and what the bandit's
    probes credited each kind of arm with."""
    rule, shares, credit = ablation(x), routing(x), _bandit_credit(x)
    return Section(
        f"{rule.markdown}\n{shares.markdown}\n{credit.markdown}",
        rule.data | shares.data | credit.data,
    )


def _bandit_credit(x: Inputs) -> Section:
    """Progress (change of root success between counted probes) that the bandit credited to
    each kind of arm, from its final state: discounted sums over the seeds."""
    rows, data = [], {}
    for variant in x.exp.variants_for(x.profile):
        for name in x.exp.configurations:
            sums: dict[str, list[float]] = {}
            for seed in x.seeds:
                meta = x.run_dir(variant, seed) / name / "state" / "meta.json"
                pooled = (
                    json.loads(meta.read_text()).get("scheduler", {}).get("pooled")
                    if meta.exists()
                    else None
                )
                for kind, entry in (pooled or {}).items():
                    arm = "suffix" if kind.startswith("suffix") else kind
                    total = sums.setdefault(arm, [0.0, 0.0, 0.0])
                    total[:] = [a + b for a, b in zip(total, entry, strict=True)]
            for arm in ("local", "suffix", "root"):
                if arm in sums:
                    pulls, progress, cost = sums[arm]
                    data[f"{variant}/{name}/{arm}"] = {
                        "pulls": pulls,
                        "progress": progress,
                        "cost": cost,
                    }
                    rows.append(
                        [
                            f"{variant}/{name}",
                            arm,
                            f"{pulls:.1f}",
                            f"{progress / max(pulls, 1e-9):+.4f}",
                            f"{1000 * progress / max(cost, 1e-9):+.3f}",
                        ]
                    )
    if not rows:
        return Section("")
    note = (
        "What the bandit's counted root probes credited each kind of arm with, from its final "
        "state (discounted sums over the seeds; a pull's cost is its env steps plus its policy "
        "samples at the configured price)."
    )
    table = markdown_table(
        ["configuration", "arm", "pulls", "progress per pull", "progress per 1,000 cost"], rows
    )
    return Section(f"{note}\n\n{table}\n", {"credit": data})


# -- Table 1 ------------------------------------------------------------------------------------
@analysis("restore-cost")
def restore_cost(x: Inputs) -> Section:
    from adaroll.config import load_config
    from adaroll.experiments import restore_cost as rc

    env = load_config(None, [*x.profile.overrides, *(x.profile.quick if x.quick else ())]).env
    result = rc.measure(
        env.name, x.seeds, restores=2 if x.quick else 5, env_options=dict(env.options)
    )
    return Section(rc.markdown(result, env.name), result)
