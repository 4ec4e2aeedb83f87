"""Where the pivot signals differ: Table 4 patterns, the sets each signal alone picks, the "all
reward 0" count, and on real runs, scores that equal the pivot files Stage I trained on, read
without writing into the runs."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from adaroll.experiments import pivot_signals as ps
from adaroll.experiments.profiles import PROFILES
from adaroll.experiments.runner import Unit, overrides_for, train_unit

pytestmark = pytest.mark.timeout(900)


@pytest.mark.parametrize(
    ("counts", "name", "d"),
    [
        ([8], "8", 0.0),
        ([7, 1], "7-1", 0.25),
        ([2, 6], "6-2", 0.4286),
        ([1, 6, 1], "6-1-1", 0.4643),
        ([3, 5], "5-3", 0.5357),
        ([4, 4], "4-4", 0.5714),
        ([1] * 8, "1x8", 1.0),
    ],
)
def test_patterns_are_written_and_read_as_in_table_4(counts, name, d):
    assert ps.pattern(counts) == name
    assert ps.pattern_disagreement(name) == pytest.approx(d, abs=1e-4)


def test_a_pattern_needs_a_sample():
    with pytest.raises(ValueError):
        ps.pattern([])


def _state(i: str, pattern: str, reward_mean: float, rv: float, d: float | None = None):
    d = ps.pattern_disagreement(pattern) if d is None else d
    scores = {"disagreement": d, "reward_variance": rv, "entropy": 1.0, "all": 1.0, "random": 0.5}
    return ps.StateSignals(i, "t", 0, pattern, reward_mean, scores)


def test_describe_counts_the_all_reward_0_case_only_where_the_policy_hesitates():
    states = [
        _state("a", "1x8", 0.0, 0.0),  # eight different actions, all reward 0
        _state("b", "6-1-1", 0.0, 0.0),  # hesitant, all reward 0
        _state("c", "8", 0.0, 0.0),  # all reward 0 but unanimous: not the case
        _state("d", "4-4", 1.0, 0.0),  # zero variance because every sample matches
        _state("e", "5-3", 0.625, 0.234),
    ]
    got = ps.describe(states, tau=0.45)
    assert got["states"] == 5 and got["zero_variance"] == 4
    assert (got["all_reward_0"], got["all_reward_1"], got["hesitant_all_reward_0"]) == (3, 1, 2)
    assert got["patterns"] == {"1x8": 1, "6-1-1": 1, "8": 1, "4-4": 1, "5-3": 1}


def test_differences_are_set_differences_and_exclusive_picks():
    picks = {
        "disagreement": ["a", "b", "c"],
        "reward_variance": ["c", "d"],
        "entropy": ["b", "c", "e"],
        "all": ["a", "b", "c", "d", "e", "f"],
        "random": ["f"],
    }
    diff = ps.differences(picks)
    assert diff["disagreement-reward_variance"][1] == {"a", "b"}
    assert diff["reward_variance-disagreement"][1] == {"d"}
    assert diff["entropy-disagreement"][1] == {"e"}
    # alone: picked by no other compared signal (all and random are references, not compared)
    assert diff["only-disagreement"][1] == {"a"}
    assert diff["only-reward_variance"][1] == {"d"}
    assert diff["only-entropy"][1] == {"e"}


def test_the_sentence_reports_the_counts_of_the_summary(tmp_path: Path):
    states = [
        _state("a", "1x8", 0.0, 0.0),
        _state("b", "6-1-1", 0.0, 0.0),
        _state("c", "5-3", 0.375, 0.234),
        _state("d", "7-1", 0.875, 0.109),
    ]
    picks = {
        "disagreement": ["a", "b", "c"],
        "reward_variance": ["c", "d"],
        "entropy": ["a", "b", "c", "d"],
        "all": ["a", "b", "c", "d"],
        "random": ["a"],
    }
    fallback = dict.fromkeys(picks, 0) | {"reward_variance": 1}
    result = ps.SignalsResult("run", 0.45, 2, states, picks, fallback, {"default": True})
    summary = ps.write(result, tmp_path)
    text = (tmp_path / "signals.md").read_text()
    assert summary["differences"]["disagreement-reward_variance"]["hesitant_all_reward_0"] == 2
    assert "Of the 2 states disagreement picks and reward variance does not, 2 (100%)" in text
    assert "Reward variance picks 1 state(s) disagreement does not (patterns: 7-1 (1))" in text
    assert summary["table4"]["1x8"]["picked_disagreement"] == 1
    assert list(summary["table4"]) == ["7-1", "6-1-1", "5-3", "1x8"]  # by D
    assert "`default` (yes)" in text
    data = json.loads((tmp_path / "signals.json").read_text())
    assert len(data["states"]) == 4 and data["picks"] == picks
    assert (tmp_path / "signals.png").stat().st_size > 10_000


# -- on real runs -------------------------------------------------------------------------------
TINY = (
    "env.suite_options={n_pretrain: 40, n_train: 6, n_heldout: 4, n_heldout_templates: 2}",
    "sft.epochs=3",
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A quick seed of the pivots experiment, default and reward variance (sharing its Base),
    trained as the runner trains them."""
    home = tmp_path_factory.mktemp("pivots")
    profile = PROFILES["mobile"]
    for variant in ("default", "pivots-reward_variance"):
        unit = Unit(variant, 0, ("base", "action"))
        base = None if variant == "default" else str(Unit("default", 0, ()).directory(home))
        overrides = [
            *overrides_for(profile, True, unit)[:-2],
            *TINY,
            *overrides_for(profile, True, unit)[-2:],
        ]
        train_unit(str(unit.directory(home)), overrides, base)
    return home


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_signals_from_one_draw_equal_the_pivot_files_the_runs_trained_on(runs: Path):
    run = runs / "runs" / "default" / "seed0"
    result = ps.measure(run, say=lambda _: None)
    assert result.reproduced == {"default": True, "pivots-reward_variance": True}
    saved = json.loads((run / "pivots" / "stage1.json").read_text())
    assert sorted(result.picks["disagreement"]) == sorted(
        c for ids in saved["pivots"].values() for c in ids
    )
    assert len(result.states) == len(saved["scores"])
    for state in result.states:  # each pattern's D is the disagreement score it was drawn with
        assert ps.pattern_disagreement(state.pattern) == pytest.approx(state.scores["disagreement"])
        mean = state.reward_mean
        assert state.scores["reward_variance"] == pytest.approx(mean * (1 - mean))
    mixed = {s.id for s in result.states if 0 < s.reward_mean < 1}  # PivotRL: rewards differ
    assert set(result.picks["reward_variance_mixed"]) == mixed


