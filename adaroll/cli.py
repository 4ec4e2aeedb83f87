"""The ``adaroll`` command line. Commands are thin: they parse options and call the package."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from adaroll.config import ConfigError, RunConfig, dump_config, load_config

app = typer.Typer(help="AdaRoll: adaptive rollouts for training GUI agents.", no_args_is_help=True,
                  pretty_exceptions_enable=False)  # fmt: skip
envs_app = typer.Typer(
    help="List, inspect and play environments and their tasks.", no_args_is_help=True
)
experts_app = typer.Typer(
    help="Run scripted experts and save verified trajectories.", no_args_is_help=True
)
train_app = typer.Typer(
    help="Train one phase: sft, stage1, onestep, hybrid or vanilla.", no_args_is_help=True
)
pivots_app = typer.Typer(help="Score checkpoints and select pivots.", no_args_is_help=True)
config_app = typer.Typer(help="Show the configuration schema and defaults.", no_args_is_help=True)
app.add_typer(envs_app, name="envs")
app.add_typer(experts_app, name="experts")
app.add_typer(train_app, name="train")
app.add_typer(pivots_app, name="pivots")
app.add_typer(config_app, name="config")

ConfigOpt = Annotated[Path | None, typer.Option("--config", "-c", help="YAML run config.")]
SetOpt = Annotated[
    list[str] | None, typer.Option("--set", "-s", help="Override: key.path=value (repeatable).")
]
OutOpt = Annotated[Path, typer.Option("--out", "-o", help="Run directory.")]


def _config(config: Path | None, overrides: list[str] | None, quick: bool = False) -> RunConfig:
    from adaroll.training.presets import QUICK_OVERRIDES

    try:
        return load_config(config, (QUICK_OVERRIDES if quick else []) + list(overrides or []))
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


@app.command()
def run(
    out: OutOpt = Path("runs/main"),
    config: ConfigOpt = None,
    set_: SetOpt = None,
    quick: Annotated[bool, typer.Option(help="Tiny budgets, for tests and a first look.")] = False,
    fresh: Annotated[
        bool, typer.Option(help="Ignore what the run directory holds; start over.")
    ] = False,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Collect rollouts on N Ray workers (rollout.backend=ray); starts a local Ray "
            "unless --ray-address is given. Results equal the single-process run's.",
        ),
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            help="Existing Ray cluster to use (e.g. auto, ray://head:10001); implies the Ray backend."
        ),
    ] = None,
) -> None:
    """The main job: the whole method end to end (experts -> Base -> SFT -> Stage I -> Vanilla,
    Hybrid and one-step-only from Base, Vanilla and Hybrid from Action and from SFT), every
    configuration with its whole bill, then the report. Resumes a killed run in OUT."""
    import shutil

    from adaroll.report import write_report
    from adaroll.training.pipeline import Pipeline

    cfg = _config(config, (set_ or []) + _rollout_overrides(workers, ray_address), quick)
    if fresh and out.exists():
        shutil.rmtree(out)
    summary = Pipeline(cfg, out, progress=progress, say=lambda m: typer.echo(m)).run()
    report = write_report(out)
    _print_headline(summary)
    typer.echo(f"\nreport: {report}\nsummary: {out / 'summary.json'}")


def _rollout_overrides(workers: int | None, ray_address: str | None) -> list[str]:
    """``--workers`` / ``--ray-address`` as config overrides (they switch to the Ray backend)."""
    out: list[str] = []
    if workers is not None or ray_address is not None:
        out.append("rollout.backend=ray")
    if workers is not None:
        out.append(f"rollout.workers={workers}")
    if ray_address is not None:
        out.append(f"rollout.ray_address={json.dumps(ray_address)}")
    return out


def _print_headline(summary: dict) -> None:  # type: ignore[type-arg]
    from adaroll.report import LABELS, table3

    typer.echo("\n" + table3(summary))
    rows = summary["configurations"]
    target = summary.get("target_val_avg4")
    if target is None:
        return
    typer.echo(f"\ntarget = mean of Base->Vanilla's last three Val Avg@4 = {100 * target:.2f}")
    typer.echo("cost to the target (whole bill: rollouts, probes, replays, demonstrations, selection):")
    for name, r in rows.items():
        if r.get("reached_target") is None:
            continue
        if not r["reached_target"]:
            typer.echo(f"  {LABELS[name]}: not reached (>= {r['total_env_steps']:,} total env steps)")
            continue
        typer.echo(f"  {LABELS[name]}: {r['steps_to_target']:,} total env steps, "
                   f"{r['samples_to_target']:,} policy samples")  # fmt: skip


@app.command()
def report(
    runs: Annotated[list[Path], typer.Argument(help="Run directories.")],
) -> None:
    """Write report.md and the plots for each run directory."""
    from adaroll.report import write_report

    for run_dir in runs:
        try:
            typer.echo(write_report(run_dir))
        except FileNotFoundError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None


@app.command()
def experiment(
    names: Annotated[
        list[str],
        typer.Argument(
            help="Experiments to run: full, efficiency, routing, pivots, sensitivity, options, bandit-action, bandit-routing, "
            "device, restore-cost, or all.",
            show_default=False,
        ),
    ],
    env: Annotated[
        str, typer.Option(help="Environment profile: mobile (the noisy phone), mobile-clean, web "
                               "or web-long (four times web's RL budget).")
    ] = "mobile",
    seeds: Annotated[str, typer.Option(help="Comma-separated seeds.")] = "0,1,2",
    quick: Annotated[
        bool, typer.Option(help="Tiny budgets (CI): same experiments, same outputs.")
    ] = False,
    jobs: Annotated[int, typer.Option(min=1, help="Runs trained at once (one process each).")] = 1,
    root: Annotated[Path, typer.Option(help="Where runs and results go.")] = Path(
        "runs/experiments"
    ),
) -> None:
    """Reproduce one of the paper's experiments over several seeds: trains the runs it needs
    (resuming and sharing runs between experiments) and writes results.md, results.json and
    its plot under ROOT/ENV[-quick]/NAME."""
    from adaroll.experiments.runner import run_experiments
    from adaroll.experiments.specs import EXPERIMENTS

    try:
        seed_list = [int(s) for s in seeds.split(",") if s.strip()]
    except ValueError:
        typer.echo(f"error: --seeds must be comma-separated integers, got {seeds!r}", err=True)
        raise typer.Exit(2) from None
    chosen = EXPERIMENTS.names() if names == ["all"] else names
    for path in run_experiments(chosen, profile=env, seeds=seed_list, quick=quick, root=root, jobs=jobs,
                                say=lambda m: typer.echo(m, err=True)):  # fmt: skip
        typer.echo(path / "results.md")


@app.command()
def results(
    root: Annotated[
        Path, typer.Option(help="Where `adaroll experiment` wrote its results.")
    ] = Path("runs/experiments"),
    out: Annotated[Path, typer.Option(help="The results page to write.")] = Path("docs/RESULTS.md"),
    notes: Annotated[
        Path | None, typer.Option(help="Hand-written discussion appended to the page.")
    ] = None,
) -> None:
    """Gather every experiment under ROOT into one page (tables, plots, commands, machine,
    versions, seeds) with the paper's numbers side by side."""
    from adaroll.experiments.results_doc import write_results

    typer.echo(write_results(root, out, notes))


