"""Where a configuration's env steps go and where its gradient comes from: per mode and purpose
(routing pass, re-evaluation, Local, Suffix, Root; Vanilla's root groups), the env steps, the
groups, the groups the update skipped for equal rewards and the decisions that carried a
gradient.

Read from each RL phase's ``metrics.jsonl`` (its iteration rows' ``episodes``, written by
:meth:`adaroll.training.trainer.Trainer._episode_stats`), so a run's summary and its report
redraw it without the ledger. A configuration's table covers its own RL phase (Action's covers
Stage I); what it inherits (demonstrations, Base) is in its bill, not here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from adaroll.jsonl import read_jsonl
from adaroll.routes import VANILLA, StartKind

EPISODE_STATS = (
    "groups",
    "samples",
    "successes",
    "env_steps",
    "success_decisions",
    "failure_decisions",
    "start_depth",
    "groups_skipped",
    "gradient_decisions",
)
"""The counters of an iteration row's ``episodes`` entry (one per ``mode/purpose``)."""
COLUMNS = ("env_steps", "groups", "groups_skipped", "gradient_decisions")
"""What the purpose table shows of each ``mode/purpose``."""
LABELS = {
    f"{StartKind.ROOT}/routing": "routing pass",
    f"{StartKind.ROOT}/reeval": "re-evaluation",
    f"{StartKind.ONESTEP}/train": "Local (one-step)",
    f"{StartKind.SUFFIX}/train": "Suffix",
    f"{StartKind.ROOT}/train": "Root",
    f"{VANILLA}/train": "Vanilla (root groups)",
}
"""``mode/purpose`` -> what the tables call it, in the order they list them. ``root/routing`` is
every task's first probes (the routing pass), ``root/reeval`` the later probes (Local
re-evaluations, the forgetting monitor's, the bandit's)."""
PHASES = {"stage1": "action"}
"""Phase directories whose configuration has another name."""


def phase_purposes(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """The :data:`COLUMNS` of a phase's iteration ``rows``, summed per ``mode/purpose`` (in
    :data:`LABELS` order, then any other key)."""
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        if row.get("kind") != "iteration":
            continue
        for key, stats in row.get("episodes", {}).items():
            total = out.setdefault(key, dict.fromkeys(COLUMNS, 0))
            for name in COLUMNS:
                total[name] += int(stats.get(name, 0))
    return {k: out[k] for k in sorted(out, key=_order)}


def phase_series(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[int]]:
    """Per ``mode/purpose``, the env steps of each iteration of a phase (0 where it had none)."""
    iterations = [r for r in rows if r.get("kind") == "iteration"]
    keys = sorted({k for r in iterations for k in r.get("episodes", {})}, key=_order)
    return {
        k: [int(r.get("episodes", {}).get(k, {}).get("env_steps", 0)) for r in iterations]
        for k in keys
    }


def run_purposes(run: Path, configurations: Sequence[str]) -> dict[str, dict[str, dict[str, int]]]:
    """Per configuration of ``configurations`` that has an RL phase under ``run`` (a run
    directory), its :func:`phase_purposes`."""
    out = {}
    for phase in sorted(p.name for p in Path(run).iterdir() if (p / "metrics.jsonl").exists()):
        name = PHASES.get(phase, phase)
        if name in configurations:
            records, _ = read_jsonl(Path(run) / phase / "metrics.jsonl")
            out[name] = phase_purposes(records)
    return out


def purpose_rows(
    purposes: Mapping[str, Mapping[str, Mapping[str, float]]], labels: Mapping[str, str]
) -> list[list[str]]:
    """Markdown rows: per configuration and ``mode/purpose``, the :data:`COLUMNS` (means when the
    values are means over seeds) with each one's share of the configuration's env steps and of
    its decisions with a gradient."""
    rows = []
    for name, by_key in purposes.items():
        steps = sum(v["env_steps"] for v in by_key.values()) or 1
        decisions = sum(v["gradient_decisions"] for v in by_key.values()) or 1
        for key, v in by_key.items():
            rows.append(
                [
                    labels.get(name, name),
                    LABELS.get(key, key),
                    f"{v['env_steps']:,.0f}",
                    f"{100 * v['env_steps'] / steps:.1f}",
                    f"{v['groups']:,.0f}",
                    f"{v['groups_skipped']:,.0f}",
                    f"{v['gradient_decisions']:,.0f}",
                    f"{100 * v['gradient_decisions'] / decisions:.1f}",
                ]
            )
    return rows


HEADER = (
    "configuration",
    "mode / purpose",
    "env steps",
    "% of env steps",
    "groups",
    "skipped (equal rewards)",
    "decisions with a gradient",
    "% of decisions",
)


def purpose_table(
    purposes: Mapping[str, Mapping[str, Mapping[str, float]]], labels: Mapping[str, str]
) -> str:
    """The purpose table as markdown (empty when there is nothing to show)."""
    rows = purpose_rows(purposes, labels)
    if not rows:
        return ""
    lines = ["| " + " | ".join(HEADER) + " |", "|---|---|" + "---:|" * (len(HEADER) - 2)]
    return "\n".join([*lines, *("| " + " | ".join(r) + " |" for r in rows)])


def mean_purposes(
    per_seed: Sequence[Mapping[str, Mapping[str, Mapping[str, int]]]],
) -> dict[str, dict[str, dict[str, float]]]:
    """The mean over seeds of several runs' purposes (a key a seed lacks counts as 0 there)."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    n = len(per_seed) or 1
    for purposes in per_seed:
        for name, by_key in purposes.items():
            for key, values in by_key.items():
                total = out.setdefault(name, {}).setdefault(key, dict.fromkeys(COLUMNS, 0.0))
                for column in COLUMNS:
                    total[column] += values.get(column, 0) / n
    return {
        name: {k: by_key[k] for k in sorted(by_key, key=_order)} for name, by_key in out.items()
    }


def _order(key: str) -> tuple[int, str]:
    order = list(LABELS)
    return (order.index(key) if key in order else len(order), key)
