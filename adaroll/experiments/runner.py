"""`adaroll experiment`: train every (variant, seed) an experiment needs, then analyse.

Each (variant, seed) is one `adaroll run` directory, trained in its own process (``jobs`` at a
time) and shared by all experiments that use the variant; a directory lock keeps two
processes out of one directory. Runs resume, so an interrupted experiment continues where it
stopped and a second experiment on the same variant reuses what the first trained.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from adaroll.config import ConfigError
from adaroll.experiments.profiles import PROFILES, Profile
from adaroll.experiments.specs import EXPERIMENTS, Experiment
from adaroll.experiments.variants import VARIANTS
from adaroll.io import atomic_write_text


@dataclass(frozen=True)
class Unit:
    """One training run of an experiment: a variant, a seed and the configurations needed."""

    variant: str
    seed: int
    configurations: tuple[str, ...]

    def directory(self, home: Path) -> Path:
        return home / "runs" / self.variant / f"seed{self.seed}"


def profile_home(root: Path, profile: str, quick: bool) -> Path:
    return Path(root) / (profile + ("-quick" if quick else ""))


_BUDGET_FIELDS = ("rl.budget=", "rl.eval.every_env_steps=", "rl.eval.every_policy_samples=")


def overrides_for(profile: Profile, quick: bool, unit: Unit) -> list[str]:
    """The profile's overrides, then (``quick``) its tiny ones, then the variant's. A quick run
    keeps its tiny RL budget and marks even where a variant sets its own (the recipe sweep's
    15,000 env steps), so that every ``--quick`` experiment stays a smoke test."""
    quick_budget = [o for o in profile.quick if o.startswith(_BUDGET_FIELDS)] if quick else []
    base = [*profile.overrides, *(profile.quick if quick else ())]
    variant = VARIANTS[unit.variant]
    scaled = []
    if variant.stage1_scale != 1.0:
        from adaroll.config import load_config

        iterations = load_config(None, base).stage1.budget.iterations
        if iterations is None:
            raise ConfigError(f"{unit.variant}: Stage I's budget is not in iterations")
        scaled = [f"stage1.budget={{iterations: {round(iterations * variant.stage1_scale)}}}"]
    return [
        *base,
        *variant.overrides,
        *scaled,
        *quick_budget,
        f"seed={unit.seed}",
        f"configurations=[{', '.join(unit.configurations)}]",
    ]


def chosen_experiments(
    names: Sequence[str], variants: Sequence[str] | None = None
) -> list[Experiment]:
    """The named experiments, each with only the optional variants in ``variants`` (every one
    when None); a name there that no experiment has as optional is a config error."""
    exps = [EXPERIMENTS.get(name) for name in names]
    if variants is not None:
        optional = {v for exp in exps for v in exp.optional}
        unknown = [v for v in variants if v not in optional]
        if unknown:
            raise ConfigError(
                f"--variants: {', '.join(map(repr, unknown))} not an optional variant of "
                f"{', '.join(names)}; optional: {', '.join(sorted(optional)) or 'none'}"
            )
    return [exp.narrowed(None if variants is None else tuple(variants)) for exp in exps]


def plan_units(
    names: Sequence[str],
    seeds: Sequence[int],
    profile: Profile,
    variants: Sequence[str] | None = None,
) -> list[Unit]:
    """The runs the experiments need, one per (variant, seed) with the union of configurations
    (of the optional variants, only those in ``variants`` when given)."""
    wanted: dict[tuple[str, int], dict[str, None]] = {}
    for exp in chosen_experiments(names, variants):
        for variant in exp.variants_for(profile):
            for seed in seeds:
                wanted.setdefault((variant, seed), {}).update(
                    dict.fromkeys(exp.configurations_of(variant, profile))
                )
    # seed-major: an interrupted experiment has every variant for its first seeds
    return [Unit(v, s, tuple(c)) for (v, s), c in sorted(wanted.items(), key=lambda kv: kv[0][1])]


@contextlib.contextmanager
def directory_lock(directory: Path) -> Iterator[None]:
    """Exclusive use of a run directory across processes (waits for the holder)."""
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


SHARED_BASE = ("experts", "policies/base", "evals/base.json")
"""What every variant of a seed computes identically when it only changes Stage I, Stage II or
which train demonstrations are kept: the demonstrations and the Base policy with its scores."""
_AFTER_BASE = ("stage1.", "rl.", "expert.train_coverage=")


def shares_base(variant: str) -> bool:
    overrides = VARIANTS[variant].overrides
    return variant != "default" and all(o.startswith(_AFTER_BASE) for o in overrides)


def copy_base(source: Path, target: Path) -> None:
    """Seed ``target`` with the finished Base of ``source`` (same seed, same env and SFT), and
    with the env settings it was made under (``env.json``): a target whose env now differs
    then refuses to start instead of building on a Base of another env."""
    if not (source / "policies" / "base" / "done").exists():
        return
    for rel in (*SHARED_BASE, "env.json"):
        if rel == "env.json" and not (source / rel).exists():
            continue  # a Base from before settings were recorded
        src, dst = source / rel, target / rel
        if dst.exists():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            shutil.copy2(src, dst)


def train_unit(
    directory: str, overrides: list[str], base_from: str | None = None
) -> dict[str, Any]:
    """Run (or resume) one `adaroll run` in this process; its output goes to ``run.log``."""
    from adaroll.config import load_config
    from adaroll.training.pipeline import Pipeline

    out = Path(directory)
    cfg = load_config(None, overrides)
    with directory_lock(out), open(out / "run.log", "a") as log:
        if base_from is not None:
            copy_base(Path(base_from), out)
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            summary = Pipeline(cfg, out, progress=False, say=lambda m: print(m, flush=True)).run()
        seconds = time.perf_counter() - t0
    return {"summary": summary, "seconds": seconds}


def run_units(
    units: Sequence[Unit],
    home: Path,
    profile: Profile,
    quick: bool,
    jobs: int,
    on_done: Callable[[Unit, dict[str, Any]], None],
) -> None:
    """Train ``units`` with ``jobs`` processes (in this process when ``jobs == 1``)."""
    from adaroll.config import load_config

    for unit in units:  # a bad override fails here, before any process starts
        load_config(None, overrides_for(profile, quick, unit))
    # Base first (once per seed), so that variants which share it copy it instead of retraining
    bases = [
        Unit("default", s, ("base",))
        for s in sorted({u.seed for u in units if shares_base(u.variant)})
    ]
    for stage, report in ((bases, False), (units, True)):
        _train_all(stage, home, profile, quick, jobs, on_done if report else lambda u, r: None)


def _args(
    unit: Unit, home: Path, profile: Profile, quick: bool
) -> tuple[str, list[str], str | None]:
    base = (
        str(Unit("default", unit.seed, ()).directory(home)) if shares_base(unit.variant) else None
    )
    return str(unit.directory(home)), overrides_for(profile, quick, unit), base


def die_with_parent(runner: int) -> None:
    """Make this worker process end when the runner that started it dies (Linux). A worker that
    trained on after its runner was killed would hold its run's lock and a core while the user
    restarts the command, and finish a run nobody reads."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # not Linux: the worker ends when the pool's pipe closes
        return
    if os.getppid() != runner:  # the runner died before prctl took effect
        os._exit(1)


