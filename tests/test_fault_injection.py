"""Trainer fault injection: `adaroll run` is SIGKILLed at seeded random points and rerun until
it finishes; the final run directory must equal an uninterrupted run's (summary, ledgers record
by record, per-purpose totals, final weights) - no lost work, no double-counted cost.

A *chain* is one run directory: start the run, SIGKILL it at a random point, start it again
(`adaroll run` resumes by default), kill again, ... and finally let it finish. The kill points
are seeded and stratified over the phases (experts + SFT, Stage I, Vanilla, Hybrid), drawn
uniformly inside each (see `_run_chain`), so kills land in every phase, inside iterations,
evaluations and state saves. Several kills per chain also resume from resumed states. All chains compare with one shared reference
run of a micro config (tiny splits, two iterations per phase), so the suite stays short.
"""

from __future__ import annotations

import json
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import torch
import yaml

from adaroll.config import PolicyConfig
from adaroll.policies import load_policy
from adaroll.training.ledger import INT_COUNTERS, read_ledger

pytestmark = pytest.mark.slow

MICRO = {
    "env": {
        "suite_options": {"n_pretrain": 24, "n_train": 6, "n_heldout": 4, "n_heldout_templates": 0}
    },
    "sft": {"epochs": 2},
    "stage1": {
        "budget": {"iterations": 2},
        "eval": {"every": 1, "k": 1},
        "scheduler": {"pivots_per_iteration": 8},
        "pivots": {"n_samples": 4},
    },
    "rl": {
        "budget": {"iterations": 2},
        "eval": {"every": 1, "k": 1},
        "grpo": {"group_size": 4},
        "scheduler": {"tasks_per_iteration": 3},
        "pivots": {"n_samples": 4},
    },
    "configurations": ["base", "sft", "base_vanilla", "action_hybrid"],
}
PHASES = ("stage1", "base_vanilla", "action_hybrid")
POLICIES = (
    "policies/base",
    "policies/sft",
    "stage1/best",
    "base_vanilla/state",
    "action_hybrid/state",
)
MARKERS = (  # (phase in progress until the file exists, file)
    ("experts", "experts/train/experts.json"),
    ("sft", "policies/sft/done"),
    ("stage1", "stage1/done.json"),
    ("base_vanilla", "base_vanilla/done.json"),
    ("action_hybrid", "action_hybrid/done.json"),
    ("summary", "summary.json"),
)
STRATA = ("sft", "stage1", "base_vanilla", "action_hybrid")  # kill windows (experts + SFT first)
CHAINS = 1  # one chain of eight kills: a second chain doubled the test's time in CI
KILLS_PER_CHAIN = 8  # one kill in every stratum, four more in random ones: 8 planned kills
MIN_KILLS = 6
SEED = 20240610
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _cmd(config: Path, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "adaroll.cli",
        "run",
        "--no-progress",
        "--config",
        str(config),
        "--out",
        str(out),
    ]


def _spawn(config: Path, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        _cmd(config, out),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=ENV,
        start_new_session=True,
    )


def _phase_now(out: Path) -> str:
    return next((phase for phase, marker in MARKERS if not (out / marker).exists()), "report")


def _wait_for_work_start(proc: subprocess.Popen[bytes], out: Path, before: int | None) -> float:
    """Time at which this process (re)wrote config.yaml: the start of its pipeline work
    (imports before it take seconds and vary with the machine's load)."""
    config = out / "config.yaml"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            stamp = config.stat().st_mtime_ns
        except FileNotFoundError:
            stamp = None
        if stamp is not None and stamp != before:
            return time.monotonic()
        time.sleep(0.005)
    return time.monotonic()


@pytest.fixture(scope="module")
def micro_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cfg") / "micro.yaml"
    path.write_text(yaml.safe_dump(MICRO))
    return path


