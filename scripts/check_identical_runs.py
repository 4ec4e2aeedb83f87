"""Check that a refactoring changed no result: the quick runs of two git revisions give the
same ``summary.json`` and the same ``ledger.jsonl`` files, byte for byte once wall-clock fields
are set aside.

Usage (from a checkout; the candidate is this checkout's working tree, committed or not)::

    python scripts/check_identical_runs.py BASE_REV [--runs phone,web,gymnasium,trl]
                                           [--cache DIR] [--keep DIR]

The base revision is checked out with ``git worktree add --detach`` into a temporary folder and
run from there (``PYTHONPATH`` pointing at that tree); its outputs are saved under
``--cache/<full sha>/<run>`` and reused by later calls (a run is cached only once it finished).
The candidate is run from this checkout (``PYTHONPATH`` = its root) into a temporary folder
(or ``--keep``). Both use the interpreter this script runs under.

The runs (each a couple of minutes on two cores):

* ``phone``: ``adaroll run --quick`` on the default mobile env (every configuration: Stage I's
  OneStep groups, Vanilla's Root groups, Hybrid's routing, Local, Suffix and Root groups);
* ``web``: the web env (Chromium) with CRIU snapshots, two MiniWoB++ templates, tiny budgets,
  its second RL iteration all Suffix groups restored from CRIU images (tests/test_run_web_e2e.py);
* ``gymnasium``: Gymnasium's FrozenLake through the shipped adapter, the same shape with
  memory snapshots (tests/test_run_gymnasium_e2e.py);
* ``trl``: the TRL example (``trl_phone``: TRL's ``GRPOTrainer``, the tiny Qwen2 model, the
  phone) for two steps, its second step's rows Suffix groups restored through the integration;
  its ``ledger.jsonl`` and ``summary.json`` are compared like the others'. The example is run
  from wherever the tree keeps it (:data:`TRL_EXAMPLES`, first found).

Compared: ``summary.json`` and every ``ledger.jsonl`` under the run directory (the set of ledger
paths must match too). Ignored, as they measure the machine, not the computation, and differ
between two runs of the same revision:

* ``ts`` (ledger): the Unix time a record was written;
* ``wall_seconds`` (ledger): the wall seconds a unit of work took;
* ``restore_seconds`` (ledger): wall seconds spent restoring snapshots (CRIU restores take
  0.06-0.15 s each; memory restores microseconds);
* ``phase_seconds`` / ``seconds`` (summary rows and curves, if present): timings by phase.

Every other field, and the order of records and keys, must be equal: JSON text is compared after
the ignored keys are dropped and the rest re-serialised with the same key order (the order the
run wrote them in). Exit status 0 when every compared file matches, 1 otherwise (the first
differing record of each file is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

WALL_CLOCK_KEYS = frozenset({"ts", "wall_seconds", "restore_seconds", "phase_seconds", "seconds"})
"""Fields dropped before comparing (see the module docstring)."""

_TINY = (
    "sft.epochs=4",
    "rl.budget={iterations: 2}",
    "rl.eval.k=1",
    "rl.grpo.group_size=4",
    "rl.scheduler.tasks_per_iteration=2",
    "rl.scheduler.routing_probes=2",
    "rl.scheduler.tau_low=0",
    "rl.scheduler.tau_high=1",
)
"""tests/tiny_runs.py suffix_run: two RL iterations, the second all Suffix groups."""

RUNS: dict[str, tuple[str, ...]] = {
    "phone": (),
    "web": (
        "env.name=web",
        "env.snapshot_backend=criu",
        "env.suite_options={train_seeds: 1, eval_seeds: 1, pretrain_seeds: 3, "
        "templates: [click-button, click-tab-2]}",
        "configurations=[base, sft, base_vanilla, base_hybrid]",
        *_TINY,
    ),
    "gymnasium": (
        "env.name=gymnasium",
        "env.options={id: FrozenLake-v1, adapter: frozen_lake}",
        "env.suite_options={n_pretrain: 24, n_train: 2, n_heldout: 4, n_heldout_templates: 2}",
        "configurations=[base, sft, base_vanilla, base_hybrid]",
        *_TINY,
    ),
}
"""Overrides of each run, after ``--quick``'s."""

