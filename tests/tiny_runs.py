"""The tiny end-to-end run the env e2e tests share: two RL iterations, the first probing every
task, after which p in [0, 1] routes each task to Suffix (so the second restores snapshots)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path


def suffix_run(configs: Sequence[str], group: int, tasks_per_iteration: int) -> tuple[str, ...]:
    """Overrides (after the env's own) of a run whose second iteration is all Suffix groups."""
    return (
        f"configurations=[{', '.join(configs)}]",
        "sft.epochs=4",
        "rl.budget={iterations: 2}",
        "rl.eval.k=1",
        f"rl.grpo.group_size={group}",
        f"rl.scheduler.tasks_per_iteration={tasks_per_iteration}",
        f"rl.grpo.mini_batches={min(2, tasks_per_iteration)}",
        "rl.scheduler.routing_probes=2",
        "rl.scheduler.tau_low=0",
        "rl.scheduler.tau_high=1",
    )


def ledger(phase: Path) -> list[dict]:
    """The records of one phase's ledger.jsonl."""
    return [json.loads(line) for line in (phase / "ledger.jsonl").read_text().splitlines() if line]
