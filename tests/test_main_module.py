"""``python -m adaroll`` is the ``adaroll`` command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_python_dash_m_adaroll_shows_the_cli_help() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "adaroll", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Usage: python -m adaroll" in proc.stdout
    for command in ("run", "report", "experiment", "results", "eval", "experts"):
        assert f" {command} " in proc.stdout  # the CLI's own commands are listed


def test_errors_exit_like_the_console_script() -> None:
    """The entry point's error handling applies too: a missing config file is exit code 2."""
    proc = subprocess.run(
        [sys.executable, "-m", "adaroll", "run", "--config", "no-such.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "error:" in proc.stderr and "no-such.yaml" in proc.stderr