@pytest.fixture(scope="module")
def reference(
    micro_config: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, tuple[float, float]]]:
    """One uninterrupted run and the work-time window of each kill stratum."""
    out = tmp_path_factory.mktemp("reference")
    done = subprocess.run(
        _cmd(micro_config, out), capture_output=True, text=True, env=ENV, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    t0 = (out / "config.yaml").stat().st_mtime
    ends = {phase: (out / marker).stat().st_mtime - t0 for phase, marker in MARKERS}
    windows, start = {}, 0.0
    for stratum in STRATA:
        windows[stratum] = (start, ends[stratum])
        start = ends[stratum]
    return out, windows


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _run_chain(
    config: Path, out: Path, rng: random.Random, plan_from: Path, sft_window: float
) -> list[str]:
    """Kill one run directory's runs at stratified random points, then let it finish.

    The first kill falls at a uniform random time inside the reference's experts + SFT window.
    A kill in an RL phase waits until the process has written a random number ``k`` of the
    phase's ledger records (``k`` uniform over the reference phase's record count), then a
    random 0-150 ms more: it lands inside that phase (mid-collection, mid-update, mid-eval or
    mid-save), however slow the machine. Pure delays would not spread: every restarted process
    spends its first seconds loading before it gets anywhere. Returns the phase in progress at
    each kill."""
    extra = rng.choices(STRATA[1:], k=KILLS_PER_CHAIN - len(STRATA))
    strata = sorted([*STRATA, *extra], key=STRATA.index)
    hit: list[str] = []
    for stratum in strata:
        before = (
            (out / "config.yaml").stat().st_mtime_ns if (out / "config.yaml").exists() else None
        )
        proc = _spawn(config, out)
        _wait_for_work_start(proc, out, before)
        if stratum == "sft":
            delay = rng.uniform(0.0, sft_window)
        else:
            ledger = out / stratum / "ledger.jsonl"
            target = rng.randrange(_lines(plan_from / stratum / "ledger.jsonl"))
            started = time.time_ns()
            while proc.poll() is None and not (
                ledger.exists() and ledger.stat().st_mtime_ns > started and _lines(ledger) >= target
            ):
                time.sleep(0.003)
            delay = rng.uniform(0.0, 0.15)
        began = time.monotonic()
        while proc.poll() is None and time.monotonic() - began < delay:
            time.sleep(0.003)
        if proc.poll() is not None:  # finished before the kill: nothing left to interrupt
            _, err = proc.communicate()
            assert proc.returncode == 0, err.decode()[-3000:]
            return hit
        phase = _phase_now(out)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        assert proc.stderr is not None
        proc.stderr.close()
        hit.append(phase)
    final = subprocess.run(_cmd(config, out), capture_output=True, text=True, env=ENV, timeout=600)
    assert final.returncode == 0, final.stderr[-3000:]
    return hit


# -- what must be equal ---------------------------------------------------------------------------

_VOLATILE = ("ts", "wall_seconds", "restore_seconds")


def _ledger_rows(path: Path) -> list[dict[str, Any]]:
    loaded = read_ledger(path)
    assert loaded.torn_tail is None, f"{path} ends in a torn record"
    rows = []
    for record in loaded.records:
        row = record.to_dict()
        for key in _VOLATILE:
            row.pop(key, None)
        rows.append(row)
    return rows


def _split_setup(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """(work records, replayed steps of the snapshot-rebuild records, which carry no task)."""
    setup = [
        r
        for r in rows
        if "task_id" not in r
        and set(r) <= {"mode", "purpose", "replayed_steps", "iteration", "stage"}
    ]
    return [r for r in rows if r not in setup], sum(r.get("replayed_steps", 0) for r in setup)


def _totals(rows: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, int]]:
    out: dict[tuple[str, str], Counter[str]] = {}
    for row in rows:
        out.setdefault((row["purpose"], row["mode"]), Counter()).update(
            {name: row.get(name, 0) for name in INT_COUNTERS}
        )
    return {k: dict(v) for k, v in out.items()}


def _done(path: Path) -> dict[str, Any]:
    final = json.loads(path.read_text())
    final.pop("phase_seconds")
    return final


def _assert_same_run(run: Path, ref: Path) -> None:
    assert json.loads((run / "summary.json").read_text()) == json.loads(
        (ref / "summary.json").read_text()
    )
    for split in ("pretrain", "train"):
        for name in ("checkpoints.jsonl", "trajectories.jsonl", "experts.json"):
            path = f"experts/{split}/{name}"
            assert (run / path).read_bytes() == (ref / path).read_bytes(), path
    for phase in PHASES:
        rows, rebuilt = _split_setup(_ledger_rows(run / phase / "ledger.jsonl"))
        want, ref_rebuilt = _split_setup(_ledger_rows(ref / phase / "ledger.jsonl"))
        # A restarted process rebuilds the snapshot images it held before the kill: a real,
        # ledgered extra cost, so setup replay may only grow.
        assert rebuilt >= ref_rebuilt
        # Record by record: nothing lost, nothing counted twice (a resumed iteration's records
        # replace the killed attempt's instead of adding to them).
        assert rows == want, f"{phase}: ledger differs from the uninterrupted run's"
        assert _totals(rows) == _totals(want)
        iterations = [r["iteration"] for r in rows]
        assert iterations == sorted(iterations), f"{phase}: an iteration was ledgered twice"
        metrics = [
            json.loads(line) for line in (run / phase / "metrics.jsonl").read_text().splitlines()
        ]
        ref_metrics = [
            json.loads(line) for line in (ref / phase / "metrics.jsonl").read_text().splitlines()
        ]
        assert metrics == ref_metrics, f"{phase}: metrics differ"
        assert _done(run / phase / "done.json") == _done(ref / phase / "done.json")
        assert not (run / phase / "state-old").exists() and not (run / phase / "state-tmp").exists()
    for policy in POLICIES:
        got = load_policy(PolicyConfig(), run / policy).state_dict()
        want_sd = load_policy(PolicyConfig(), ref / policy).state_dict()
        assert got.keys() == want_sd.keys()
        assert all(torch.equal(got[k], want_sd[k]) for k in got), f"{policy}: weights differ"


def test_sigkill_at_random_points_then_resume_equals_an_uninterrupted_run(
    micro_config: Path, reference: tuple[Path, dict[str, tuple[float, float]]], tmp_path: Path
) -> None:
    ref, windows = reference
    began = time.monotonic()
    hits: list[str] = []
    for chain in range(CHAINS):
        out = tmp_path / f"chain{chain}"
        hit = _run_chain(micro_config, out, random.Random(SEED + chain), ref, windows["sft"][1])
        _assert_same_run(out, ref)
        hits.extend(hit)
    print(
        f"\nfault injection: {len(hits)} SIGKILLs over {CHAINS} chains in "
        f"{time.monotonic() - began:.0f} s; phases hit: {dict(Counter(hits))}"
    )
    assert len(hits) >= MIN_KILLS, f"only {len(hits)} kills landed: {hits}"
    assert len(set(hits)) >= 3, f"kills did not spread over the phases: {hits}"


def _leftovers(run: Path) -> list[str]:
    """What an interrupted write would leave: temporary files, a half-swapped trainer state,
    a JSONL file whose last line is cut."""
    found = [str(p) for p in run.rglob("*.tmp")]
    found += [str(p) for p in run.rglob("state-tmp")] + [str(p) for p in run.rglob("state-old")]
    for path in run.rglob("*.jsonl"):
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            found.append(f"{path} (torn last line)")
    return found


def test_ctrl_c_says_how_to_resume_writes_whole_files_and_resumes_to_the_same_run(
    micro_config: Path, reference: tuple[Path, dict[str, tuple[float, float]]], tmp_path: Path
) -> None:
    """A real SIGINT to the run's process group (as a terminal's Ctrl-C), once during the
    experts and SFT and once inside each RL phase: the run exits 130 saying how to resume, no
    file is left half written, and the resumed run equals the uninterrupted one."""
    ref, windows = reference
    out, rng = tmp_path / "interrupted", random.Random(SEED)
    interrupted = 0
    for stratum in STRATA:
        before = (
            (out / "config.yaml").stat().st_mtime_ns if (out / "config.yaml").exists() else None
        )
        proc = _spawn(micro_config, out)
        _wait_for_work_start(proc, out, before)
        if stratum == "sft":
            deadline = time.monotonic() + rng.uniform(0.0, windows["sft"][1])
            while proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.003)
        else:
            ledger, target = out / stratum / "ledger.jsonl", rng.randrange(1, 6)
            while proc.poll() is None and _lines(ledger) < target:
                time.sleep(0.003)
        if proc.poll() is not None:
            _, err = proc.communicate()
            assert proc.returncode == 0, err.decode()[-3000:]
            break
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        text = err.decode()
        assert proc.returncode == 130, text[-3000:]
        assert "Traceback" not in text, text[-3000:]
        assert "interrupted: every finished step and RL iteration is saved" in text
        assert (
            f"to resume, run the same command again:\n  adaroll run --no-progress --config {micro_config} --out {out}"
            in text
        )
        assert _leftovers(out) == [], stratum
        interrupted += 1
    final = subprocess.run(
        _cmd(micro_config, out), capture_output=True, text=True, env=ENV, timeout=600
    )
    assert final.returncode == 0, final.stderr[-3000:]
    assert interrupted >= 3
    _assert_same_run(out, ref)