TRL_EXAMPLES = ("adaroll.examples.trl_phone", "adaroll.integrations.examples.trl_phone")
"""Where a tree may keep the TRL example (its module), newest layout first."""
TRL_ARGS = ("--steps", "2", "--num-generations", "2", "--tasks", "2", "--seed", "0")
"""The TRL example's run of the identical-runs check: two steps, groups of two, two tasks."""
NAMES = (*RUNS, "trl")
"""Every run this script knows."""


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def _command(tree: Path, name: str, out: Path) -> list[str]:
    """The command line of run ``name`` with the sources of ``tree``, writing into ``out``."""
    if name == "trl":
        module = next(m for m in TRL_EXAMPLES if (tree / (m.replace(".", "/") + ".py")).exists())
        return [sys.executable, "-m", module, "--out", str(out), *TRL_ARGS]
    sets = [arg for override in RUNS[name] for arg in ("--set", override)]
    return [
        sys.executable,
        "-m",
        "adaroll",
        "run",
        "--quick",
        "--no-progress",
        "--out",
        str(out),
        *sets,
    ]


def run_quick(tree: Path, name: str, out: Path) -> None:
    """Run ``name`` (``adaroll run --quick`` with its overrides, or the TRL example) with the
    sources of ``tree``, into ``out``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    # a short TMPDIR: Chromium does not start under a long one (tests/test_run_web_e2e.py)
    tmp = Path(tempfile.mkdtemp(prefix="adr-", dir="/tmp"))
    env["TMPDIR"] = str(tmp)
    try:
        done = subprocess.run(
            _command(tree, name, out),
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if done.returncode != 0:
        raise SystemExit(
            f"{name} run from {tree} failed (rc {done.returncode}):\n{done.stderr[-4000:]}"
        )


def base_outputs(rev: str, names: list[str], cache: Path) -> dict[str, Path]:
    """The base revision's run directories, run now where the cache lacks them."""
    sha = _git("rev-parse", f"{rev}^{{commit}}")
    folder = cache / sha
    missing = [n for n in names if not (folder / n / "FINISHED").exists()]
    if missing:
        tree = Path(tempfile.mkdtemp(prefix="adaroll-base-"))
        _git("worktree", "add", "--detach", str(tree), sha)
        try:
            for name in missing:
                out = folder / name
                shutil.rmtree(out, ignore_errors=True)
                print(f"base {sha[:10]}: running {name} ...", flush=True)
                run_quick(tree, name, out / "run")
                (out / "FINISHED").write_text(sha + "\n")
        finally:
            _git("worktree", "remove", "--force", str(tree))
    return {n: folder / n / "run" for n in names}


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in WALL_CLOCK_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _lines(path: Path) -> list[str]:
    text = path.read_text()
    if path.suffix == ".jsonl":
        return [json.dumps(_strip(json.loads(line))) for line in text.splitlines() if line]
    return json.dumps(_strip(json.loads(text)), indent=1).splitlines()


def compare(base: Path, candidate: Path) -> list[str]:
    """Differences between two run directories (empty: identical)."""
    problems: list[str] = []
    files = {p.relative_to(base) for p in base.rglob("ledger.jsonl")} | {Path("summary.json")}
    theirs = {p.relative_to(candidate) for p in candidate.rglob("ledger.jsonl")} | {
        Path("summary.json")
    }
    for extra in sorted(files ^ theirs):
        problems.append(f"{extra}: only in {'base' if extra in files else 'candidate'}")
    for rel in sorted(files & theirs):
        a, b = _lines(base / rel), _lines(candidate / rel)
        if a == b:
            continue
        first = next(
            (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
        )
        problems.append(
            f"{rel}: differs ({len(a)} vs {len(b)} lines) first at line {first + 1}:\n"
            f"  base:      {a[first] if first < len(a) else '<end>'}\n"
            f"  candidate: {b[first] if first < len(b) else '<end>'}"
        )
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="git revision to compare against (e.g. main, HEAD~3)")
    parser.add_argument(
        "--runs", default=",".join(NAMES), help=f"comma-separated, of {', '.join(NAMES)}"
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path("/tmp/adaroll-identical-runs"),
        help="where the base revision's outputs are kept and reused",
    )
    parser.add_argument("--keep", type=Path, default=None, help="write the candidate's runs here")
    args = parser.parse_args()
    names = [n.strip() for n in args.runs.split(",") if n.strip()]
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        parser.error(f"unknown run(s) {unknown}; valid: {', '.join(NAMES)}")
    base = base_outputs(args.base, names, args.cache)
    root = args.keep or Path(tempfile.mkdtemp(prefix="adaroll-candidate-"))
    failed = 0
    for name in names:
        out = root / name
        shutil.rmtree(out, ignore_errors=True)
        print(f"candidate ({ROOT}): running {name} ...", flush=True)
        run_quick(ROOT, name, out)
        problems = compare(base[name], out)
        ledgers = len(list(out.rglob("ledger.jsonl")))
        if problems:
            failed += 1
            print(f"{name}: DIFFERENT", *problems, sep="\n  ")
        else:
            print(f"{name}: identical (summary.json and {ledgers} ledger.jsonl files)")
    if args.keep is None:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
