"""Shared by the benchmark smoke tests: run ``benchmarks/<script> --smoke`` and read its JSON."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def run_smoke(script: str, timeout: float) -> dict[str, Any]:
    """Run ``benchmarks/<script> --smoke`` in a subprocess (failing on a non-zero exit) and
    return its last stdout line parsed as JSON.

    The script gets a fresh TMPDIR, removed afterwards: short, because Chromium does not start
    under a TMPDIR path longer than about 27 characters (a pytest tmp_path is longer)."""
    tmp = tempfile.mkdtemp(prefix="adr-", dir="/tmp")
    try:
        done = subprocess.run(
            [sys.executable, str(BENCHMARKS / script), "--smoke"],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, "TMPDIR": tmp},
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def smoke() -> Callable[[str, float], dict[str, Any]]:
    """:func:`run_smoke`."""
    return run_smoke
