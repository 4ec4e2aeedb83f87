"""`adaroll run --quick` on a third-party Gymnasium env, end to end in a subprocess: Gymnasium's
FrozenLake through the shipped adapter (docs/envs.md), tiny budgets. The BFS expert's
demonstrations are verified, every configuration is billed, and the Hybrid phase's Suffix starts
are restored from memory snapshots (the thresholds are pinned so that probed tasks go to Suffix)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from adaroll.training.bill import BILL_KEYS
from tests.tiny_runs import ledger, suffix_run

pytestmark = [pytest.mark.slow]

CONFIGS = ("base", "sft", "base_vanilla", "base_hybrid")
GROUP = 4
OVERRIDES = (
    "env.name=gymnasium",
    "env.options={id: FrozenLake-v1, adapter: frozen_lake}",
    "env.suite_options={n_pretrain: 24, n_train: 2, n_heldout: 4, n_heldout_templates: 2}",
    *suffix_run(CONFIGS, GROUP, tasks_per_iteration=2),
)
TIMEOUT_S = 300
"""The run takes seconds on an idle machine; the limit stays below pytest's."""


@pytest.fixture(scope="module")
def lake_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gymnasium-run") / "run"
    sets = [arg for override in OVERRIDES for arg in ("--set", override)]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "adaroll.cli",
            "run",
            "--quick",
            "--no-progress",
            "--out",
            str(out),
            *sets,
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"summary: {out / 'summary.json'}" in done.stdout
    return out


def test_the_gymnasium_run_bills_every_configuration_on_verified_demonstrations(
    lake_run: Path,
) -> None:
    config = yaml.safe_load((lake_run / "config.yaml").read_text())
    assert config["env"]["name"] == "gymnasium" and config["env"]["snapshot_backend"] == "memory"
    assert config["env"]["options"] == {"id": "FrozenLake-v1", "adapter": "frozen_lake"}
    for split, n in (("pretrain", 24), ("train", 2)):
        experts = json.loads((lake_run / "experts" / split / "experts.json").read_text())
        assert experts["tasks"] == experts["verified"] == n, split
    first = json.loads(
        (lake_run / "experts" / "train" / "trajectories.jsonl").read_text().splitlines()[0]
    )
    assert first["task"].startswith("gymnasium:lake-") and first["action"]["kind"] == "key"
    rows = json.loads((lake_run / "summary.json").read_text())["configurations"]
    assert set(rows) == set(CONFIGS)
    parts = ("env_steps", "replay_steps", "demo_env_steps", "selection_env_steps")
    for name, row in rows.items():
        assert set(BILL_KEYS) <= set(row), name
        assert row["total_env_steps"] == sum(row[k] for k in parts) > 0, name
    for name in ("base_vanilla", "base_hybrid"):
        assert rows[name]["env_steps"] > 0 and rows[name]["stopped_by"] == "iterations", name


def test_hybrid_suffix_starts_are_restored_from_memory_snapshots(lake_run: Path) -> None:
    records = ledger(lake_run / "base_hybrid")
    suffix = [r for r in records if r["mode"] == "suffix" and r["purpose"] == "train"]
    assert len(suffix) == 2 and all(r["iteration"] == 2 and r["restores"] == GROUP for r in suffix)
    assert all(r.get("restore_fallbacks", 0) == 0 and r.get("faults", 0) == 0 for r in records)


RL_LABELS = {
    "base_vanilla": "Base->Vanilla",
    "base_hybrid": "Base->Hybrid",
    "base_onestep": "Base->OneStep",
    "action_vanilla": "Action->Vanilla",
    "action_hybrid": "Action->Hybrid",
    "sft_vanilla": "SFT->Vanilla",
    "sft_hybrid": "SFT->Hybrid",
}


@pytest.mark.parametrize(
    ("options", "configurations"),
    [
        ("{id: FrozenLake-v1, adapter: frozen_lake}", None),
        # Taxi's routing pass (16 tasks x 4 probes of up to 30 steps) outgrows the quick budget;
        # Hybrid is the phase a quick budget can leave without an update (Vanilla always has one)
        ("{id: Taxi-v4, adapter: taxi}", "[base, base_hybrid]"),
    ],
    ids=["frozen_lake", "taxi"],
)
def test_the_quick_run_shows_every_rl_configuration_updating(
    tmp_path: Path, options: str, configurations: str | None
) -> None:
    """`adaroll run --quick` as a newcomer runs it on an adapter: every RL configuration makes
    optimizer steps, and the printout says how many."""
    sets = ["--set", "env.name=gymnasium", "--set", f"env.options={options}"]
    if configurations:
        sets += ["--set", f"configurations={configurations}"]
    out = tmp_path / "run"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "adaroll.cli",
            "run",
            "--quick",
            "--no-progress",
            "--out",
            str(out),
            *sets,
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads((out / "summary.json").read_text())["configurations"]
    trained = [name for name in RL_LABELS if name in rows]
    assert trained and (configurations or len(trained) == len(RL_LABELS))
    for name in trained:
        steps = rows[name]["optimizer_steps"]
        assert steps > 0, (name, done.stdout[-3000:])
        assert f"{RL_LABELS[name]}: {steps} optimizer steps in" in done.stdout, name
