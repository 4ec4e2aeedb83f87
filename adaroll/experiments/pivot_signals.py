"""Where the pivot signals differ, on one seed: every train checkpoint scored by the starting
policy under each signal, from the *same* N samples, and the states each signal picks that the
others do not, with their action-count patterns in the paper's Table 4 notation (``6-1-1``,
``5-3``, ``4-4``, ``1x8``).

Every variant of the ``pivots`` experiment shares the seed's Base and scores Stage I's pivots
with the same seed (``derive_seed(seed, "pivots", "stage1")``), so the five pivot files of a
seed were scored from one draw of N actions per checkpoint. :func:`measure` draws it again
(:func:`adaroll.training.pivot_scoring.sample_evidence`), computes every signal from it, selects
each signal's pivots with the run's own Stage I settings and checks them against the pivot files
the runs trained on (``reproduced``). It only reads the run directories.

The paper's argument for disagreement is the state where "eight different actions all earn
reward 0": reward variance is zero there (no gradient, no signal) while the policy plainly
hesitates. :func:`summarise` counts how often that is the case among the states disagreement
picks and reward variance does not.
"""

from __future__ import annotations

import json
import math
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from adaroll.algos.pivots import PIVOT_SCORERS, cluster_sizes, disagreement_from_counts  # noqa: E402
from adaroll.experiments.inputs import markdown_table, save_figure  # noqa: E402
from adaroll.experiments.specs import EXPERIMENTS  # noqa: E402
from adaroll.experiments.variants import VARIANTS  # noqa: E402

COMPARED = ("disagreement", "reward_variance", "entropy")
"""The signals whose picks are compared: a state "only one signal picks" is one the other two
do not. ``all`` (every checkpoint) and ``random`` are reference rows, not signals of a state."""
REFERENCE = ("all", "random", "reward_variance_mixed")
RULES: dict[str, tuple[str, dict[str, Any]]] = {
    **{name: (name, {}) for name in (*COMPARED, "all", "random")},
    "reward_variance_mixed": ("reward_variance", {"tau_dis": 0.0, "fallback_top_k": 0}),
}
"""Row -> (scorer, changes to the run's Stage I pivot settings). Every signal is gated at the
run's ``tau_dis``, as its variant was trained; on 0/1 rewards reward variance p(1 - p) never
exceeds 0.25, so at tau_dis = 0.45 every task takes its fallback. ``reward_variance_mixed`` is
PivotRL's own rule for comparison: every state whose samples' rewards differ, no fallback (no
variant trains on it)."""
LABELS = {
    "disagreement": "action disagreement",
    "reward_variance": "reward variance",
    "entropy": "entropy",
    "all": "all checkpoints",
    "random": "random",
    "reward_variance_mixed": "reward variance > 0 (PivotRL's rule; not a run)",
}
BARS = (
    "disagreement-reward_variance",
    "reward_variance-disagreement",
    "disagreement-entropy",
    "entropy-disagreement",
)
"""The differences the figure draws: the paper's two comparisons at equal budget."""
TOP_PATTERNS = 4
"""Patterns listed per row of the markdown table (the JSON holds them all)."""


def pattern(counts: Iterable[int]) -> str:
    """Cluster sizes in the paper's Table 4 notation: sizes largest first joined by ``-``
    (``6-1-1``, ``5-3``, ``8``), and ``1xN`` when every sample is its own decision."""
    sizes = sorted((int(c) for c in counts if c), reverse=True)
    if not sizes:
        raise ValueError("a pattern needs at least one sample")
    if len(sizes) > 1 and sizes[0] == 1:
        return f"1x{len(sizes)}"
    return "-".join(map(str, sizes))


def pattern_disagreement(name: str) -> float:
    """D of a pattern written by :func:`pattern` (``6-1-1`` -> 0.464)."""
    if name.startswith("1x"):
        return disagreement_from_counts([1] * int(name[2:]))
    return disagreement_from_counts([int(n) for n in name.split("-")])