def test_a_pivot_file_that_differs_is_not_reproduced(runs: Path, tmp_path: Path):
    import shutil

    copy = tmp_path / "runs"
    shutil.copytree(runs / "runs", copy)
    path = copy / "pivots-reward_variance" / "seed0" / "pivots" / "stage1.json"
    saved = json.loads(path.read_text())
    first = next(iter(saved["scores"]))
    saved["scores"][first] += 0.01
    path.write_text(json.dumps(saved))
    result = ps.measure(copy / "default" / "seed0", say=lambda _: None)
    assert result.reproduced == {"default": True, "pivots-reward_variance": False}


def _signals_command(run: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "adaroll", "pivots", "signals", str(run), "--out", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        timeout=300,
        check=False,
    )


def test_the_command_reads_the_run_and_writes_only_elsewhere(runs: Path, tmp_path: Path):
    run = runs / "runs" / "default" / "seed0"
    before = _tree(runs)
    modes = {p: p.stat().st_mode for p in [runs, *runs.rglob("*")]}
    for p in modes:  # read-only, as the experiment's live runs are to this command
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    try:
        done = _signals_command(run, tmp_path / "out")
        inside = _signals_command(run, run / "x")
    finally:
        for p, mode in modes.items():
            p.chmod(mode)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _tree(runs) == before
    assert {p.name for p in (tmp_path / "out").iterdir()} == {
        "signals.md",
        "signals.json",
        "signals.png",
    }
    assert inside.returncode == 2 and "inside the run" in inside.stderr


def test_a_directory_without_a_base_is_refused_by_name(tmp_path: Path):
    (tmp_path / "config.yaml").write_text("seed: 0\n")
    with pytest.raises(FileNotFoundError, match="experts/train/experts.json"):
        ps.measure(tmp_path)
