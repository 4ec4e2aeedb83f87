"""What every analysis reads and returns, and the registry that maps an experiment to its
analysis: an experiment's summaries in, a markdown section with its data out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from adaroll.algos.targets import SPLITS, target_costs, target_keys  # noqa: E402
from adaroll.config import ConfigurationName  # noqa: E402
from adaroll.experiments.profiles import Profile  # noqa: E402
from adaroll.experiments.specs import Experiment  # noqa: E402
from adaroll.experiments.stats import Censored  # noqa: E402

Summaries = dict[str, dict[int, dict[str, Any]]]
"""variant -> seed -> the run's summary.json."""
SCORES = ("train_avg4", "val_avg4", "heldout_avg4", "heldout_pass4")
ORDER = get_args(ConfigurationName)
"""Configurations in the order tables list them."""


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
        """The configuration's summary row; a variant run that trained no Base->Vanilla of its
        own is scored against the seed's targets (Val and Train) from the default run (they
        share Base and Base->Vanilla's config), not left censored for want of one."""
        summary = self.summaries[variant][seed]
        row = summary["configurations"].get(configuration, {})
        default = self.summaries.get("default", {}).get(seed)
        if row and summary.get("target_val_avg4") is None and default is not None:
            curve = list(summary["curves"].get(configuration, []))
            for split in SPLITS:
                target = default.get(f"target_{split}_avg4")
                row = {**row, **target_costs(row, curve, target, split)}
        return row

    def values(self, variant: str, configuration: str, key: str) -> list[Any]:
        return [self.row(variant, s, configuration).get(key) for s in self.seeds]

    def curve(self, variant: str, seed: int, configuration: str) -> list[dict[str, Any]]:
        return list(self.summaries[variant][seed]["curves"].get(configuration, []))

    def to_target(self, variant: str, configuration: str, split: str = "val") -> list[Censored]:
        """Per seed, the total env steps at which the configuration first reached its run's
        ``split`` target, censored at its whole bill when it never did; empty when the runs
        have no such target (no Train evaluations at the marks)."""
        keys = target_keys(split)
        rows = [self.row(variant, s, configuration) for s in self.seeds]
        return [
            Censored(r[keys["steps"]] if r.get(keys["reached"]) else None, r["total_env_steps"])
            for r in rows
            if r and (split == "val" or r.get(keys["reached"]) is not None)
        ]

    def run_dir(self, variant: str, seed: int) -> Path:
        return self.home / "runs" / variant / f"seed{seed}"


ANALYSES: dict[str, Callable[[Inputs], Section]] = {}


def analysis(*names: str) -> Callable[[Callable[[Inputs], Section]], Callable[[Inputs], Section]]:
    def add(fn: Callable[[Inputs], Section]) -> Callable[[Inputs], Section]:
        for name in names:
            ANALYSES[name] = fn
        return fn

    return add


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def save_figure(fig: Any, path: Path) -> str:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name