def variant_of_signal() -> dict[str, str]:
    """signal -> the ``pivots`` experiment's variant that trains Stage I on it (the first one
    when two do, e.g. ``pivots-all`` before ``pivots-all-long``); ``default`` trains on the
    configured scorer (disagreement)."""
    out: dict[str, str] = {}
    for variant in EXPERIMENTS.get("pivots").variants:
        scorers = [
            o.split("=", 1)[1]
            for o in VARIANTS[variant].overrides
            if o.startswith("stage1.pivots.scorer=")
        ]
        signal = scorers[0] if scorers else "disagreement"
        out.setdefault(signal, variant)
    return out


@dataclass(frozen=True)
class StateSignals:
    """One checkpoint under every signal, from one draw of N samples."""

    id: str
    task: str
    step: int
    pattern: str
    reward_mean: float
    """Share of the N samples that match the expert's action (the OneStep reward's mean)."""
    scores: dict[str, float]
    """Signal -> score (:data:`adaroll.algos.pivots.PIVOT_SCORERS`)."""

    @property
    def zero_variance(self) -> bool:
        return self.scores["reward_variance"] == 0.0


@dataclass
class SignalsResult:
    run: str
    tau: float
    """The Stage I gate (``stage1.pivots.tau_dis``) every signal's scores were compared with."""
    fallback_top_k: int
    states: list[StateSignals]
    picks: dict[str, list[str]]
    """Signal -> the checkpoints its Stage I would train on (the run's selection rule)."""
    fallback_tasks: dict[str, int]
    """Signal -> tasks with no checkpoint above the gate (their pivots are the fallback's)."""
    reproduced: dict[str, bool]
    """Variant -> whether its saved Stage I pivot file has these scores and pivots (variants
    without a saved file are absent)."""


def measure(run: Path, say: Callable[[str], None] = print) -> SignalsResult:
    """Score every train checkpoint of ``run`` (a run directory with a finished Base) with Base
    under every registered signal, from one draw of samples, as its Stage I scored them. Reads
    only: nothing is written under ``run``."""
    from adaroll.config import load_config
    from adaroll.policies import load_policy
    from adaroll.policies.base import Context
    from adaroll.seeding import derive_seed
    from adaroll.training.pipeline import Pipeline
    from adaroll.training.pivot_scoring import sample_evidence, select

    run = Path(run)
    for needed in ("config.yaml", "experts/train/experts.json", "policies/base/done"):
        if not (run / needed).exists():
            raise FileNotFoundError(
                f"{run / needed} does not exist: not a run with a finished Base"
            )
    cfg = load_config(run / "config.yaml")
    pipeline = Pipeline(cfg, run, progress=False, say=say)
    store = pipeline.store("train")
    policy = load_policy(cfg.policy, run / "policies" / "base")
    window = policy.history_window

    def context_at(c: Any) -> Context:
        return Context(
            c.instruction, c.observation, tuple(c.history[-window:]) if window > 0 else ()
        )

    phase = cfg.stage1
    matcher = phase.match.build()
    states: list[StateSignals] = []
    for ckpt, evidence in sample_evidence(
        policy,
        context_at,
        list(store),
        phase.pivots.n_samples,
        derive_seed(cfg.seed, "pivots", "stage1"),
        matcher,
    ):
        rewards = evidence.rewards or ()
        states.append(
            StateSignals(
                ckpt.id,
                ckpt.task.id,
                ckpt.step,
                pattern(cluster_sizes(evidence.actions, matcher)),
                sum(rewards) / len(rewards),
                {name: float(PIVOT_SCORERS.get(name)(evidence)) for name in PIVOT_SCORERS.names()},
            )
        )
    picks, fallback, reproduced = {}, {}, {}
    variants = variant_of_signal()
    for signal in (*COMPARED, *REFERENCE):
        scorer, changes = RULES[signal]
        scores = {s.id: s.scores[scorer] for s in states}
        chosen = select(
            store, scores, phase.pivots.model_copy(update={"scorer": scorer, **changes})
        )
        picks[signal] = [c for ids in chosen.pivots.values() for c in ids]
        fallback[signal] = sum(
            1
            for task, ids in chosen.pivots.items()
            if ids
            and not any(scores[c] > chosen.thresholds.get(task, phase.pivots.tau_dis) for c in ids)
        )
        saved = run.parent.parent / variants.get(signal, "") / run.name / "pivots" / "stage1.json"
        if signal in variants and saved.exists():
            reproduced[variants[signal]] = _same_set(
                json.loads(saved.read_text()), scores, chosen.pivots
            )
    return SignalsResult(
        str(run),
        phase.pivots.tau_dis,
        phase.pivots.fallback_top_k,
        states,
        picks,
        fallback,
        reproduced,
    )