# -- branches die with their trainer ----------------------------------------------------------

RESTORING_TRAINERS = {
    # a FrozenLake env in the fork server: restores are forks of a zygote
    "forkserver": """
from adaroll.envs import make_env_factory
from adaroll.envs.base import TaskSpec
from adaroll.snapshots.forkserver import ForkServerSnapshots
from adaroll.actions import Action
make = make_env_factory("gymnasium", id="FrozenLake-v1", adapter="frozen_lake")
backend = ForkServerSnapshots(make_env=make)
env = make()
env.reset(options={"task": TaskSpec("gymnasium", "lake-5x5", 0)})
env.step(Action.press("right"))
ref = backend.save(env, (Action.press("right"),))
def restore():
    branch = backend.restore(ref)
    branch.step(Action.press("down"))
    return branch
""",
    # a MiniWoB++ page in Chromium: restores are criu restores through the launcher
    "criu": """
import adaroll.envs.web
from adaroll.envs.base import TaskSpec
from adaroll.envs.web import WebEnv
from adaroll.snapshots.criu import CriuSnapshots
backend = CriuSnapshots(max_branches=4)
env = WebEnv()
env.reset(options={"task": TaskSpec("web", "click-button", 0)})
ref = backend.save(env, ())
def restore():
    return backend.restore(ref)
""",
}
RESTORE_LOOP = """
import threading, time
lock, count = threading.Lock(), [0]
def loop():
    live = []
    while True:
        live.append(restore())
        with lock:
            count[0] += 1
            print(f"restored {count[0]}", flush=True)
        if len(live) >= 2:
            live.pop(0).close()
for _ in range(2):
    threading.Thread(target=loop, daemon=True).start()
time.sleep(600)
"""