_PR_SET_PDEATHSIG = 1


def _train_all(
    units: Sequence[Unit],
    home: Path,
    profile: Profile,
    quick: bool,
    jobs: int,
    on_done: Callable[[Unit, dict[str, Any]], None],
) -> None:
    if jobs == 1 or len(units) <= 1:
        for unit in units:
            on_done(unit, train_unit(*_args(unit, home, profile, quick)))
        return
    # spawn: a fork of a process holding torch threads and browser sockets is not safe
    with ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=get_context("spawn"),
        initializer=die_with_parent,
        initargs=(os.getpid(),),
    ) as pool:
        pending: dict[Future[dict[str, Any]], Unit] = {
            pool.submit(train_unit, *_args(u, home, profile, quick)): u for u in units
        }
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                on_done(pending.pop(future), future.result())


RESUMED_SECONDS = 5.0
"""A run that reports less than this was already finished (loaded, not trained): it does not
count toward the pace the time-left estimate reads."""


def time_left(elapsed: float, trained: int, remaining: int) -> str:
    """``remaining`` runs at the pace of this invocation (``elapsed`` wall seconds for
    ``trained`` runs, jobs in parallel included), as the experiment's progress line shows it."""
    if trained == 0 or remaining == 0:
        return ""
    minutes = elapsed / trained * remaining / 60
    return f"; about {minutes:.0f} min left at this pace"


