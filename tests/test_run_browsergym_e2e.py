"""`adaroll run --quick` on BrowserGym's MiniWoB++ (issue 18, part 3), end to end in a
subprocess with the real browsergym packages and Debian's Chromium: one template, tiny
budgets, Base and Base->Hybrid with replay snapshots. The web env's experts verify their
demonstrations on BrowserGym's pages, every configuration is billed, the Hybrid phase's Suffix
starts are restored by replay, and no Chromium is left running.

Under CI a missing Chromium, miniwob or BrowserGym package fails this test
(tests/components.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from adaroll.training.bill import BILL_KEYS
from tests.components import require_browsergym
from tests.processes import left_behind, live_processes
from tests.tiny_runs import suffix_run

pytestmark = [pytest.mark.slow, pytest.mark.web]

CONFIGS = ("base", "base_hybrid")
GROUP = 2
OVERRIDES = (
    "env.name=browsergym",
    "env.snapshot_backend=replay",
    "env.options={slow_mo: 0, pre_observation_delay: 0.0}",
    "env.suite_options={train_seeds: 1, eval_seeds: 1, pretrain_seeds: 2, templates: [miniwob.click-test-2]}",
    *suffix_run(CONFIGS, GROUP, tasks_per_iteration=1),
)
TIMEOUT_S = 420
"""About 40 resets of two browsers each: under a minute on idle cores, minutes when shared."""


def test_quick_run_on_browsergym_miniwob(tmp_path: Path) -> None:
    require_browsergym()
    out = tmp_path / "run"
    tmp = Path(tempfile.mkdtemp(prefix="adr-", dir="/tmp"))  # Chromium needs a short TMPDIR
    before = live_processes()
    sets = [arg for override in OVERRIDES for arg in ("--set", override)]
    try:
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
            env={**os.environ, "TMPDIR": str(tmp)},
        )
        # Playwright puts each browser's profile under TMPDIR: its processes name the folder
        # (other jobs' browsers on the machine do not); its Node driver must be gone too
        leftovers = left_behind(before, str(tmp), "playwright/driver")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "experts[train]: 1/1 verified" in done.stdout + done.stderr
    config = yaml.safe_load((out / "config.yaml").read_text())
    assert config["env"]["name"] == "browsergym" and config["env"]["snapshot_backend"] == "replay"
    rows = json.loads((out / "summary.json").read_text())["configurations"]
    assert set(rows) == set(CONFIGS)
    for name, row in rows.items():
        assert set(BILL_KEYS) <= set(row), name
    ledger = [
        json.loads(line) for line in (out / "base_hybrid" / "ledger.jsonl").read_text().splitlines()
    ]
    assert {r["task_id"] for r in ledger if "task_id" in r} == {"browsergym:miniwob.click-test-2#0"}
    suffix = [r for r in ledger if r["mode"] == "suffix" and r["purpose"] == "train"]
    assert len(suffix) == 1 and suffix[0]["restores"] == GROUP
    assert all(r.get("faults", 0) == 0 for r in ledger)
    assert (
        rows["base_hybrid"]["env_steps"]
        == sum(r.get("env_steps", 0) for r in ledger if r["purpose"] in ("train", "routing"))
        > 0
    )
    assert leftovers == {}