def _pipeline(out: Path, config: Path | None, set_: list[str] | None, quick: bool = False):  # type: ignore[no-untyped-def]
    from adaroll.training.pipeline import Pipeline

    return Pipeline(_config(config, set_, quick), out, say=lambda m: typer.echo(m, err=True))


@experts_app.command("collect")
def experts_collect(
    split: Annotated[
        str, typer.Option(help="Task split: pretrain, train, val, heldout, heldout-templates.")
    ] = "train",
    expert: Annotated[
        str | None, typer.Option(help="scripted or remote (expert.options in the config).")
    ] = None,
    out: OutOpt = Path("runs/main"),
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Run the expert on a split; keep verified successes as trajectories and checkpoints
    under OUT/experts/SPLIT."""
    pipeline = _pipeline(
        out, config, [*(set_ or []), *([f"expert.kind={expert}"] if expert else [])]
    )
    store = pipeline.store(split)
    typer.echo(f"{len(store)} checkpoints in {out / 'experts' / split}")


@train_app.command("sft")
def train_sft_cmd(
    name: Annotated[str, typer.Option(help="Policy name under OUT/policies.")] = "base",
    split: Annotated[str, typer.Option(help="Expert split to clone.")] = "pretrain",
    init: Annotated[Path | None, typer.Option(help="Start from this saved policy.")] = None,
    out: OutOpt = Path("runs/main"),
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Behaviour cloning on expert steps (Base = SFT on the pretrain pool)."""
    from adaroll.policies import load_policy

    pipeline = _pipeline(out, config, set_)
    start = load_policy(pipeline.cfg.policy, init) if init else None
    pipeline.sft_policy(name, start, split)
    typer.echo(f"policy saved to {out / 'policies' / name}")


def _rl(algorithm: str, start: Path, name: str | None, out: Path, config: Path | None,
        set_: list[str] | None, resume: bool) -> None:  # fmt: skip
    from adaroll.policies import load_policy

    pipeline = _pipeline(out, config, set_)
    phase = pipeline.cfg.stage1 if algorithm == "stage1" else pipeline.cfg.rl
    phase = phase.model_copy(update={"algorithm": algorithm})
    result = pipeline.rl_phase(name or algorithm, load_policy(pipeline.cfg.policy, start), phase,
                               resume=resume)  # fmt: skip
    typer.echo(json.dumps(result.final, indent=1, default=str))


StartOpt = Annotated[Path, typer.Option("--policy", help="Saved policy to start from.")]
NameOpt = Annotated[str | None, typer.Option(help="Phase directory name under OUT.")]
ResumeOpt = Annotated[bool, typer.Option(help="Continue the phase from its saved state.")]


def _register_rl_command(algorithm: str, doc: str) -> None:
    def command(policy: StartOpt, name: NameOpt = None, out: OutOpt = Path("runs/main"),
                config: ConfigOpt = None, set_: SetOpt = None, resume: ResumeOpt = False) -> None:  # fmt: skip
        _rl(algorithm, policy, name, out, config, set_, resume)

    command.__doc__ = doc
    train_app.command(algorithm)(command)


for _algorithm, _doc in (
    (
        "stage1",
        "Stage I: OneStep GRPO on pivots; keeps the best policy by Val Avg@k in OUT/NAME/best.",
    ),
    ("onestep", "Baseline: Stage I's OneStep GRPO on pivots for the Stage II budget (last policy)."),
    ("hybrid", "Stage II: adaptive Local/Suffix/Root routing."),
    ("vanilla", "Baseline: trajectory-level GRPO from the task root for every task."),
):
    _register_rl_command(_algorithm, _doc)


@pivots_app.command("score")
def pivots_score(policy: StartOpt, name: Annotated[str, typer.Option()] = "manual",
                 out: OutOpt = Path("runs/main"), config: ConfigOpt = None, set_: SetOpt = None) -> None:  # fmt: skip
    """N samples per train checkpoint; writes scores and the pivot set to OUT/pivots/NAME.json."""
    from adaroll.policies import load_policy

    pipeline = _pipeline(out, config, set_)
    pivot_set = pipeline.pivots(name, load_policy(pipeline.cfg.policy, policy), pipeline.cfg.stage1)
    typer.echo(f"{pivot_set.count} pivots of {len(pivot_set.scores)} checkpoints -> "
               f"{out / 'pivots' / (name + '.json')}")  # fmt: skip


@app.command("eval")
def eval_cmd(
    policy: StartOpt,
    split: Annotated[
        list[str] | None, typer.Option(help="Splits to evaluate (repeatable).")
    ] = None,
    k: Annotated[int, typer.Option(help="Attempts per task.")] = 4,
    seed: Annotated[int, typer.Option()] = 0,
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Avg@k / Pass@k of a saved policy on task splits."""
    from adaroll.evaluation import evaluate_split
    from adaroll.policies import load_policy

    pipeline = _pipeline(Path("."), config, set_)
    loaded = load_policy(pipeline.cfg.policy, policy)
    for name in split or ["train", "heldout"]:
        r = evaluate_split(loaded, pipeline.make_env, pipeline.split(name), k=k, seed=seed)
        typer.echo(f"{name}: Avg@{k} {100 * r.avg:.2f}  Pass@{k} {100 * r.pass_:.2f}  "
                   f"({r.episodes} episodes, {r.env_steps} env steps)")  # fmt: skip


# -- envs -------------------------------------------------------------------------------------

EnvArg = Annotated[str, typer.Argument(help="Environment name (see `adaroll envs list`).")]
TaskOpt = Annotated[str, typer.Option("--task", "-t", help="Task template name.")]
SeedOpt = Annotated[int, typer.Option(help="Seed of the task's parameters.")]
DeviceOpt = Annotated[
    str | None,
    typer.Option("--device", help="Mobile device profile: clean or noisy [noisy, as in runs]."),
]


def _task_env(env: str, task: str, seed: int, device: str | None = None):  # type: ignore[no-untyped-def]
    from adaroll.envs import get_suite, make_env
    from adaroll.envs.base import TaskSpec

    if device is not None and env != "mobile":
        typer.echo(f"error: --device is a mobile option; the {env} env has no device profiles", err=True)
        raise typer.Exit(2)
    try:
        suite = get_suite(env)
        if task not in suite.templates():
            raise KeyError(
                f"unknown {env} task template {task!r}; see `adaroll envs list {env} --templates`"
            )
        options = {"device": device or "noisy"} if env == "mobile" else {}
        return make_env(env, **options), suite, TaskSpec(env, task, seed)
    except KeyError as exc:
        typer.echo(f"error: {exc.args[0] if exc.args else exc}", err=True)
        raise typer.Exit(2) from None


def _device_lines(instance: Any) -> list[str]:
    """The env's device profile and its rate table (mobile), else nothing."""
    profile = getattr(instance, "device", None)
    if profile is None:
        return []
    from adaroll.envs.mobile.device import RATE_DOCS

    lines = [f"device: {profile.name} (at most {profile.max_interruptions} interruptions per "
             f"episode, step limit +{profile.extra_steps})"]  # fmt: skip
    lines += [f"  {kind:<16} {rate:5.2f}  {RATE_DOCS[kind]}" for kind, rate in profile.rates().items()]
    return lines


@envs_app.command("list")
def envs_list(
    env: Annotated[str | None, typer.Argument(help="Only this environment.")] = None,
    templates: Annotated[
        bool, typer.Option("--templates", help="List every task template.")
    ] = False,
) -> None:
    """Environments, their task templates and split sizes."""
    from adaroll.config import ConfigError
    from adaroll.envs import get_suite, load_all

    for name, problem in load_all().items():
        if env is not None and name != env:
            continue
        if problem:
            typer.echo(f"{name}: unavailable ({problem})")
            continue
        try:
            suite = get_suite(name)
        except ConfigError as exc:  # an env configured by its options (gymnasium: the adapter)
            typer.echo(f"{name}: {exc}")
            continue
        sizes = []
        for split in ("pretrain", "train", "val", "heldout", "heldout-templates"):
            try:
                sizes.append(f"{split}={len(suite.split(split))}")
            except Exception as exc:  # an env may not define every split
                sizes.append(f"{split}=({type(exc).__name__})")
        typer.echo(f"{name}: {len(suite.templates())} task templates; splits: {', '.join(sizes)}")
        if templates:
            info = getattr(suite, "template_info", None)
            for t in suite.templates():
                extra = ""
                if info is not None:
                    i = info(t)
                    extra = (f"  steps~{i['difficulty']:g}  [{' '.join(i['tags'])}]"
                             + ("  (held-out template)" if i["heldout"] else ""))  # fmt: skip
                typer.echo(f"  {t}{extra}")


@envs_app.command("show")
def envs_show(
    env: EnvArg = "mobile",
    task: TaskOpt = "settings.wifi",
    seed: SeedOpt = 0,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Screenshot PNG [TASK-SEED.png].")
    ] = None,
    device: DeviceOpt = None,
) -> None:
    """Print a task's instruction and first screen's element list; write its screenshot. On
    the mobile env, also the device profile's perturbation rates."""
    from adaroll.envs.preview import show_task

    instance, _, spec = _task_env(env, task, seed, device)
    try:
        instruction, elements, written = show_task(
            instance, spec, out or Path(f"{task}-{seed}.png")
        )
    finally:
        instance.close()
    for line in _device_lines(instance):
        typer.echo(line)
    typer.echo(f"task: {spec.id}\ninstruction: {instruction}\n{elements}")
    typer.echo(f"screenshot: {written}" if written else "screenshot: (this env does not render)")


@envs_app.command("play")
def envs_play(
    env: EnvArg = "mobile",
    task: TaskOpt = "settings.wifi",
    seed: SeedOpt = 0,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="GIF (.gif) or contact sheet (.png) [TASK-SEED.gif]."),
    ] = None,
    device: DeviceOpt = None,
) -> None:
    """Replay the scripted expert on a task and write its screens as a GIF or contact sheet.
    On the mobile env each step says which interruption was on screen, and the end lists the
    episode's perturbations."""
    from adaroll.envs.preview import play_task, screen_notes

    instance, suite, spec = _task_env(env, task, seed, device)
    out = out or Path(f"{task}-{seed}.gif")
    try:
        traj = play_task(instance, suite, spec, out)
        notes = screen_notes(instance, traj)
    finally:
        instance.close()
    typer.echo(f"task: {spec.id}\ninstruction: {traj.instruction}")
    for i, action in enumerate(traj.actions):
        typer.echo(f"  {i:2d}  {action.to_text()}{notes.get(i, '')}")
    if "end" in notes:
        typer.echo(notes["end"])
    typer.echo(f"{len(traj.actions)} expert steps, success={traj.success}; wrote {out}")


@config_app.command("show")
def config_show(config: ConfigOpt = None, set_: SetOpt = None,
                quick: Annotated[bool, typer.Option()] = False) -> None:  # fmt: skip
    """Print the resolved configuration as YAML."""
    typer.echo(dump_config(_config(config, set_, quick)))


@config_app.command("schema")
def config_schema() -> None:
    """Print every config field with its type, default and documentation (JSON schema)."""
    typer.echo(json.dumps(RunConfig.model_json_schema(), indent=1))


def main() -> None:
    from adaroll.policies.small import PolicyFileError
    from adaroll.registry import UnknownNameError
    from adaroll.snapshots.base import SnapshotError

    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
    except (ConfigError, UnknownNameError, FileNotFoundError, SnapshotError, PolicyFileError) as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
