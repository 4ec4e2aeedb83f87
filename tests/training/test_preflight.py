"""A run that cannot mean anything stops before training and says what to do: experts that
never verify (the `success` hook), phases on pivots without a checkpoint, task seeds that do not
change the start state; `--go-on` (checks.stop=false) turns the findings into warnings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from adaroll.config import load_config
from adaroll.envs import get_suite, make_env_factory
from adaroll.envs.base import TaskSpec
from adaroll.training.pipeline import Pipeline
from adaroll.training.preflight import (
    RunRefused,
    checkpoint_finding,
    expert_findings,
    start_state_finding,
    verdict,
)

NAIVE_CLIFF = (
    "env.options={id: CliffWalking-v1, adapter: tests.envs.gymnasium.cliffs:NaiveCliffAdapter}"
)
LAKE = {"id": "FrozenLake-v1", "adapter": "frozen_lake"}
ROOT = Path(__file__).resolve().parents[2]


def test_experts_that_verify_nothing_or_too_little_are_findings_naming_the_success_hook() -> None:
    summaries = {
        "pretrain": {"tasks": 10, "verified": 0, "by_template": {"a": 0.0}},
        "train": {"tasks": 4, "verified": 1, "by_template": {"a": 0.5, "b": 0.0}},
        "val": {"tasks": 0, "verified": 0},
    }
    found = expert_findings(summaries, min_verified_rate=0.0)
    assert [f.check for f in found] == ["experts[pretrain]"]
    assert "0/10 verified (0%)" in found[0].message
    assert "`success(env, reward, terminated, info)` hook" in found[0].advice
    assert "adaroll envs check" in found[0].advice and "--fresh" in found[0].advice
    found = expert_findings(summaries, min_verified_rate=0.5)
    assert [f.check for f in found] == ["experts[pretrain]", "experts[train]"]
    assert "1/4 verified (25%; none on b)" in found[1].message
    assert "below checks.min_verified_rate=0.5" in found[1].message


def test_pivot_phases_without_checkpoints_are_a_finding_and_vanilla_alone_is_not() -> None:
    found = checkpoint_finding(0, ["base", "sft", "base_vanilla", "base_hybrid", "action"])
    assert found is not None and found.message.startswith("base_hybrid, action train on pivots")
    assert checkpoint_finding(0, ["base", "base_vanilla"]) is None
    assert checkpoint_finding(3, ["base_hybrid"]) is None


def test_seeds_that_change_nothing_are_found_and_seeded_lakes_are_not() -> None:
    cliff = {"id": "CliffWalking-v1", "adapter": "tests.envs.gymnasium.cliffs:NaiveCliffAdapter"}
    tasks = [TaskSpec("gymnasium", "cliff", s) for s in range(4)]
    found = start_state_finding(make_env_factory("gymnasium", **cliff), tasks)
    assert found is not None and "checked cliff" in found.message
    assert "make_kwargs(task) from task.seed" in found.advice
    lakes = get_suite("gymnasium", LAKE).split("train")
    assert start_state_finding(make_env_factory("gymnasium", **LAKE), lakes) is None
    assert start_state_finding(make_env_factory("gymnasium", **cliff), tasks[:1]) is None


def test_the_verdict_stops_or_warns() -> None:
    found = checkpoint_finding(0, ["base_hybrid"])
    assert found is not None
    with pytest.raises(
        RunRefused, match=r"(?s)stops before training.*- pivots: .*What to do:.*--go-on"
    ):
        verdict([found], stop=True, say=print)
    said: list[str] = []
    verdict([found], stop=False, say=said.append)
    assert said == [f"warning: {found} (checks.stop=false: training anyway)"]
    verdict([], stop=True, say=said.append)


def test_a_run_whose_experts_never_verify_stops_before_training(tmp_path: Path) -> None:
    out = tmp_path / "cliff"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "adaroll",
            "run",
            "--quick",
            "--no-progress",
            "--out",
            str(out),
            "--set",
            "env.name=gymnasium",
            "--set",
            NAIVE_CLIFF,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    err = done.stderr
    assert "this run cannot mean anything, so it stops before training" in err
    assert "experts[train]: 0/16 verified (0%)" in err and "experts[pretrain]: 0/120" in err
    assert "`success(env, reward, terminated, info)` hook" in err
    assert "start states: every template starts all its tasks in one state" in err
    assert "pivots: action, base_hybrid, base_onestep, action_vanilla, action_hybrid" in err
    assert "--go-on" in err and "--fresh" in err
    assert (out / "experts" / "train" / "experts.json").exists()
    assert not (out / "policies").exists() and not (out / "stage1").exists()  # nothing trained


def test_go_on_is_checks_stop_false_and_not_part_of_the_experiment(tmp_path: Path) -> None:
    from adaroll.config import dump_config
    from adaroll.training.run_identity import experiment_changes

    strict = load_config(None, [])
    lenient = load_config(None, ["checks.stop=false", "checks.min_verified_rate=0.5"])
    assert strict.checks.stop and not lenient.checks.stop
    assert experiment_changes(dump_config(strict), lenient) == []
    pipeline = Pipeline(lenient, tmp_path, progress=False, say=print)
    assert pipeline.cfg.checks.min_verified_rate == 0.5