def _same_set(
    saved: Mapping[str, Any], scores: Mapping[str, float], pivots: Mapping[str, list[str]]
) -> bool:
    """Whether a saved pivot file holds these scores (to 1e-9; NaN equals NaN) and pivots."""
    if set(saved["scores"]) != set(scores) or saved["pivots"] != dict(pivots):
        return False
    return all(
        (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9
        for a, b in ((float(saved["scores"][k]), scores[k]) for k in scores)
    )


# -- what the picks have in common -------------------------------------------------------------
def exclusive(
    picks: Mapping[str, Iterable[str]], signals: Sequence[str] = COMPARED
) -> dict[str, set[str]]:
    """Signal -> the states it picks that none of the other ``signals`` picks."""
    sets = {s: set(picks[s]) for s in signals}
    return {s: sets[s] - set().union(*(sets[o] for o in signals if o != s)) for s in signals}


def describe(states: Sequence[StateSignals], tau: float) -> dict[str, Any]:
    """A set of states: how many, their patterns (most common first), how many have zero reward
    variance (split by all samples failing / all matching the expert) and how many of those the
    policy hesitates at (D > ``tau``): the paper's "different actions, all reward 0" case."""
    zero = [s for s in states if s.zero_variance]
    return {
        "states": len(states),
        "patterns": dict(Counter(s.pattern for s in states).most_common()),
        "zero_variance": len(zero),
        "all_reward_0": sum(s.reward_mean == 0 for s in zero),
        "all_reward_1": sum(s.reward_mean == 1 for s in zero),
        "hesitant_all_reward_0": sum(
            s.reward_mean == 0 and s.scores["disagreement"] > tau for s in zero
        ),
    }


def differences(picks: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, set[str]]]:
    """Where the compared signals differ: for each ordered pair ``a, b`` the states ``a`` picks
    and ``b`` does not (key ``a-b``), and for each signal those no other one picks (key
    ``only-a``); values are (a description, the states)."""
    sets = {s: set(picks[s]) for s in COMPARED}
    out = {
        f"{a}-{b}": (f"{LABELS[a]}, not {LABELS[b]}", sets[a] - sets[b])
        for a in COMPARED
        for b in COMPARED
        if a != b
    }
    for signal, ids in exclusive(picks).items():
        out[f"only-{signal}"] = (f"{LABELS[signal]} alone", ids)
    return out


def summarise(result: SignalsResult) -> dict[str, Any]:
    """The numbers behind the tables and the figure (what ``signals.json`` holds besides the
    per-state scores)."""
    by_id = {s.id: s for s in result.states}
    signals = {}
    for signal in (k for k in (*COMPARED, *REFERENCE) if k in result.picks):
        signals[signal] = describe([by_id[i] for i in result.picks[signal]], result.tau) | {
            "fallback_tasks": result.fallback_tasks[signal]
        }
    picked = {k: set(result.picks[k]) for k in COMPARED}
    table4: dict[str, dict[str, Any]] = {}
    for s in result.states:
        entry = table4.setdefault(
            s.pattern,
            {"D": pattern_disagreement(s.pattern), "states": 0, "all_reward_0": 0}
            | {f"picked_{k}": 0 for k in COMPARED},
        )
        entry["states"] += 1
        entry["all_reward_0"] += s.reward_mean == 0
        for k in COMPARED:
            entry[f"picked_{k}"] += s.id in picked[k]
    return {
        "run": result.run,
        "tau": result.tau,
        "fallback_top_k": result.fallback_top_k,
        "checkpoints": len(result.states),
        "reproduced": result.reproduced,
        "signals": signals,
        "differences": {
            key: {"label": label} | describe([by_id[i] for i in sorted(ids)], result.tau)
            for key, (label, ids) in differences(result.picks).items()
        },
        "all_states": describe(result.states, result.tau),
        "table4": dict(sorted(table4.items(), key=lambda kv: (kv[1]["D"], kv[0]))),
    }


