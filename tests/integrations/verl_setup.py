"""The AdaRoll setup the verl test names in ``data.adaroll_setup`` (``module:function``), as a
user's module would: the phone's tiny train split, its expert checkpoints, the hybrid scheduler
and a ledger path (set by the test)."""

from __future__ import annotations

from pathlib import Path

from adaroll.config import GRPOConfig, SchedulerConfig
from adaroll.integrations.verl import VerlSetup
from adaroll.rollout.sessions import Starts
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.scheduler import SCHEDULERS
from tests.real_mobile import HISTORY, MAKE_ENV, SUITE, verified_store

G = 2
LEDGER = Path("ledger.jsonl")
"""Where the sampler writes its ledger (the test points it into its temporary folder)."""


def make_setup() -> VerlSetup:
    store = verified_store()
    tasks = SUITE.split("train")
    pivots = {t.id: [c.id for c in store.for_task(t.id)] for t in tasks}
    sched = SchedulerConfig(
        tasks_per_iteration=len(tasks), tau_low=0.0, tau_high=1.0, routing_probes=G, root_probes=G
    )
    scheduler = SCHEDULERS.get("hybrid")(
        tasks=tasks, sched=sched, grpo=GRPOConfig(group_size=G), pivots=pivots
    )
    starts = Starts(MAKE_ENV, store, MemorySnapshots(), tasks, history_window=HISTORY)
    return VerlSetup(scheduler, starts, LEDGER, G)
