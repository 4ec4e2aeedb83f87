"""The ``adaroll`` command line. Commands are thin: they parse options and call the package."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from adaroll.config import ConfigError, RunConfig, dump_config, load_config

app = typer.Typer(help="AdaRoll: adaptive rollouts for training GUI agents.", no_args_is_help=True,
                  pretty_exceptions_enable=False)  # fmt: skip
envs_app = typer.Typer(help="List, inspect and play environments and their tasks.", no_args_is_help=True)
experts_app = typer.Typer(help="Run scripted experts and save verified trajectories.", no_args_is_help=True)
train_app = typer.Typer(help="Train one phase: sft, stage1, hybrid or vanilla.", no_args_is_help=True)
pivots_app = typer.Typer(help="Score checkpoints and select pivots.", no_args_is_help=True)
config_app = typer.Typer(help="Show the configuration schema and defaults.", no_args_is_help=True)
app.add_typer(envs_app, name="envs")
app.add_typer(experts_app, name="experts")
app.add_typer(train_app, name="train")
app.add_typer(pivots_app, name="pivots")
app.add_typer(config_app, name="config")

ConfigOpt = Annotated[Path | None, typer.Option("--config", "-c", help="YAML run config.")]
SetOpt = Annotated[list[str] | None, typer.Option("--set", "-s", help="Override: key.path=value (repeatable).")]
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
    fresh: Annotated[bool, typer.Option(help="Ignore what the run directory holds; start over.")] = False,
    progress: Annotated[bool, typer.Option(help="Show progress bars.")] = True,
) -> None:
    """The main job: the whole method end to end (experts -> Base -> SFT -> Stage I -> vanilla
    and hybrid from Base and from Action), then the report. Resumes a killed run in OUT."""
    import shutil

    from adaroll.report import write_report
    from adaroll.training.pipeline import Pipeline

    cfg = _config(config, set_, quick)
    if fresh and out.exists():
        shutil.rmtree(out)
    summary = Pipeline(cfg, out, progress=progress, say=lambda m: typer.echo(m)).run()
    report = write_report(out)
    _print_headline(summary)
    typer.echo(f"\nreport: {report}\nsummary: {out / 'summary.json'}")


def _print_headline(summary: dict) -> None:  # type: ignore[type-arg]
    from adaroll.report import table3

    typer.echo("\n" + table3(summary))
    rows = summary["configurations"]
    target = summary.get("target_train_avg4")
    if target is None:
        return
    typer.echo(f"\ntarget = Base->Vanilla final Train Avg@4 = {100 * target:.2f}")
    for name in ("base_hybrid", "action_hybrid"):
        r, v = rows.get(name), rows.get("base_vanilla")
        if not r or not v:
            continue
        if r["steps_to_target"] is None:
            typer.echo(f"{name}: did not reach the target within its budget")
            continue
        typer.echo(f"{name}: reached it with {r['steps_to_target']:,} env steps and "
                   f"{r['samples_to_target']:,} samples (vanilla: {v['steps_to_target']:,} and "
                   f"{v['samples_to_target']:,})")  # fmt: skip


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
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