def _patterns(patterns: Mapping[str, int], top: int = TOP_PATTERNS) -> str:
    if not patterns:
        return "-"
    items = list(patterns.items())
    shown = ", ".join(f"{p} ({n})" for p, n in items[:top])
    rest = sum(n for _, n in items[top:])
    return shown + (f", other ({rest})" if rest else "")


def _share(part: int, whole: int) -> str:
    return f"{part} ({100 * part / whole:.0f}%)" if whole else "0"


def markdown(summary: Mapping[str, Any], figure: str | None = None) -> str:
    """The tables and the sentences of ``signals.md``, from :func:`summarise`'s numbers."""
    tau = summary["tau"]
    case = f"D > {tau:g}, all reward 0"

    def cells(row: Mapping[str, Any]) -> list[str]:
        return [
            str(row["states"]),
            _patterns(row["patterns"]),
            _share(row["zero_variance"], row["states"]),
            _share(row["hesitant_all_reward_0"], row["states"]),
        ]

    per_signal = markdown_table(
        ["signal", "pivots", "patterns", "reward variance 0", case, "tasks on fallback"],
        [
            [LABELS.get(k, k), *cells(row), str(row["fallback_tasks"])]
            for k, row in summary["signals"].items()
        ],
    )
    differ = markdown_table(
        ["states picked by", "states", "their patterns", "reward variance 0", case],
        [[row["label"], *cells(row)] for row in summary["differences"].values()],
    )
    t4 = markdown_table(
        ["pattern", "D", "checkpoints", "all samples reward 0", *(LABELS[k] for k in COMPARED)],
        [
            [
                p,
                f"{e['D']:.3f}",
                str(e["states"]),
                str(e["all_reward_0"]),
                *(str(e[f"picked_{k}"]) for k in COMPARED),
            ]
            for p, e in summary["table4"].items()
        ],
    )
    d_not_rv = summary["differences"]["disagreement-reward_variance"]
    rv_not_d = summary["differences"]["reward_variance-disagreement"]
    everyone = summary["all_states"]
    sentences = (
        f"Of the {d_not_rv['states']} states disagreement picks and reward variance does not, "
        f"{_share(d_not_rv['zero_variance'], d_not_rv['states'])} have reward variance 0, "
        f"{_share(d_not_rv['hesitant_all_reward_0'], d_not_rv['states'])} with D > {tau:g} and "
        f'every sample earning reward 0 (the paper\'s "different actions, all reward 0" '
        f"case); over all {everyone['states']} checkpoints that case occurs "
        f"{everyone['hesitant_all_reward_0']} times. Reward variance picks "
        f"{rv_not_d['states']} state(s) disagreement does not (patterns: "
        f"{_patterns(rv_not_d['patterns'])})."
    )
    reproduced = summary["reproduced"]
    check = (
        "Scores and pivots recomputed here equal the saved pivot files of "
        + ", ".join(f"`{v}` ({'yes' if ok else 'NO'})" for v, ok in reproduced.items())
        + "."
        if reproduced
        else "No saved pivot file to check against."
    )
    legend = (
        f"Every train checkpoint of `{summary['run']}` ({summary['checkpoints']}) scored by Base "
        f"under each signal from the same N samples (the draw the runs' Stage I scored); each "
        f"signal's pivots by the runs' rule: score > {tau:g}, else the task's "
        f'{summary["fallback_top_k"]} highest ("tasks on fallback"). Pattern: sizes of the '
        f"action clusters, largest first (Table 4). {check}"
    )
    fig = f"\n\n![where the pivot signals differ]({figure})" if figure else ""
    return (
        f"{legend}\n\n{per_signal}\n\nWhere they differ:\n\n{differ}\n\n{sentences}\n\n"
        f"Table 4 view (every checkpoint by pattern):\n\n{t4}{fig}\n"
    )


