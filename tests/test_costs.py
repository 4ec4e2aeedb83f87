"""One counters type: a group's cost, a ledger record, ledger totals and a bill are all
:class:`~adaroll.costs.Counters`, add the same way and keep only their own extra fields."""

from __future__ import annotations

import dataclasses

import pytest

from adaroll.costs import COUNTERS, FLOAT_COUNTERS, INT_COUNTERS, Counters
from adaroll.rollout.jobs import Cost
from adaroll.training.bill import Bill
from adaroll.training.ledger import CostRecord, CostTotals


def test_every_cost_carrier_is_the_one_counters_type() -> None:
    assert Cost is Counters
    for kind in (CostRecord, CostTotals, Bill):
        assert issubclass(kind, Counters)
        names = [f.name for f in dataclasses.fields(kind)]
        assert names[: len(COUNTERS)] == list(COUNTERS), kind  # the counters, declared once
    assert set(INT_COUNTERS) | set(FLOAT_COUNTERS) == set(COUNTERS)
    assert FLOAT_COUNTERS == ("restore_seconds", "wall_seconds")


def test_counters_add_field_by_field_and_keep_the_extra_fields() -> None:
    a, b = Cost(env_steps=3, restores=1, restore_seconds=0.5), Cost(env_steps=2, faults=1)
    assert a + b == Cost(env_steps=5, restores=1, restore_seconds=0.5, faults=1)
    assert sum([a, b], Cost()) == a + b
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.env_steps = 4  # type: ignore[misc]
    record = CostRecord("root", "train", env_steps=2, task_id="mobile:x#0")
    more = record + Cost(env_steps=1)
    assert (more.env_steps, more.mode, more.task_id) == (3, "root", "mobile:x#0")
    totals = CostTotals.of([record, record])
    assert (totals + totals).records == 4 and (totals + Cost(env_steps=1)).records == 2
    bill = Bill(env_steps=1, scoring_samples=2).with_demos("train")
    both = bill.plus(Bill(env_steps=4, scoring_samples=1).with_demos("pretrain"))
    assert (both.env_steps, both.scoring_samples, both.demo_splits) == (5, 3, {"train", "pretrain"})
