"""`adaroll run --quick` end to end in a subprocess: it trains every configuration, bills each
one completely, changes parameters and writes the report (SIGKILL and resume:
tests/test_fault_injection.py). Whether RL beats imitation is a question for the experiments
(docs/RESULTS.md), not for one quick seed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from adaroll.config import PolicyConfig
from adaroll.policies import load_policy
from adaroll.report import LABELS
from adaroll.training.bill import BILL_KEYS

RUN_TIMEOUT_S = 900
"""Limit of one `adaroll run --quick` (about a minute on an idle 2-core machine)."""
CLI_TIMEOUT_S = 300
"""Limit of one shorter command (eval, report, one iteration, a refused run)."""
PYTEST_TIMEOUT_S = 2 * RUN_TIMEOUT_S + 60
"""pytest's limit covers a test's fixtures too: the shared run, then at most one more run or
three shorter commands. Each subprocess reaches its own limit (and reports its output) first."""

pytestmark = [pytest.mark.slow, pytest.mark.timeout(PYTEST_TIMEOUT_S)]

CMD = [sys.executable, "-m", "adaroll.cli", "run", "--quick", "--no-progress"]
CONFIGS = (
    "base",
    "sft",
    "action",
    "base_vanilla",
    "base_hybrid",
    "base_onestep",
    "action_vanilla",
    "action_hybrid",
    "sft_vanilla",
    "sft_hybrid",
)
KEYS = (
    *BILL_KEYS,
    "train_avg4",
    "train_pass4",
    "val_avg4",
    "val_pass4",
    "heldout_avg4",
    "heldout_pass4",
    "reached_target",
    "steps_to_target",
    "samples_to_target",
)
ON_TRAIN_DEMOS = (
    "sft",
    "action",
    "base_hybrid",
    "action_hybrid",
    "sft_vanilla",
    "sft_hybrid",
    "base_onestep",
)


@pytest.fixture(scope="module")
def straight_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("straight")
    done = subprocess.run(
        [*CMD, "--out", str(out)], capture_output=True, text=True, timeout=RUN_TIMEOUT_S
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "report:" in done.stdout and "target = mean of Base->Vanilla" in done.stdout
    (out / "stdout.txt").write_text(done.stdout)
    return out


def test_quick_run_prints_the_cost_model_and_optimizer_steps(straight_run: Path) -> None:
    summary = json.loads((straight_run / "summary.json").read_text())
    printed = (straight_run / "stdout.txt").read_text()
    rows, model = summary["configurations"], summary["cost_model"]
    for name in (
        "base_vanilla",
        "base_hybrid",
        "base_onestep",
        "action_vanilla",
        "action_hybrid",
        "sft_vanilla",
        "sft_hybrid",
    ):
        phase = model["phases"][name]
        metrics = [
            json.loads(line)
            for line in (straight_run / name / "metrics.jsonl").read_text().splitlines()
        ]
        last = [m for m in metrics if m["kind"] == "iteration"][-1]
        assert (
            rows[name]["optimizer_steps"] == phase["optimizer_steps"] == last["optimizer_steps"] > 0
        ), name
        assert f"{LABELS[name]}: {phase['optimizer_steps']} optimizer steps" in printed, name
    for name in (
        "base_vanilla",
        "action_vanilla",
        "sft_vanilla",
        "base_hybrid",
        "action_hybrid",
        "sft_hybrid",
    ):
        phase = model["phases"][name]
        assert phase["predicted_per_iteration"] > 0 and phase["measured_per_iteration"] > 0, name
        assert (
            f"{phase['predicted_per_iteration']:,.0f} | {phase['measured_per_iteration']:,.0f} env steps per iteration"
            in printed
        )
    for name in ("base_hybrid", "action_hybrid", "sft_hybrid"):
        saving = model["savings"][name]
        expected = f"S({saving['updates']})" if saving["updates"] else "none ("
        assert f"predicted saving {expected}" in printed, name
    assert rows["action"]["optimizer_steps"] > 0
    # where the env steps went and the gradient came from, per mode and purpose (issue 40)
    purposes = summary["purposes"]
    assert "where the env steps go and where the gradient comes from" in printed
    assert purposes["base_hybrid"]["root/routing"]["env_steps"] > 0
    assert set(purposes["base_vanilla"]) == {"vanilla/train"}
    assert "| Base->Hybrid | routing pass |" in printed
    report = (straight_run / "report" / "report.md").read_text()  # adaroll report's view of it
    assert "| Base->Hybrid | routing pass |" in report
    assert (straight_run / "report" / "purposes.png").exists()
    for name, by_key in purposes.items():
        if name != "action":  # Stage I's selection evaluations are on the bill, not in the table
            env_steps = sum(v["env_steps"] for v in by_key.values())
            last = [
                json.loads(line)
                for line in (straight_run / name / "metrics.jsonl").read_text().splitlines()
                if '"iteration"' in line
            ]
            assert env_steps == [m for m in last if m["kind"] == "iteration"][-1]["env_steps"]


def _weights(path: Path) -> dict[str, torch.Tensor]:
    return load_policy(PolicyConfig(), path).state_dict()


def test_quick_run_bills_every_configuration_completely(straight_run: Path) -> None:
    summary = json.loads((straight_run / "summary.json").read_text())
    rows = summary["configurations"]
    assert set(rows) == set(CONFIGS)
    experts = {
        split: json.loads((straight_run / "experts" / split / "experts.json").read_text())[
            "env_steps"
        ]
        for split in ("pretrain", "train")
    }
    for name, row in rows.items():
        assert set(KEYS) <= set(row), name
        parts = ("env_steps", "replay_steps", "demo_env_steps", "selection_env_steps")
        assert row["total_env_steps"] == sum(row[k] for k in parts), name
        assert row["scoring_samples"] <= row["policy_samples"], name
    for name in ON_TRAIN_DEMOS:
        assert (
            rows[name]["demo_env_steps"]
            == experts["pretrain"] + experts["train"]
            > experts["pretrain"]
        ), name
    for name in ("base", "base_vanilla"):
        assert rows[name]["demo_env_steps"] == experts["pretrain"] > 0
    for name in ("action", "action_vanilla", "action_hybrid"):  # Stage I chose its policy on val
        assert rows[name]["selection_env_steps"] == rows["action"]["selection_env_steps"] > 0
    for name in (
        "base",
        "sft",
        "base_vanilla",
        "base_hybrid",
        "base_onestep",
        "sft_vanilla",
        "sft_hybrid",
    ):
        assert rows[name]["selection_env_steps"] == 0, name
    scored = {
        name: json.loads((straight_run / "pivots" / f"{name}.json").read_text())["policy_samples"]
        for name in ("stage1", "base_hybrid", "base_onestep", "action_hybrid", "sft_hybrid")
    }
    assert (
        rows["action"]["scoring_samples"]
        == rows["action_vanilla"]["scoring_samples"]
        == scored["stage1"]
        > 0
    )
    assert rows["action_hybrid"]["scoring_samples"] == scored["stage1"] + scored["action_hybrid"]
    for name in ("base_hybrid", "base_onestep", "sft_hybrid"):
        assert rows[name]["scoring_samples"] == scored[name] > 0, name
    assert rows["base_onestep"]["env_steps"] == 0 < rows["base_onestep"]["policy_samples"]
    for name in (
        "base_vanilla",
        "base_hybrid",
        "action_vanilla",
        "action_hybrid",
        "sft_vanilla",
        "sft_hybrid",
    ):
        assert rows[name]["env_steps"] > 0, name
        assert rows[name]["stopped_by"] in ("env_steps", "policy_samples"), name
    sft = {
        name: json.loads((straight_run / "policies" / name / "done").read_text())
        for name in ("base", "sft")
    }
    assert rows["base"]["train_samples"] == sft["base"]["examples"] * sft["base"]["epochs"] > 0
    assert (
        rows["sft"]["train_samples"]
        == rows["base"]["train_samples"] + sft["sft"]["examples"] * sft["sft"]["epochs"]
    )
    base = _weights(straight_run / "policies" / "base")
    trained = _weights(straight_run / "base_hybrid" / "state")
    assert any(not torch.equal(base[k], trained[k]) for k in base)
    report = (straight_run / "report" / "report.md").read_text()
    assert "Table 3" in report and (straight_run / "report" / "figure4_efficiency.png").exists()
    assert (straight_run / "report" / "figure5_routing.png").exists()


def test_a_run_directory_of_the_old_accounting_is_refused(
    straight_run: Path, tmp_path: Path
) -> None:
    old = tmp_path / "old"
    shutil.copytree(straight_run, old)
    (old / "format.json").unlink()  # as written before complete bills
    done = _cli("run", "--quick", "--no-progress", "--out", str(old))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "accounting format 1" in done.stderr and "--fresh" in done.stderr


def test_a_corrupt_pivot_file_is_scored_again(straight_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(straight_run, run)
    pivots = run / "pivots" / "base_hybrid.json"
    good = pivots.read_bytes()
    pivots.write_bytes(good[: len(good) // 2])  # torn, as by a full disk
    done = subprocess.run(
        [*CMD, "--out", str(run)], capture_output=True, text=True, timeout=RUN_TIMEOUT_S
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{pivots}: not a pivot set" in done.stdout
    assert pivots.read_bytes() == good
    assert (run / "summary.json").read_text() == (straight_run / "summary.json").read_text()


def test_a_different_config_for_a_run_directory_is_refused(straight_run: Path) -> None:
    saved = (straight_run / "config.yaml").read_text()
    done = _cli(
        "run",
        "--quick",
        "--no-progress",
        "--out",
        str(straight_run),
        "--set",
        "rl.scheduler.routing=bandit",
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        "holds a different config (rl.scheduler.routing: 'thresholds' -> 'bandit')" in done.stderr
    )
    assert (straight_run / "config.yaml").read_text() == saved


def test_a_run_resumes_only_under_the_env_settings_it_started_with(
    straight_run: Path, tmp_path: Path
) -> None:
    recorded = json.loads((straight_run / "env.json").read_text())
    assert (
        recorded["device"]["name"] == "noisy" and 0 < recorded["device"]["ad"] < 1
    )  # defaults resolved
    unfinished = tmp_path / "unfinished"
    shutil.copytree(straight_run, unfinished)
    (unfinished / "summary.json").unlink()
    # as if the code's noisy device had showed ads at another rate when the run started
    (unfinished / "env.json").write_text(
        json.dumps({**recorded, "device": {**recorded["device"], "ad": 0.5}})
    )
    done = _cli("run", "--quick", "--no-progress", "--out", str(unfinished))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        f"device.ad: 0.5 -> {recorded['device']['ad']!r}" in done.stderr
        and "--fresh" in done.stderr
    )
    assert not (unfinished / "summary.json").exists()  # nothing ran
    # a finished run is only read again: it passes with a note, its results unchanged
    finished = tmp_path / "finished"
    shutil.copytree(straight_run, finished)
    shutil.copy(unfinished / "env.json", finished / "env.json")
    done = _cli("run", "--quick", "--no-progress", "--out", str(finished))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "env's settings changed" in done.stdout and "only read" in done.stdout
    assert (finished / "summary.json").read_text() == (straight_run / "summary.json").read_text()


def test_each_start_records_its_machine_and_a_resume_elsewhere_says_so(
    straight_run: Path, tmp_path: Path
) -> None:
    lines = (straight_run / "machines.jsonl").read_text().splitlines()
    assert len(lines) == 1  # one start; a finished run read again adds none
    first = json.loads(lines[0])
    assert first["cpu"] and first["python"] and first["torch"]
    moved = tmp_path / "moved"
    shutil.copytree(straight_run, moved)
    (moved / "summary.json").unlink()
    (moved / "machines.jsonl").write_text(json.dumps({**first, "cpu": "Another CPU"}) + "\n")
    done = _cli("run", "--quick", "--no-progress", "--out", str(moved))
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"cpu: Another CPU -> {first['cpu']}" in done.stdout
    assert len((moved / "machines.jsonl").read_text().splitlines()) == 2
    assert (moved / "summary.json").read_text() == (straight_run / "summary.json").read_text()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "adaroll.cli", *args],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
    )


def test_eval_report_and_single_phase_commands(straight_run: Path, tmp_path: Path) -> None:
    base = str(straight_run / "policies" / "base")
    quick = [
        "--set",
        "env.suite_options={n_pretrain: 120, n_train: 16, n_heldout: 16, n_heldout_templates: 8}",
    ]
    done = _cli(
        "eval",
        "--policy",
        base,
        "--split",
        "heldout-templates",
        "--k",
        "1",
        "--by-template",
        *quick,
    )
    assert done.returncode == 0, done.stderr
    assert "heldout-templates: Avg@1" in done.stdout
    lines = done.stdout.splitlines()
    episodes = int(
        next(x for x in lines if x.startswith("heldout-templates")).split("(")[1].split()[0]
    )
    per_template = [x for x in lines if x.startswith("  ")]
    assert len(per_template) == 8  # n_heldout_templates, each template listed once
    # with k=1 every task is one episode: the template rows account for every task
    assert sum(int(x.rsplit("(", 1)[1].split()[0]) for x in per_template) == episodes
    done = _cli("report", str(straight_run))
    assert done.returncode == 0 and done.stdout.strip().endswith("report.md")
    done = _cli(
        "train",
        "vanilla",
        "--policy",
        base,
        "--out",
        str(tmp_path),
        "--name",
        "v",
        "--set",
        "rl.budget={iterations: 1}",
        "--set",
        "rl.eval.final_splits=[train]",
        *quick,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["iteration"] == 1 and (tmp_path / "v" / "done.json").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "rl.grpo.group_size=1"], "rl.grpo.group_size"),
        (["--set", "rl.scheduler.tau_low=0.9"], "tau_low (0.9) must not exceed"),
        (
            ["--set", "rl.scheduler.routing=bandit", "--set", "rl.scheduler.tau_low=0.3"],
            "never reads tau_low",
        ),
        (["--set", "stage1.eval.select_on=heldout"], "stage1.eval.select_on"),
        (["--set", "rl.budget={samples: 100}"], "rl.budget.samples"),
        (["--set", "env.name=desktop"], "unknown environment 'desktop'"),
        (["--set", "policy.kind=giant"], "unknown policy 'giant'"),
    ],
)
def test_bad_configs_fail_clearly(tmp_path: Path, args: list[str], message: str) -> None:
    done = _cli("run", "--quick", "--out", str(tmp_path / "bad"), "--no-progress", *args)
    assert done.returncode != 0
    assert message in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def test_clean_demonstrations_replayed_on_the_noisy_device_are_billed_to_what_uses_them(
    tmp_path: Path,
) -> None:
    out = tmp_path / "clean-demos"
    done = subprocess.run(
        [
            *CMD,
            "--out",
            str(out),
            "--set",
            "expert.device=clean",
            "--set",
            "configurations=[sft, base_hybrid, sft_vanilla]",
        ],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = json.loads((out / "summary.json").read_text())["configurations"]
    train = out / "experts" / "train"
    demos = {
        split: json.loads((out / "experts" / split / "experts.json").read_text())["env_steps"]
        for split in ("pretrain", "train")
    }
    replayed = json.loads((train / "replayed.json").read_text())["env_steps"]
    assert replayed > 0
    assert (
        json.loads((train / "experts.json").read_text())["perturbations"]["episode_share"] == 0
    )  # clean device
    recorded = [
        json.loads(line)["device"]
        for line in (train / "checkpoints.jsonl").read_text().splitlines()
    ]
    on_device = [
        json.loads(line)["device"] for line in (train / "replayed.jsonl").read_text().splitlines()
    ]
    assert set(recorded) == {"clean"} and set(on_device) == {"noisy"}
    # SFT imitates the recordings; the pivot phase restores the replayed checkpoints and pays for them.
    for name in ("sft", "sft_vanilla"):
        assert rows[name]["demo_env_steps"] == demos["pretrain"] + demos["train"], name
    assert rows["base_hybrid"]["demo_env_steps"] == demos["pretrain"] + demos["train"] + replayed
