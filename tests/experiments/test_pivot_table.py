"""Table 2 under the protocol: Action's scores and bills per signal from the runs' summaries and
pivot files, empty pivot sets named and left out, the paper's comparisons paired by seed; and
end to end on quick runs, analysed again without training or writing into them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from adaroll.config import ConfigError
from adaroll.experiments import pivot_table
from adaroll.experiments.inputs import Inputs, Section
from adaroll.experiments.profiles import PROFILES
from adaroll.experiments.runner import analyse_experiments, run_experiments
from adaroll.experiments.specs import EXPERIMENTS
from tests.experiments.quick_runs import EXPERIMENTS_TIMEOUT_S

pytestmark = pytest.mark.timeout(EXPERIMENTS_TIMEOUT_S + 1200)
"""The quick experiments (if this module is the first to need them), then seed 1's runs."""

SEEDS = [0, 1, 2, 3]
VARIANTS = EXPERIMENTS.get("pivots").variants


def _pivot_file(path: Path, scores: dict[str, float], pivots: dict[str, list[str]]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    thresholds = dict.fromkeys(pivots, 0.45)
    data = {"scores": scores, "pivots": pivots, "policy_samples": 80, "thresholds": thresholds}
    (path / "stage1.json").write_text(json.dumps(data))


def _action(heldout: float, samples: int) -> dict:
    return {
        "train_avg4": heldout + 0.1,
        "train_pass4": heldout + 0.2,
        "val_avg4": heldout + 0.05,
        "val_pass4": heldout + 0.15,
        "heldout_avg4": heldout,
        "heldout_pass4": heldout + 0.1,
        "policy_samples": samples,
        "scoring_samples": 80,
        "train_samples": 1000 + samples // 2,
        "total_env_steps": 5000,
        "optimizer_steps": 12,
    }


def _inputs(home: Path, seeds: list[int], empty: int | None) -> tuple[Inputs, dict]:
    """Every variant on ``seeds``: disagreement 3 points above reward variance on each seed;
    reward variance's scores never pass the gate (every task on its fallback); entropy's pivot
    set is empty on seed ``empty``."""
    heldout = {v: [0.40 + 0.01 * s for s in seeds] for v in VARIANTS}
    heldout["pivots-reward_variance"] = [h - 0.03 for h in heldout["default"]]
    summaries: dict = {}
    for variant in VARIANTS:
        for i, seed in enumerate(seeds):
            where = home / "runs" / variant / f"seed{seed}" / "pivots"
            if variant == "pivots-reward_variance":  # p(1 - p) <= 0.25 < tau_dis = 0.45
                _pivot_file(
                    where,
                    {"a@0": 0.25, "a@1": 0.0, "b@0": 0.1},
                    {"a": ["a@0", "a@1"], "b": ["b@0"]},
                )
            elif variant == "pivots-entropy" and seed == empty:
                _pivot_file(where, {"a@0": 0.1, "b@0": 0.2}, {"a": [], "b": []})
            else:
                _pivot_file(
                    where, {"a@0": 0.9, "a@1": 0.1, "b@0": 0.6}, {"a": ["a@0"], "b": ["b@0"]}
                )
            samples = 8000 if variant != "pivots-all-long" else 40000
            summaries.setdefault(variant, {})[seed] = {
                "target_val_avg4": None,
                "configurations": {
                    "base": {"train_samples": 1000},
                    "action": _action(heldout[variant][i], samples),
                },
                "curves": {},
            }
    out = home / "out"
    out.mkdir(parents=True)
    return Inputs(
        EXPERIMENTS.get("pivots"), home, PROFILES["mobile"], summaries, seeds, out
    ), heldout


@pytest.fixture
def synthetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Inputs, dict]:
    monkeypatch.setattr(pivot_table, "_signals", lambda x: Section("", {}))
    return _inputs(tmp_path, SEEDS, empty=2)


def test_table_2_reads_action_rows_and_pivot_files(synthetic) -> None:
    x, heldout = synthetic
    section = pivot_table.table2(x)
    rows = section.data["rows"]
    assert rows["default"]["heldout_avg4"] == heldout["default"]
    assert rows["default"]["pivots"] == [2] * 4 and rows["default"]["fallback_tasks"] == [0] * 4
    assert rows["pivots-reward_variance"]["fallback_tasks"] == [2] * 4  # no score above 0.45
    assert rows["default"]["stage1_train_samples"] == [4000] * 4  # Action's minus Base's
    assert section.data["budget_share"] == pytest.approx(0.2)
    assert (x.out / "table2.png").stat().st_size > 5_000
    assert "48.83 / 62.50" in section.markdown and "45.70 / 60.16" in section.markdown


