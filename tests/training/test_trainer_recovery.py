"""A kill inside the trainer's state save (between its renames, or before the old state is
removed) must not stop or reset the phase: the resumed phase equals an uninterrupted one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

from tests.training.test_trainer import make_trainer, store  # noqa: F401 - store is a fixture


def _interrupted(tmp: Path, store) -> Path:  # noqa: F811
    first = make_trainer(tmp, store, "vanilla", iterations=4)
    plan = first.scheduler.plan

    def crash_at_three(iteration: int):
        if iteration == 3:
            raise KeyboardInterrupt  # iteration 2's state is saved
        return plan(iteration)

    first.scheduler.plan = crash_at_three  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        first.train()
    first.ledger.close()
    return tmp


@pytest.mark.parametrize("leftover", ["between_renames", "old_not_removed", "tmp_half_written"])
def test_resume_after_a_kill_inside_the_state_save(tmp_path: Path, store, leftover: str) -> None:  # noqa: F811
    straight = make_trainer(tmp_path / "straight", store, "vanilla", iterations=4)
    straight.train()
    run = _interrupted(tmp_path / "run", store)
    state, old, tmp = run / "state", run / "state-old", run / "state-tmp"
    if leftover == "between_renames":  # state -> state-old done, state-tmp -> state not yet
        state.rename(old)
    elif leftover == "old_not_removed":  # both renames done, state-old not yet deleted
        shutil.copytree(state, old)
    else:  # killed while writing the next state
        tmp.mkdir()
        (tmp / "meta.json").write_text('{"iteration": 9')
    resumed = make_trainer(run, store, "vanilla", iterations=4, theta=5.0)
    resumed.train(resume=True)
    # theta=5.0 above: a phase restarted from scratch (instead of resumed) ends elsewhere
    assert len([m for m in resumed.metrics if m["kind"] == "iteration"]) == 4
    assert torch.equal(resumed.policy.theta, straight.policy.theta)
    assert resumed.ledger.training_cost().env_steps == straight.ledger.training_cost().env_steps
    assert list(resumed.metrics) == list(straight.metrics)
    assert sorted(p.name for p in run.iterdir() if p.name.startswith("state")) == ["state"]
