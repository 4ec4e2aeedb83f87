"""`adaroll envs check` on an adapter before any run: the shipped Taxi example passes with its
per-template verified rates, a newcomer's CliffWalking adapter fails naming what to fix, and
`envs show`/`envs play` take the same --set/--config."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from adaroll.cli import app

ROOT = Path(__file__).resolve().parents[3]
TAXI = ["--set", "env.name=gymnasium", "--set", "env.options={id: Taxi-v4, adapter: taxi}"]
CLIFF = [
    "--set",
    "env.name=gymnasium",
    "--set",
    "env.options={id: CliffWalking-v1, adapter: tests.envs.gymnasium.cliffs:NaiveCliffAdapter}",
]
runner = CliRunner()


def test_envs_check_on_the_shipped_taxi_example_prints_per_template_verified_rates() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "adaroll", "envs", "check", *TAXI],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert out.startswith("gymnasium: suite of 3 templates built in ")
    for template in ("taxi", "taxi-fickle", "taxi-rainy"):
        assert re.search(
            rf"^  {template} +33 elements  expert 3/3 verified  mean \d+\.\d steps \(\d+-\d+\)",
            out,
            re.M,
        ), out
    assert re.search(r"^  taxi-rainy .* held out$", out, re.M)
    assert "start states: the seeds change them" in out
    assert re.search(r"^ok: 9/9 expert runs verified, \d+\.\d s$", out, re.M)


def test_envs_check_fails_on_an_adapter_whose_expert_never_verifies() -> None:
    result = runner.invoke(app, ["envs", "check", "--seeds", "2", *CLIFF])
    assert result.exit_code == 1, result.output
    assert re.search(r"^  cliff +48 elements  expert 0/2 verified", result.output, re.M)
    assert "FAILED on cliff" in result.output and "`success` hook" in result.output
    assert "start states: every template starts all its tasks in one state" in result.output
    assert "problems found: 0/2 expert runs verified" in result.output


def test_envs_check_reports_a_malformed_observation_in_one_line() -> None:
    malformed = "{id: FrozenLake-v1, adapter: tests.envs.gymnasium.lakes:MalformedLakeAdapter}"
    result = runner.invoke(app, ["envs", "check", "gymnasium", "--set", f"env.options={malformed}"])
    assert result.exit_code == 1, result.output
    assert re.search(
        r"^    error: AdapterError: .*elements\[0\]\.bounds must be \(left, top, right, bottom\)",
        result.output,
        re.M,
    ), result.output


def test_envs_show_and_play_take_set_and_config(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["envs", "show", *TAXI, "--seed", "3", "--out", str(tmp_path / "t.png")]
    )
    assert result.exit_code == 0, result.output
    assert "task: gymnasium:taxi#3" in result.output
    assert "instruction: Drive the taxi to the passenger at R" in result.output
    assert '[26] destination "Y"' in result.output
    config = tmp_path / "taxi.yaml"
    config.write_text("env:\n  name: gymnasium\n  options: {id: Taxi-v4, adapter: taxi}\n")
    result = runner.invoke(
        app,
        [
            "envs",
            "play",
            "--config",
            str(config),
            "--task",
            "taxi-rainy",
            "--out",
            str(tmp_path / "p.gif"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert re.search(r"\d+ expert steps, success=True", result.output)
    result = runner.invoke(app, ["envs", "show", "mobile", *TAXI])
    assert result.exit_code == 2 and "the config's env.name is 'gymnasium'" in result.output