def _ours(marker: str, root: Path, before: frozenset[int] = frozenset()) -> list[str]:
    """Live processes of the killed trainer's tree: its environment variable (forked and
    spawned processes), a path under its temporary directory on the command line (browsers and
    their CRIU branches, which have the environment their browser had), or an orphan of the
    browsers' account (re-parented to init, and not there before the trainer started)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            environ = (entry / "environ").read_bytes()
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            account = (
                entry.stat().st_uid == _browser_uid()
                and int(entry.name) not in before
                and ppid == 1
            )
        except (OSError, IndexError):
            continue
        if state in ("Z", "X"):
            continue
        if marker.encode() in environ or str(root) in cmdline or account:
            found.append(f"{entry.name}: {cmdline[:160]}")
    return found


def _browser_uid() -> int:
    import pwd

    try:
        return pwd.getpwnam("adaroll-browser").pw_uid
    except KeyError:
        return -1


def _account_pids() -> frozenset[int]:
    uid = _browser_uid()
    pids = set()
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and entry.stat().st_uid == uid:
                pids.add(int(entry.name))
        except OSError:
            continue
    return frozenset(pids)


@pytest.mark.parametrize("backend", ["forkserver", "criu"])
def test_sigkill_of_the_trainer_while_it_restores_branches_leaves_nothing_behind(
    backend: str, tmp_path: Path
) -> None:
    """The trainer restores branches from two threads without pause; its whole process group
    is SIGKILLed after its fifth restore: CRIU's, the moment a criu restore runs; the fork
    server's, at a random moment (a fork is then in flight or just done). Every branch dies with it, with everything else of its tree (fork server, zygotes;
    browsers, criu, the restore launcher and the janitor once done), and no mount or file of
    it stays behind."""
    if backend == "criu":
        from tests.components import require_criu_stack

        require_criu_stack()
    # the browsers' account must pass through it to its state dirs (pytest's tmp_path is 0700)
    root = Path(tempfile.mkdtemp(prefix="adaroll-test-trainer-", dir="/tmp"))
    root.chmod(0o755)
    errors = Path(tempfile.mkstemp(prefix="adaroll-trainer-err-")[1])  # outside root: checked empty
    try:
        _kill_while_restoring(backend, root, errors)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        errors.unlink(missing_ok=True)


def _kill_while_restoring(backend: str, root: Path, errors: Path) -> None:
    before = _account_pids()
    marker = f"ADAROLL_TEST_TRAINER={os.getpid()}-{backend}"
    name, _, value = marker.partition("=")
    env = {**ENV, "TMPDIR": str(root), "ADAROLL_CRIU_DIR": str(root / "criu"), name: value}
    # stderr to a file, not a pipe: nobody reads it while the trainer runs, and a full pipe
    # would block the trainer (and its forked branches) before they print what the test awaits
    with open(errors, "wb") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-c", RESTORING_TRAINERS[backend] + RESTORE_LOOP],
            stdout=subprocess.PIPE,
            stderr=err_file,
            env=env,
            start_new_session=True,
            cwd=Path(__file__).resolve().parents[1],
        )
    assert proc.stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()  # read by a thread: a stuck trainer fails, not hangs
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout], daemon=True).start()
    for _ in range(5):
        try:
            line = lines.get(timeout=120)
        except queue.Empty:
            line = b"(nothing within 120 s)"
        if not line.startswith(b"restored"):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            pytest.fail(f"the trainer did not restore: {line!r} {errors.read_text()[-3000:]}")
    if backend == "criu":  # the kill lands while criu restores a branch
        deadline = time.monotonic() + 120
        while not any(" restore -D " in p for p in _ours(marker, root, before)):
            if time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                pytest.fail(f"no criu restore seen in 120 s: {errors.read_text()[-3000:]}")
    else:
        time.sleep(random.Random(SEED).uniform(0.0, 0.2))
    assert _ours(marker, root, before), "the trainer's tree is not visible to the check"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and _ours(marker, root, before):
        time.sleep(0.1)
    assert _ours(marker, root, before) == [], "processes outlived their trainer"
    mounts = Path("/proc/self/mounts").read_text()
    assert str(root) not in mounts
    left = [p for p in root.rglob("*") if p != root / "criu"]  # the configured root stays
    while time.monotonic() < deadline and left:
        time.sleep(0.1)
        left = [p for p in root.rglob("*") if p != root / "criu"]
    assert left == []
