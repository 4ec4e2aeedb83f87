"""The ``adaroll`` command line. Each command group lives in its own section below."""

from __future__ import annotations

import typer

app = typer.Typer(help="AdaRoll: adaptive rollouts for training GUI agents.", no_args_is_help=True)
envs_app = typer.Typer(help="List, inspect and play environments and their tasks.", no_args_is_help=True)
app.add_typer(envs_app, name="envs")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
