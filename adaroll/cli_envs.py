"""``adaroll envs``: list, inspect and play environments and their tasks."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from adaroll.cli_common import ConfigOpt, SetOpt, load_or_exit

envs_app = typer.Typer(
    help="List, inspect and play environments and their tasks.", no_args_is_help=True
)

EnvArg = Annotated[
    str | None,
    typer.Argument(
        help="Environment name (see `adaroll envs list`) [env.name of the config: mobile]."
    ),
]
TaskOpt = Annotated[
    str | None,
    typer.Option("--task", "-t", help="Task template [mobile: settings.wifi; else the first]."),
]
SeedOpt = Annotated[int, typer.Option(help="Seed of the task's parameters.")]
DeviceOpt = Annotated[
    str | None,
    typer.Option("--device", help="Mobile device profile: clean or noisy [noisy, as in runs]."),
]


def _configured(env: str | None, config: Path | None, overrides: list[str] | None):  # type: ignore[no-untyped-def]
    """The env name, env options and suite options of ``--config``/``--set`` (an ``ENV``
    argument names the env; it must agree with ``env.name`` when both are given)."""
    cfg = load_or_exit(config, overrides)
    given = config is not None or any(o.strip().startswith("env.name=") for o in overrides or [])
    if env is not None and given and env != cfg.env.name:
        typer.echo(f"error: ENV is {env!r} but the config's env.name is {cfg.env.name!r}", err=True)
        raise typer.Exit(2)
    name = env or cfg.env.name
    if name != cfg.env.name:  # `envs show web`: that env with its own defaults
        cfg = load_or_exit(config, [*(overrides or []), f"env.name={name}"])
    return name, dict(cfg.env.options), dict(cfg.env.suite_options)


def _task_env(  # type: ignore[no-untyped-def]
    env: str | None,
    task: str | None,
    seed: int,
    device: str | None = None,
    config: Path | None = None,
    overrides: list[str] | None = None,
):
    from adaroll.config import ConfigError
    from adaroll.envs import get_suite, make_env
    from adaroll.envs.base import TaskSpec

    name, options, suite_options = _configured(env, config, overrides)
    if device is not None and name != "mobile":
        typer.echo(
            f"error: --device is a mobile option; the {name} env has no device profiles", err=True
        )
        raise typer.Exit(2)
    if device is not None:
        options["device"] = device
    try:
        suite = get_suite(name, options, **suite_options)
        templates = suite.templates()
        task = task or ("settings.wifi" if name == "mobile" else templates[0])
        if task not in templates:
            raise KeyError(
                f"unknown {name} task template {task!r}; see `adaroll envs list {name} --templates`"
            )
        return make_env(name, **options), suite, TaskSpec(name, task, seed)
    except KeyError as exc:
        typer.echo(f"error: {exc.args[0] if exc.args else exc}", err=True)
        raise typer.Exit(2) from None
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


def _device_lines(instance: Any) -> list[str]:
    """The env's device profile and its rate table (mobile), else nothing."""
    profile = getattr(instance, "device", None)
    if profile is None:
        return []
    from adaroll.envs.mobile.device import RATE_DOCS

    lines = [
        f"device: {profile.name} (at most {profile.max_interruptions} interruptions per "
        f"episode, step limit +{profile.extra_steps})"
    ]
    lines += [
        f"  {kind:<16} {rate:5.2f}  {RATE_DOCS[kind]}" for kind, rate in profile.rates().items()
    ]
    return lines


@envs_app.command("list")
def envs_list(
    env: Annotated[str | None, typer.Argument(help="Only this environment.")] = None,
    templates: Annotated[
        bool, typer.Option("--templates", help="List every task template.")
    ] = False,
    lengths: Annotated[
        bool,
        typer.Option(
            "--lengths",
            help="Mobile and apps: one line per template, its id first "
            "and its expert's mean length in steps last, measured now (mobile: on --device).",
        ),
    ] = False,
    device: DeviceOpt = None,
) -> None:
    """Environments, their task templates and split sizes."""
    from adaroll.config import ConfigError
    from adaroll.envs import get_suite, load_all

    if lengths:
        _list_lengths(env, device)
        return

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
            for t in suite.templates():
                extra = ""
                i = suite.template_info(t)
                if i is not None:
                    extra = f"  steps~{i['difficulty']:g}  [{' '.join(i['tags'])}]" + (
                        "  (held-out template)" if i["heldout"] else ""
                    )
                typer.echo(f"  {t}{extra}")


