"""`adaroll envs list|show|play` for the mobile env."""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image
from typer.testing import CliRunner

from adaroll.cli import app

runner = CliRunner()


def test_envs_list() -> None:
    result = runner.invoke(app, ["envs", "list", "mobile", "--templates"])
    assert result.exit_code == 0, result.output
    assert re.search(r"mobile: \d+ task templates", result.output)
    assert "shop.buy" in result.output and "train=40" in result.output


def test_envs_show_writes_screenshot(tmp_path: Path) -> None:
    out = tmp_path / "shot.png"
    result = runner.invoke(
        app,
        [
            "envs",
            "show",
            "mobile",
            "--task",
            "notes.create",
            "--seed",
            "2",
            "--out",
            str(out),
            "--device",
            "clean",
        ],
    )
    assert result.exit_code == 0, result.output
    assert 'instruction: Create a note titled "' in result.output
    assert '[2] icon "Settings"' in result.output
    assert re.search(r"^  ad +0\.00  per screen opened", result.output, re.M)
    assert Image.open(out).size == (540, 1200)


def test_envs_show_lists_the_noisy_profiles_rates_by_default(tmp_path: Path) -> None:
    result = runner.invoke(app, ["envs", "show", "mobile", "--out", str(tmp_path / "s.png")])
    assert result.exit_code == 0, result.output
    assert "device: noisy (at most 2 interruptions per episode, step limit +10)" in result.output
    assert re.search(r"^  system_dialog +0\.02  per step", result.output, re.M)
    result = runner.invoke(app, ["envs", "show", "mobile", "--device", "loud"])
    assert result.exit_code == 2 and "unknown profile 'loud'" in result.output


def test_envs_play_shows_the_interruptions_on_screen(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "envs",
            "play",
            "mobile",
            "--task",
            "shop.add_to_cart",
            "--seed",
            "4",
            "--out",
            str(tmp_path / "p.gif"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert re.search(r"wait\(\)   \[ad: Sponsored", result.output)
    assert "perturbations: ad=1" in result.output and "success=True" in result.output


def test_envs_play_writes_gif_and_sheet(tmp_path: Path) -> None:
    gif = tmp_path / "play.gif"
    result = runner.invoke(
        app,
        [
            "envs",
            "play",
            "mobile",
            "--task",
            "settings.wifi",
            "--out",
            str(gif),
            "--device",
            "clean",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "perturbations: none" in result.output
    assert "success=True" in result.output
    assert Image.open(gif).n_frames == 4  # 3 expert steps + the final screen
    sheet = tmp_path / "play.png"
    result = runner.invoke(
        app, ["envs", "play", "mobile", "--task", "settings.wifi", "--out", str(sheet)]
    )
    assert result.exit_code == 0 and sheet.exists()


def test_unknown_template_is_a_clean_error() -> None:
    result = runner.invoke(app, ["envs", "show", "mobile", "--task", "nope"])
    assert result.exit_code == 2 and "unknown mobile task template 'nope'" in result.output
