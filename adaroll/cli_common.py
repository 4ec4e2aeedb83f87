"""What every ``adaroll`` command shares: the ``--config``/``--set`` options and loading them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from adaroll.config import ConfigError, RunConfig, load_config

ConfigOpt = Annotated[Path | None, typer.Option("--config", "-c", help="YAML run config.")]
SetOpt = Annotated[
    list[str] | None, typer.Option("--set", "-s", help="Override: key.path=value (repeatable).")
]


def load_or_exit(
    config: Path | None, overrides: list[str] | None, quick: bool = False
) -> RunConfig:
    """The run config from ``--config`` and ``--set`` (``--quick`` first); a bad one is one
    error line and exit status 2."""
    from adaroll.training.presets import QUICK_OVERRIDES

    try:
        return load_config(config, (QUICK_OVERRIDES if quick else []) + list(overrides or []))
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