def run_experiments(
    names: Sequence[str],
    *,
    profile: str,
    seeds: Sequence[int],
    quick: bool,
    root: Path,
    jobs: int = 1,
    variants: Sequence[str] | None = None,
    say: Callable[[str], None] = print,
) -> list[Path]:
    """Train what ``names`` need (of their optional variants, only ``variants`` when given) and
    write each experiment's results; returns their directories."""
    prof = _profile(names, profile)
    home = profile_home(root, profile, quick)
    units = plan_units(names, seeds, prof, variants)
    seconds: dict[str, float] = {}
    summaries: dict[str, dict[int, dict[str, Any]]] = {}
    started = time.monotonic()

    def done(unit: Unit, result: dict[str, Any]) -> None:
        summaries.setdefault(unit.variant, {})[unit.seed] = result["summary"]
        seconds[f"{unit.variant}/seed{unit.seed}"] = round(result["seconds"], 1)
        trained = sum(s >= RESUMED_SECONDS for s in seconds.values())
        left = time_left(time.monotonic() - started, trained, len(units) - len(seconds))
        say(
            f"[{len(seconds)}/{len(units)}] {unit.variant} seed {unit.seed}: {result['seconds']:.0f} s "
            f"({unit.directory(home)}){left}"
        )

    say(
        f"{len(units)} runs ({', '.join(names)}; profile {profile}{', quick' if quick else ''}; "
        f"seeds {', '.join(map(str, seeds))}; {jobs} at a time) under {home}"
    )
    run_units(units, home, prof, quick, jobs, done)
    return write_analyses(
        names, profile, seeds, quick, home, summaries, seconds, home, say, variants
    )


def analyse_experiments(
    names: Sequence[str],
    *,
    profile: str,
    seeds: Sequence[int],
    quick: bool,
    root: Path,
    out: Path,
    variants: Sequence[str] | None = None,
    say: Callable[[str], None] = print,
) -> list[Path]:
    """Analyse finished runs without training or writing anything under ``root``: every
    (variant, seed) ``names`` need must hold a ``summary.json`` with its configurations; the
    results go to ``out/<profile>[-quick]/<name>`` (e.g. runs another process is still
    training, read while it works on later seeds)."""
    prof = _profile(names, profile)
    home = profile_home(root, profile, quick)
    summaries: dict[str, dict[int, dict[str, Any]]] = {}
    missing = []
    for unit in plan_units(names, seeds, prof, variants):
        path = unit.directory(home) / "summary.json"
        summary = json.loads(path.read_text()) if path.exists() else {}
        if not set(unit.configurations) <= set(summary.get("configurations", {})):
            missing.append(str(unit.directory(home)))
            continue
        summaries.setdefault(unit.variant, {})[unit.seed] = summary
    if missing:
        raise ConfigError(
            f"{len(missing)} run(s) not finished: {', '.join(missing[:3])}"
            f"{', ...' if len(missing) > 3 else ''}; analyse the seeds that are"
        )
    target = profile_home(out, profile, quick)
    return write_analyses(names, profile, seeds, quick, home, summaries, {}, target, say, variants)


def _profile(names: Sequence[str], profile: str) -> Profile:
    if profile not in PROFILES:
        raise ConfigError(f"unknown environment profile {profile!r}; valid: {', '.join(PROFILES)}")
    for name in names:
        exp = EXPERIMENTS.get(name)
        if not exp.runs_on(profile):
            raise ConfigError(
                f"experiment {name!r} runs on the profiles {', '.join(exp.profiles)}, "
                f"not {profile!r}"
            )
    return PROFILES[profile]


def write_analyses(
    names: Sequence[str],
    profile: str,
    seeds: Sequence[int],
    quick: bool,
    home: Path,
    summaries: dict[str, dict[int, dict[str, Any]]],
    seconds: dict[str, float],
    target: Path,
    say: Callable[[str], None],
    variants: Sequence[str] | None = None,
) -> list[Path]:
    """Each experiment's results.md/results.json (and plots) from the runs under ``home``,
    written to ``target/<name>``."""
    from adaroll.experiments.analyses import analyse

    prof = PROFILES[profile]
    written = []
    for name, exp in zip(names, chosen_experiments(names, variants), strict=True):
        out = target / name
        out.mkdir(parents=True, exist_ok=True)
        section = analyse(
            exp, home, prof, {v: summaries[v] for v in exp.variants_for(prof)}, seeds, out, quick
        )
        meta = {
            "experiment": name,
            "title": exp.title,
            "profile": profile,
            "quick": quick,
            "seeds": list(seeds),
            "command": _command(),
            "run_seconds": seconds,
            "overrides": {
                v: overrides_for(prof, quick, Unit(v, 0, exp.configurations_of(v, prof)))[:-2]
                for v in exp.variants_for(prof)
            },
        }
        atomic_write_text(out / "results.json", json.dumps({**meta, **section.data}, indent=1))
        atomic_write_text(out / "results.md", section.markdown)
        say(f"{exp.title}: {out / 'results.md'}")
        written.append(out)
    return written


def _command() -> str:
    argv = [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv and sys.argv[0] else []
    return " ".join(argv) or f"(python, pid {os.getpid()})"
