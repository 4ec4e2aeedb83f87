"""Checks that a run can mean something, made before it trains (``checks`` in the config).

A run whose experts never verify has no demonstrations, hence no checkpoints, pivots or SFT
examples; a phase on pivots without a checkpoint never updates; tasks whose seeds all give one
start state are one task under many names. Each trains for minutes and reports numbers that
say nothing, so :class:`~adaroll.training.pipeline.Pipeline` stops before training with
:class:`RunRefused`, which says what to do (the ``success`` hook, the seeds, the expert), unless
``checks.stop`` is false (``adaroll run --go-on``): then the findings are warnings.

``adaroll envs check`` runs the same start-state check and the experts on every template.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from adaroll.config import ConfigError
from adaroll.envs.check import Finding, start_state_finding

__all__ = [
    "Finding",
    "RunRefused",
    "checkpoint_finding",
    "expert_findings",
    "start_state_finding",
    "verdict",
]

PIVOT_CONFIGURATIONS = (
    "action",
    "action_vanilla",
    "action_hybrid",
    "base_hybrid",
    "base_onestep",
    "sft_hybrid",
)
"""Configurations that train on pivots (Stage I, Hybrid, OneStep), hence need checkpoints."""

EXPERT_ADVICE = (
    "experts: check, in this order, (1) the success verdict - a gymnasium adapter's "
    "`success(env, reward, terminated, info)` hook counts an episode as solved only when its "
    "terminating step pays a positive reward unless you override it (CliffWalking pays -1 at "
    "its goal); (2) the expert - `expert_action(env, task)`, or expert.kind/expert.options; "
    "(3) the task seeds - does every seed give a solvable task? `adaroll envs check` (with the "
    "same --set/--config) runs the expert on every template in seconds. Then rerun with "
    "--fresh (or a new --out): the run directory keeps the expert runs made so far"
)


class RunRefused(ConfigError):
    """The run cannot mean anything; the message lists why and what to do."""


def expert_findings(
    summaries: Mapping[str, Mapping[str, Any]], min_verified_rate: float
) -> list[Finding]:
    """A finding per split whose experts verify no task, or less than ``min_verified_rate``
    of them. ``summaries``: each split's ``experts.json`` (tasks, verified, by_template)."""
    out = []
    for split, summary in summaries.items():
        tasks, verified = int(summary.get("tasks", 0)), int(summary.get("verified", 0))
        if tasks == 0:
            continue
        rate = verified / tasks
        if verified > 0 and rate >= min_verified_rate:
            continue
        failing = sorted(t for t, r in dict(summary.get("by_template", {})).items() if r == 0)
        none_on = (
            f"; none on {', '.join(failing[:4])}{', ...' if len(failing) > 4 else ''}"
            if failing and verified > 0
            else ""
        )
        why = (
            "no verified demonstration, hence no checkpoints, pivots or SFT examples"
            if verified == 0
            else f"below checks.min_verified_rate={min_verified_rate:g}"
        )
        out.append(
            Finding(
                f"experts[{split}]",
                f"{verified}/{tasks} verified ({rate:.0%}{none_on}): {why}",
                EXPERT_ADVICE,
            )
        )
    return out


def checkpoint_finding(checkpoints: int, configurations: Iterable[str]) -> Finding | None:
    """A finding when configurations on pivots would train with no checkpoint at all."""
    on_pivots = [c for c in configurations if c in PIVOT_CONFIGURATIONS]
    if checkpoints > 0 or not on_pivots:
        return None
    return Finding(
        "pivots",
        f"{', '.join(on_pivots)} train on pivots, but the train split has no checkpoints "
        "(checkpoints are the states of verified expert trajectories): they would make no "
        "update",
        EXPERT_ADVICE,
    )


def verdict(findings: Sequence[Finding], *, stop: bool, say: Callable[[str], None]) -> None:
    """Raise :class:`RunRefused` listing ``findings`` (``stop``), else print them as warnings."""
    if not findings:
        return
    if not stop:
        for finding in findings:
            say(f"warning: {finding} (checks.stop=false: training anyway)")
        return
    listed = "\n".join(f"  - {f}" for f in findings)
    advice = "\n".join(f"  - {a}" for a in dict.fromkeys(f.advice for f in findings if f.advice))
    raise RunRefused(
        "this run cannot mean anything, so it stops before training:\n"
        f"{listed}\n"
        f"What to do:\n{advice}\n"
        "Or train anyway: `adaroll run --go-on` (checks.stop=false)."
    )