def plot(result: SignalsResult, path: Path) -> str:
    """Left: D against reward variance per checkpoint, coloured by which of the two signals
    picks it; right: the patterns of the states each compared signal alone picks."""
    dis, rv = set(result.picks["disagreement"]), set(result.picks["reward_variance"])
    groups = {  # neither first: drawn underneath
        "neither": {s.id for s in result.states} - dis - rv,
        "both": dis & rv,
        "disagreement only": dis - rv,
        "reward variance only": rv - dis,
    }
    colours = {
        "both": "tab:purple",
        "disagreement only": "tab:blue",
        "reward variance only": "tab:red",
        "neither": "lightgrey",
    }
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    by_id = {s.id: s for s in result.states}
    for name, ids in groups.items():
        pts = [by_id[i] for i in sorted(ids)]
        jitter = [((zlib.crc32(s.id.encode()) % 1000) / 1000 - 0.5) * 0.012 for s in pts]
        left.scatter(
            [s.scores["disagreement"] + j for s, j in zip(pts, jitter, strict=True)],
            [s.scores["reward_variance"] + j / 4 for s, j in zip(pts, jitter, strict=True)],
            s=12,
            alpha=0.7,
            color=colours[name],
            label=f"{name} ({len(pts)})",
        )
    left.axvline(result.tau, color="k", lw=0.8, ls="--")
    left.set_xlabel("action disagreement D (jittered)")
    left.set_ylabel("reward variance of the N samples (jittered)")
    left.set_title("every train checkpoint, scored by Base", fontsize=9)
    left.legend(fontsize=7)
    sets = differences(result.picks)
    shown = [k for k in BARS if k in sets]
    names = [sets[k][0].replace(", not ", "\nnot ") for k in shown]
    bottom = [0] * len(shown)
    for colour, (band, members) in zip(
        plt.get_cmap("viridis")(np.linspace(0, 0.95, len(BANDS) + 1)),
        _bands(result.states),
        strict=True,
    ):
        counts = [len(sets[k][1] & members) for k in shown]
        right.bar(names, counts, bottom=bottom, label=band, color=colour)
        bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
    for x, k in enumerate(shown):
        zero = sum(by_id[i].zero_variance for i in sets[k][1])
        right.annotate(f"RV = 0: {zero}", (x, bottom[x]), ha="center", va="bottom", fontsize=7)
    right.tick_params(axis="x", labelsize=7)
    right.set_ylim(top=1.15 * max([*bottom, 1]))
    right.set_ylabel("states")
    right.set_title("where the signals differ: action-count patterns (Table 4)", fontsize=9)
    right.legend(fontsize=6, title="pattern (D)", title_fontsize=7)
    return save_figure(fig, path)


BANDS = ("8", "7-1", "6-2", "6-1-1", "5-3", "4-4")
"""The figure's colours: Table 4's reference patterns, then every more split one together."""


def _bands(states: Sequence[StateSignals]) -> list[tuple[str, set[str]]]:
    out = [
        (f"{p} ({pattern_disagreement(p):.2f})", {s.id for s in states if s.pattern == p})
        for p in BANDS
    ]
    rest = {s.id for s in states if s.pattern not in BANDS}
    return [*out, ("any other (more split)", rest)]


def write(result: SignalsResult, out: Path) -> dict[str, Any]:
    """``signals.md``, ``signals.json`` (summary and every state's scores) and ``signals.png``
    under ``out``; returns the summary."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    summary = summarise(result)
    figure = plot(result, out / "signals.png")
    (out / "signals.md").write_text(markdown(summary, figure))
    data = summary | {"picks": result.picks, "states": [asdict(s) for s in result.states]}
    (out / "signals.json").write_text(json.dumps(data, indent=1))
    return summary