def _list_lengths(env: str | None, device: str | None) -> None:
    """``envs list mobile --lengths``: run each template's expert on a few seeds and print
    ``id  family  apps  mean-steps`` (nothing is cached: the lengths are today's experts').
    Another env whose suite declares ``expert_lengths`` (apps) prints the same columns."""
    if env not in (None, "mobile"):
        from adaroll.envs import get_suite

        rows = get_suite(env).expert_lengths()
        if rows is None:
            typer.echo(
                f"error: --lengths: the {env} env's suite cannot measure its experts "
                "(mobile and apps can)",
                err=True,
            )
            raise typer.Exit(2)
        typer.echo(f"# template family apps mean-expert-steps ({env})", err=True)
        for name, family, apps, steps in rows:
            typer.echo(f"{name}  {family}  {apps}  {steps:.2f}")
        return
    from adaroll.envs.mobile.suite import LENGTH_SEEDS, expert_length
    from adaroll.envs.mobile.tasks import all_templates

    profile = device or "noisy"
    typer.echo(
        f"# template family apps mean-expert-steps ({profile} device, seeds "
        f"{', '.join(map(str, LENGTH_SEEDS))})",
        err=True,
    )
    try:
        for name, tpl in sorted(all_templates().items()):
            steps = expert_length(name, profile)
            typer.echo(f"{name}  {tpl.family}  {','.join(tpl.apps)}  {steps:.2f}")
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None


@envs_app.command("show")
def envs_show(
    env: EnvArg = None,
    task: TaskOpt = None,
    seed: SeedOpt = 0,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Screenshot PNG [TASK-SEED.png].")
    ] = None,
    device: DeviceOpt = None,
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Print a task's instruction and first screen's element list; write its screenshot. On
    the mobile env, also the device profile's perturbation rates."""
    from adaroll.envs.preview import show_task

    instance, _, spec = _task_env(env, task, seed, device, config, set_)
    try:
        instruction, elements, written = show_task(
            instance, spec, out or Path(f"{spec.template}-{seed}.png")
        )
    finally:
        instance.close()
    for line in _device_lines(instance):
        typer.echo(line)
    typer.echo(f"task: {spec.id}\ninstruction: {instruction}\n{elements}")
    typer.echo(f"screenshot: {written}" if written else "screenshot: (this env does not render)")


@envs_app.command("play")
def envs_play(
    env: EnvArg = None,
    task: TaskOpt = None,
    seed: SeedOpt = 0,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="GIF (.gif) or contact sheet (.png) [TASK-SEED.gif]."),
    ] = None,
    device: DeviceOpt = None,
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Replay the scripted expert on a task and write its screens as a GIF or contact sheet.
    On the mobile env each step says which interruption was on screen, and the end lists the
    episode's perturbations."""
    from adaroll.envs.preview import play_task, screen_notes

    instance, suite, spec = _task_env(env, task, seed, device, config, set_)
    out = out or Path(f"{spec.template}-{seed}.gif")
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
    wrote = f"wrote {out}" if traj.frames else "this env does not render: no images written"
    typer.echo(f"{len(traj.actions)} expert steps, success={traj.success}; {wrote}")


@envs_app.command("check")
def envs_check(
    env: EnvArg = None,
    seeds: Annotated[int, typer.Option(min=1, help="Expert runs per template (seeds 0..N-1).")] = 3,
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Check an env before a run, in seconds: build its suite from the config (--set/--config
    as for `adaroll run`), validate one observation per template, check that task seeds change
    the start state, and run the expert on SEEDS seeds of every template, printing each
    template's elements, verified rate and mean expert length. Exit status 1 when something
    would make a run meaningless (a template whose expert never verifies, a bad observation,
    seeds that change nothing)."""
    import time

    from adaroll.config import ConfigError
    from adaroll.envs import get_suite, make_env_factory
    from adaroll.envs.check import check_env

    name, options, suite_options = _configured(env, config, set_)
    t0 = time.perf_counter()
    try:
        suite = get_suite(name, options, **suite_options)
        make_env = make_env_factory(name, **options)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(
        f"{name}: suite of {len(suite.templates())} templates built in "
        f"{time.perf_counter() - t0:.2f} s; expert on seeds 0-{seeds - 1} of each:"
    )
    result = check_env(name, make_env, suite, seeds=seeds, say=typer.echo)
    runs = sum(len(t.lengths) for t in result.templates)
    verified = sum(t.verified for t in result.templates)
    for finding in result.findings:
        typer.echo(f"{finding}\n  what to do: {finding.advice.partition(': ')[2]}")
    if not result.findings:
        typer.echo("start states: the seeds change them")
    failed = [t.template for t in result.templates if not t.ok]
    if failed:
        typer.echo(
            f"FAILED on {', '.join(failed)}: a template whose expert never verifies gives no "
            "checkpoints; check the env's `success` hook (default: a positive reward on the "
            "terminating step), its expert and its seeds (docs/envs.md)"
        )
    verdict = "ok" if result.ok else "problems found"
    typer.echo(f"{verdict}: {verified}/{runs} expert runs verified, {result.seconds:.1f} s")
    if not result.ok:
        raise typer.Exit(1)
