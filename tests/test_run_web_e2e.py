"""`adaroll run --quick` on the web envs with CRIU snapshots, end to end in a subprocess, tiny
budgets: two MiniWoB++ templates in Chromium (``criu``), and two templates of the apps env, whose
servers and databases are snapshotted with the browser (``app-criu``). Every configuration is
billed in summary.json, the Hybrid phase's Suffix starts are restored from real CRIU images (the
thresholds are pinned so that every probed task goes to Suffix), and the run leaves nothing
behind: no Chromium, app server, CRIU or janitor process, no image or browser directory.

Under CI a missing Chromium, CRIU or root fails this test (tests/components.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from adaroll.training.bill import BILL_KEYS
from tests.components import require_criu_stack
from tests.processes import left_behind, live_processes
from tests.tiny_runs import ledger, suffix_run

pytestmark = [pytest.mark.slow, pytest.mark.web, pytest.mark.criu]

CONFIGS = ("base", "sft", "base_vanilla", "base_hybrid")
GROUP = 4
ENVS = {
    # env: (snapshot backend, two short templates)
    "web": ("criu", "click-button, click-tab-2"),
    "apps": ("app-criu", "mail.archive, notes.pin"),
}


def overrides(env: str) -> tuple[str, ...]:
    backend, templates = ENVS[env]
    return (
        f"env.name={env}",
        f"env.snapshot_backend={backend}",
        "env.suite_options={train_seeds: 1, eval_seeds: 1, pretrain_seeds: 3, "
        f"templates: [{templates}]}}",
        *suffix_run(CONFIGS, GROUP, tasks_per_iteration=2),
    )


TIMEOUT_S = 300
"""Measured beside two experiments on 2 cores: 54 s (web), 90 s (apps); the limit stays below
pytest's (pyproject.toml)."""


def _ours(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("adaroll-"))


def _creator(name: str) -> int:
    """The pid in a name ``adaroll-criu-kdat-PID-suffix`` (-1 for names of another shape)."""
    parts = name.split("-")
    return int(parts[3]) if len(parts) > 4 and parts[3].isdigit() else -1


def _alive(pid: int) -> bool:
    return pid > 0 and Path(f"/proc/{pid}").exists()


@pytest.fixture(scope="module", params=sorted(ENVS))
def web_run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, Path, dict[int, str], list[str]]]:
    """(run directory, the run's TMPDIR, processes before the run, /dev/shm entries before)."""
    require_criu_stack()
    out = tmp_path_factory.mktemp(f"{request.param}-run") / "run"
    # A TMPDIR of its own, to see what the run leaves there; short, because Chromium does not
    # start under a TMPDIR path longer than about 27 characters (a pytest tmp_path is longer).
    tmp = Path(tempfile.mkdtemp(prefix="adr-", dir="/tmp"))
    before, shm = live_processes(), _ours(Path("/dev/shm"))
    sets = [arg for override in overrides(request.param) for arg in ("--set", override)]
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
        assert done.returncode == 0, done.stderr[-3000:]
        assert f"summary: {out / 'summary.json'}" in done.stdout
        yield out, tmp, before, shm
    finally:
        shutil.rmtree(tmp)


def test_web_run_bills_every_configuration(web_run) -> None:
    out = web_run[0]
    config = yaml.safe_load((out / "config.yaml").read_text())
    env = config["env"]["name"]
    assert config["env"]["snapshot_backend"] == ENVS[env][0]
    rows = json.loads((out / "summary.json").read_text())["configurations"]
    assert set(rows) == set(CONFIGS)
    parts = ("env_steps", "replay_steps", "demo_env_steps", "selection_env_steps")
    for name, row in rows.items():
        assert set(BILL_KEYS) <= set(row), name
        assert row["total_env_steps"] == sum(row[k] for k in parts) > 0, name
    for name in ("base_vanilla", "base_hybrid"):
        phase = [r for r in ledger(out / name) if r["purpose"] in ("train", "routing")]
        assert rows[name]["env_steps"] == sum(r.get("env_steps", 0) for r in phase) > 0, name
        assert rows[name]["stopped_by"] == "iterations"


def test_hybrid_suffix_starts_are_restored_from_criu_images(web_run) -> None:
    out = web_run[0]
    records = ledger(out / "base_hybrid")
    suffix = [r for r in records if r["mode"] == "suffix" and r["purpose"] == "train"]
    assert len(suffix) == 2  # both tasks, iteration 2
    assert all(r["iteration"] == 2 and r["restores"] == GROUP for r in suffix)
    assert all(r.get("restore_fallbacks", 0) == 0 and r.get("faults", 0) == 0 for r in records)
    assert sum(r["restore_seconds"] for r in suffix) > 0
    done = json.loads((out / "base_hybrid" / "done.json").read_text())
    assert done["faults"] == {"faults": 0, "restore_fallbacks": 0, "by": {}}
    routes = [
        json.loads(line)["routes"]
        for line in (out / "base_hybrid" / "metrics.jsonl").read_text().splitlines()
        if json.loads(line)["kind"] == "iteration"
    ]
    assert routes[0]["suffix"] == 2


def test_web_run_leaves_nothing_behind(web_run) -> None:
    _, tmp, before, shm = web_run
    assert left_behind(before, "chromium", "criu", "_janitor.py", "appserver.supervisor") == {}
    assert _ours(tmp) == []  # CRIU images and browser state directories
    # CRIU's kernel-feature caches (adaroll-criu-kdat-PID-...): a new one whose creator has
    # exited is left behind; one of a live process belongs to other work on this machine
    new = set(_ours(Path("/dev/shm"))) - set(shm)
    assert [name for name in new if not _alive(_creator(name))] == []