def test_an_empty_pivot_set_is_named_and_left_out_of_means_and_pairs(synthetic) -> None:
    x, _ = synthetic
    section = pivot_table.table2(x)
    entropy = section.data["rows"]["pivots-entropy"]
    assert entropy["empty_seeds"] == [2] and entropy["heldout_avg4"][2] is None
    assert "entropy: seed(s) 2" in section.markdown
    claim = next(c for c in section.data["claims"] if c["key"] == "pivots_vs_entropy_avg4")
    assert claim["seeds"] == 3
    assert "| entropy | 2 ± 1 |" in section.markdown  # its pivots: 2, 2, 0, 2


def test_the_papers_comparisons_are_paired_differences(synthetic) -> None:
    x, heldout = synthetic
    claims = {c["key"]: c for c in pivot_table.table2(x).data["claims"]}
    rv = claims["pivots_vs_reward_variance_avg4"]
    assert rv["differences"] == pytest.approx([0.03] * 4)
    assert rv["verdict"] == "held"  # +3 points on every seed
    close = claims["pivots_vs_all_long_avg4"]
    assert close["differences"] == pytest.approx([0.0] * 4) and close["verdict"] == "held"


def test_fewer_seeds_than_a_headline_claim_needs_are_flagged(synthetic, tmp_path: Path) -> None:
    x, _ = synthetic
    assert "**Provisional:** 3 paired seed(s), fewer than the 10" in pivot_table.table2(x).markdown
    ten, _ = _inputs(tmp_path / "ten", list(range(10)), empty=None)
    assert "Provisional" not in pivot_table.table2(ten).markdown


# -- end to end -----------------------------------------------------------------------------------
def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def quick(quick_experiments: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quick Table 2 over seeds 0 and 1: seed 0's runs are copies of the quick experiments'
    (finished, so they are reused as a resumed run is), seed 1 trains here."""
    root = tmp_path_factory.mktemp("t2")
    for variant in VARIANTS:
        shutil.copytree(
            quick_experiments / "runs" / variant / "seed0",
            root / "mobile-quick" / "runs" / variant / "seed0",
        )
    run_experiments(["pivots"], profile="mobile", seeds=[0, 1], quick=True, root=root, say=print)
    return root


def test_quick_table_2_judges_the_runs_it_trained(quick: Path) -> None:
    out = quick / "mobile-quick" / "pivots"
    data = json.loads((out / "results.json").read_text())
    runs = quick / "mobile-quick" / "runs"
    heldout = {
        v: [
            json.loads((runs / v / f"seed{s}" / "summary.json").read_text())["configurations"][
                "action"
            ]["heldout_avg4"]
            for s in (0, 1)
        ]
        for v in ("default", "pivots-reward_variance")
    }
    rv = next(c for c in data["claims"] if c["key"] == "pivots_vs_reward_variance_avg4")
    assert rv["differences"] == pytest.approx(
        [a - b for a, b in zip(heldout["default"], heldout["pivots-reward_variance"], strict=True)]
    )
    assert set(data["signals"]["reproduced"]) == {
        "default",
        "pivots-reward_variance",
        "pivots-entropy",
        "pivots-all",
        "pivots-random",
    } and all(data["signals"]["reproduced"].values())
    text = (out / "results.md").read_text()
    assert "Where the signals differ (seed 0)" in text
    assert (out / "signals.png").exists() and (out / "table2.png").exists()


def test_analyse_only_writes_the_same_results_elsewhere_and_nothing_in_the_runs(
    quick: Path, tmp_path: Path
) -> None:
    before = _tree(quick / "mobile-quick" / "runs")
    (written,) = analyse_experiments(
        ["pivots"], profile="mobile", seeds=[0, 1], quick=True, root=quick, out=tmp_path, say=print
    )
    assert written == tmp_path / "mobile-quick" / "pivots"
    assert _tree(quick / "mobile-quick" / "runs") == before
    again = json.loads((written / "results.json").read_text())
    first = json.loads((quick / "mobile-quick" / "pivots" / "results.json").read_text())
    for key in ("rows", "claims", "val", "budget_share"):
        assert again[key] == first[key]
    with pytest.raises(ConfigError, match=r"not finished: .*seed2"):
        analyse_experiments(
            ["pivots"], profile="mobile", seeds=[0, 2], quick=True, root=quick, out=tmp_path / "b"
        )
    assert not (tmp_path / "b").exists()
