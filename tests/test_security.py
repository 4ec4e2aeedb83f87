"""Isolation and input hardening outside the browser: run directories are private (0700), API
keys never reach a config dump, a run directory or the output, unknown env/suite options and
out-of-range coordinates are rejected with clear errors."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from adaroll.actions import Action, ActionError, ActionParseError, parse_action
from adaroll.config import ConfigError, RunConfig, dump_config, load_config
from adaroll.envs import get_suite, make_env_factory
from adaroll.io import make_private_dir
from adaroll.training.pipeline import Pipeline
from tests.policies.test_remote import FakeOpenAI

KEY = "sk-fault-suite-7f3a9c0e1b2d4e5f"
TINY = ["env.suite_options={n_pretrain: 2, n_train: 2, n_heldout: 1, n_heldout_templates: 0}"]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- private directories ------------------------------------------------------------------------


def test_make_private_dir_creates_0700_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        made = make_private_dir(tmp_path / "a" / "b" / "run")
    finally:
        os.umask(old)
    for path in (made, made.parent, made.parent.parent):
        assert _mode(path) == 0o700, path
    existing = tmp_path / "shared"
    existing.mkdir(mode=0o755)
    os.chmod(existing, 0o755)
    make_private_dir(existing)
    assert _mode(existing) == 0o755  # a directory the user made keeps its mode
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        make_private_dir(tmp_path / "file")


def test_run_and_phase_directories_are_private(tmp_path: Path) -> None:
    from adaroll.checkpoints import CheckpointStore
    from adaroll.config import BudgetConfig, EvalConfig, TrainConfig
    from adaroll.rollout.collector import Collector
    from adaroll.snapshots.memory import MemorySnapshots
    from adaroll.training.scheduler import SCHEDULERS
    from adaroll.training.trainer import Trainer
    from tests.fakes import GoPolicy, LineEnv, LineSuite

    out = tmp_path / "runs" / "main"
    Pipeline(load_config(None, TINY), out, progress=False, say=lambda _: None).store("train")
    assert _mode(out) == 0o700 and _mode(out.parent) == 0o700
    suite = LineSuite()
    cfg = TrainConfig(
        algorithm="vanilla",
        budget=BudgetConfig(iterations=1),
        eval=EvalConfig(k=1, final_splits=("train",)),
    )
    policy = GoPolicy(0.0)
    scheduler = SCHEDULERS.get("vanilla")(
        tasks=suite.split("train"), sched=cfg.scheduler, grpo=cfg.grpo, pivots={}
    )
    collector = Collector(policy, LineEnv, CheckpointStore(), MemorySnapshots(), history_window=1)
    Trainer(
        "v",
        tmp_path / "elsewhere" / "v",
        cfg,
        policy,
        scheduler,
        collector,
        LineEnv,
        {s: suite.split(s) for s in ("train", "val", "heldout")},
        seed=0,
        history_window=1,
        progress=False,
    )
    assert _mode(tmp_path / "elsewhere" / "v") == 0o700


# -- API keys -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "override",
    [
        f"policy.options={{api_key: {KEY}}}",
        f"expert.options={{base_url: 'http://127.0.0.1:1/v1', extra_body: {{Authorization: 'Bearer {KEY}'}}}}",
        f"env.options={{proxy_password: {KEY}}}",
    ],
)
def test_a_key_in_the_config_is_rejected_without_echoing_it(override: str) -> None:
    with pytest.raises(ConfigError, match="environment variable") as err:
        load_config(None, [override])
    assert KEY not in str(err.value)


def test_config_dump_refuses_credentials() -> None:
    cfg = RunConfig().model_copy(
        update={"policy": RunConfig().policy.model_copy(update={"options": {"token": KEY}})}
    )
    with pytest.raises(ConfigError, match=r"policy\.options\.token"):
        dump_config(cfg)
    assert "api_key_env: OPENAI_API_KEY" in dump_config(
        load_config(None, ["policy.options={api_key_env: OPENAI_API_KEY}"])
    )


def test_api_key_from_the_environment_is_used_but_never_written(tmp_path: Path) -> None:
    """A remote expert collects with the key from the environment (the server sees it); the run
    directory, the config dump and everything printed stay free of it."""
    server = FakeOpenAI()
    server.default = lambda body: {"choices": [{"index": 0, "message": {"content": "done()"}}]}
    try:
        out = tmp_path / "run"
        options = (
            f"expert.options={{base_url: '{server.url}', model: m, api_key_env: ADAROLL_FAULT_KEY, "
            "backoff_s: 0.01}"
        )
        env = {**os.environ, "ADAROLL_FAULT_KEY": KEY, "OMP_NUM_THREADS": "1"}
        cli = [sys.executable, "-m", "adaroll.cli"]
        runs = [
            subprocess.run(
                [
                    *cli,
                    "experts",
                    "collect",
                    "--expert",
                    "remote",
                    "--out",
                    str(out),
                    "--set",
                    options,
                    *sum((["--set", o] for o in TINY), []),
                ],
                capture_output=True,
                text=True,
                env=env,
                timeout=300,
            ),
            subprocess.run(
                [*cli, "config", "show", "--set", options],
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
            ),
        ]
    finally:
        server.close()
    for done in runs:
        assert done.returncode == 0, done.stderr[-2000:]
        assert KEY not in done.stdout + done.stderr
    assert "ADAROLL_FAULT_KEY" in runs[1].stdout  # the dump names the variable, not its value
    assert server.requests, "the remote expert was never asked"
    assert all(h.get("Authorization") == f"Bearer {KEY}" for h in server.headers)
    written = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "checkpoints.jsonl" for p in written)
    for path in written:
        assert KEY.encode() not in path.read_bytes(), path


# -- input validation -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: get_suite("mobile", n_trian=5),
            "unknown mobile task suite (env.suite_options) option(s) n_trian; valid: seed, n_train",
        ),
        (lambda: get_suite("mobile", n_train=-1), "n_train must be a non-negative int"),
        (
            lambda: get_suite("web", n_train=5),
            "unknown web task suite (env.suite_options) option(s) n_train; valid: train_seeds",
        ),
        (lambda: get_suite("web", train_seeds="8"), "train_seeds must be a non-negative int"),
        (
            lambda: make_env_factory("mobile", screenshots=True),
            "unknown mobile environment (env.options) option(s) screenshots",
        ),
    ],
)
def test_unknown_or_bad_env_options_are_config_errors(make, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError) as err:
        make()
    assert message in str(err.value)


def test_cli_reports_an_unknown_suite_option_without_a_traceback(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "adaroll.cli",
            "experts",
            "collect",
            "--out",
            str(tmp_path / "r"),
            "--set",
            "env.suite_options={n_trian: 3}",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "unknown mobile task suite (env.suite_options) option(s) n_trian" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("x", [1.5, -0.1, float("nan"), float("inf"), 10**400])
def test_out_of_range_coordinates_are_rejected(x: float) -> None:
    with pytest.raises(ActionError, match="outside the normalised range"):
        Action.tap(x, 0.5)
    with pytest.raises(ActionParseError):
        parse_action(f"tap({x}, 0.5)")
