"""Every experiment's ``--quick`` variant runs end to end on the embedded mobile env (real
training, tiny budgets) and writes its table, data and plot; `adaroll results` gathers them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from adaroll.experiments.specs import EXPERIMENTS
from tests.experiments.quick_runs import CLI_TIMEOUT_S, EXPERIMENTS_TIMEOUT_S, adaroll

PLOTS = {"full": "table3.png", "efficiency": "figure4.png", "routing": "figure5.png"}
PYTEST_TIMEOUT_S = EXPERIMENTS_TIMEOUT_S + CLI_TIMEOUT_S + 60
"""pytest's limit covers a test's fixtures too: the experiments, then one shorter command (or
two without them). Each subprocess reaches its own limit (and reports its output) first."""

pytestmark = pytest.mark.timeout(PYTEST_TIMEOUT_S)


@pytest.fixture(scope="module")
def experiments(quick_experiments: Path) -> Path:
    return quick_experiments


ON_MOBILE = [n for n in EXPERIMENTS.names() if EXPERIMENTS.get(n).runs_on("mobile")]
"""What `experiment all` runs on the mobile profile (the horizon sweep runs on mobile-h*:
tests/experiments/test_horizon.py)."""


@pytest.mark.parametrize("name", ON_MOBILE)
def test_quick_experiment_writes_its_results(experiments: Path, name: str):
    out = experiments / name
    data = json.loads((out / "results.json").read_text())
    assert data["seeds"] == [0] and data["quick"] and "experiment" in data["command"]
    table = (out / "results.md").read_text()
    assert table.count("\n|") >= 3, table  # a header, a rule and at least one row
    if name in PLOTS:
        assert (out / PLOTS[name]).stat().st_size > 10_000
    for path in re.findall(r"\]\(([^)]+\.png)\)", table):
        assert (out / path).exists()


def test_efficiency_and_claims_come_from_the_runs(experiments: Path):
    data = json.loads((experiments / "efficiency" / "results.json").read_text())
    summary = json.loads((experiments / "runs" / "default" / "seed0" / "summary.json").read_text())
    for name, costs in data["to_target"].items():
        row = summary["configurations"][name]
        (cost,) = costs
        assert cost["budget"] == row["total_env_steps"]
        assert cost["value"] == (row["steps_to_target"] if row["reached_target"] else None)
    claims = json.loads((experiments / "full" / "results.json").read_text())["claims"]
    heldout = next(c for c in claims if c["key"] == "heldout_vs_base_vanilla")
    rows = summary["configurations"]
    assert heldout["differences"] == [
        rows["action_hybrid"]["heldout_avg4"] - rows["base_vanilla"]["heldout_avg4"]
    ]
    assert {c["verdict"] for c in claims} <= {"held", "contradicted", "inconclusive"}


def test_variants_reuse_the_base_of_their_seed(experiments: Path):
    base = (experiments / "runs" / "default" / "seed0" / "evals" / "base.json").read_text()
    for variant in ("pivots-random", "tau_dis-0.3"):
        assert (
            experiments / "runs" / variant / "seed0" / "evals" / "base.json"
        ).read_text() == base


def test_results_page_gathers_every_experiment(experiments: Path, tmp_path: Path):
    page = tmp_path / "docs" / "RESULTS.md"
    done = adaroll("results", "--root", str(experiments.parent), "--out", str(page), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    for name in ON_MOBILE:
        assert EXPERIMENTS.get(name).title in text
    for path in re.findall(r"\]\(([^)]+\.png)\)", text):
        assert (page.parent / path).exists(), path
    assert "Machine:" in text and "Versions:" in text


def test_unknown_experiment_or_profile_is_a_clear_error(tmp_path: Path):
    done = adaroll("experiment", "nope", "--root", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2 and "unknown experiment 'nope'" in done.stderr
    done = adaroll("experiment", "full", "--env", "desktop", "--root", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2 and "unknown environment profile 'desktop'" in done.stderr
