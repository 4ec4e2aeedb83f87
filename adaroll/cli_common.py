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


def other_checkout(cwd: Path) -> tuple[Path, Path] | None:
    """(the AdaRoll checkout ``cwd`` lies in, the tree whose code this process imported) when
    they differ, else None. An editable install's ``adaroll`` script imports the tree it was
    installed from whatever the current directory, so a long experiment started from a second
    checkout (a worktree pinned for the runs) would silently run the first one's code, and
    every run it starts later would pick up edits made there."""
    imported = Path(__file__).resolve().parent.parent
    here = cwd.resolve()
    for folder in (here, *here.parents):
        if (folder / "adaroll" / "__init__.py").is_file() and (folder / "pyproject.toml").is_file():
            return None if folder == imported else (folder, imported)
    return None


def warn_if_other_checkout() -> None:
    """Say so, once, before training, when :func:`other_checkout` finds one."""
    found = other_checkout(Path.cwd())
    if found is not None:
        here, imported = found
        typer.echo(
            f"warning: this runs the code in {imported}, not in the checkout you are in "
            f"({here}); to run this checkout's code: PYTHONPATH={here} python -m adaroll.cli ...",
            err=True,
        )
