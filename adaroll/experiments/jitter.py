"""Crossing jitter, measured: how far a configuration's first crossing of the target moves when
only the evaluation's own sampling changes (same policies, new evaluation seeds).

A phase trained with ``eval.keep_policies`` saved the policy of every evaluation under
``PHASE/marks/<iteration>``. Each mark's policy is evaluated again on ``split`` under
``repeats`` fresh evaluation seeds; for every seed the first mark at or above the target gives
a crossing, in the phase's env steps at that mark. The spread of those crossings is the jitter
that :mod:`adaroll.experiments.power` models as ``sd_eval / slope``. These evaluations only
report: they are billed to nothing and choose nothing.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from functools import partial
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from adaroll.envs.base import GUIEnv, TaskSpec
from adaroll.evaluation import evaluate_split
from adaroll.experiments.runner import die_with_parent
from adaroll.policies.base import Policy
from adaroll.progress_bar import progress_bar
from adaroll.seeding import derive_seed


@dataclass(frozen=True)
class Jitter:
    target: float
    marks: list[int]
    """Iterations of the saved policies, in order."""
    mark_env_steps: list[int]
    """The phase's env steps at each mark."""
    scores: list[list[float]]
    """``scores[r][m]``: Avg@k of mark m under evaluation seed r."""
    crossings: list[int | None]
    """Per evaluation seed, the phase env steps of the first mark >= target (None: never)."""

    @property
    def spread(self) -> float | None:
        """Standard deviation of the crossings that happened (None with fewer than two)."""
        seen = [c for c in self.crossings if c is not None]
        return statistics.stdev(seen) if len(seen) >= 2 else None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"spread": self.spread}


def measure(
    phase_dir: Path,
    target: float,
    *,
    load: Callable[[Path], Policy],
    make_env: Callable[[], GUIEnv],
    tasks: Sequence[TaskSpec],
    k: int,
    history_window: int,
    repeats: int,
    seed: int = 0,
    jobs: int = 1,
    progress: bool = False,
) -> Jitter:
    """Evaluate every saved mark of a phase ``repeats`` times (see the module docstring),
    ``jobs`` evaluations at a time in processes of their own (then ``load`` and ``make_env``
    must pickle). Each evaluation's seed depends only on (seed, mark, repeat), so ``jobs``
    changes no result."""
    marks_dir = Path(phase_dir) / "marks"
    marks = sorted(int(p.name) for p in marks_dir.glob("[0-9]*")) if marks_dir.is_dir() else []
    if not marks:
        raise FileNotFoundError(
            f"{marks_dir}: no saved policies; train the phase with --set rl.eval.keep_policies=true"
        )
    if repeats < 2:
        raise ValueError(f"a spread needs at least 2 evaluation seeds, got repeats={repeats}")
    steps = _env_steps_at(Path(phase_dir) / "metrics.jsonl")
    missing = [m for m in marks if m not in steps]
    if missing:
        raise ValueError(
            f"{phase_dir}: marks {missing[:3]} have no evaluation row in metrics.jsonl"
        )
    score = partial(_score, load, make_env, list(tasks), k, history_window, seed, marks_dir)
    pairs = [(mark, r) for r in range(repeats) for mark in marks]
    bar = progress_bar(total=len(pairs), desc="jitter evaluations", disable=not progress)
    with bar:
        if jobs == 1:
            flat = [_counted(bar, score(pair)) for pair in pairs]
        else:  # spawn: a fork of a process holding torch threads is not safe
            with ProcessPoolExecutor(
                max_workers=jobs,
                mp_context=get_context("spawn"),
                initializer=die_with_parent,  # a killed jitter leaves no evaluations running
                initargs=(os.getpid(),),
            ) as pool:
                flat = [_counted(bar, value) for value in pool.map(score, pairs)]
    scores = [flat[r * len(marks) : (r + 1) * len(marks)] for r in range(repeats)]
    crossings = [
        next((steps[mark] for mark, s in zip(marks, row, strict=True) if s >= target), None)
        for row in scores
    ]
    return Jitter(target, marks, [steps[m] for m in marks], scores, crossings)


def _counted(bar: Any, value: float) -> float:
    bar.update(1)
    return value


def _score(
    load: Callable[[Path], Policy],
    make_env: Callable[[], GUIEnv],
    tasks: list[TaskSpec],
    k: int,
    history_window: int,
    seed: int,
    marks_dir: Path,
    pair: tuple[int, int],
) -> float:
    """Avg@k of one mark's policy under evaluation seed ``repeat``; ``pair`` is (mark, repeat)."""
    mark, repeat = pair
    return evaluate_split(
        load(marks_dir / f"{mark:06d}"),
        make_env,
        tasks,
        k=k,
        history_window=history_window,
        seed=derive_seed(seed, "jitter", mark, repeat),
    ).avg


def _env_steps_at(metrics: Path) -> dict[int, int]:
    """The phase env steps at each evaluation's iteration (the last row of an iteration)."""
    out: dict[int, int] = {}
    for line in metrics.read_text().splitlines():
        row = json.loads(line) if line.strip() else {}
        if row.get("kind") == "eval":
            out[int(row["iteration"])] = int(row["phase_env_steps"])
    return out
