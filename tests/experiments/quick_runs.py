"""`adaroll experiment all --quick --seeds 0`, run once for the experiment tests that read its
runs (tests/experiments/conftest.py), and the CLI helper they call it with."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXPERIMENTS_TIMEOUT_S = 1500
"""Limit of `adaroll experiment all --quick`."""
CLI_TIMEOUT_S = 300
"""Limit of one shorter command (`adaroll results`, a refused experiment)."""


def adaroll(
    *args: str, cwd: Path, timeout: float = CLI_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run(
        [sys.executable, "-m", "adaroll.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_all_quick(root: Path) -> Path:
    """Every experiment's quick variant on the mobile profile, seed 0, under ``root``; returns
    the profile's directory (``root/mobile-quick``)."""
    done = adaroll(
        "experiment",
        "all",
        "--quick",
        "--seeds",
        "0",
        "--jobs",
        "2",
        "--root",
        str(root),
        cwd=root,
        timeout=EXPERIMENTS_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return root / "mobile-quick"
