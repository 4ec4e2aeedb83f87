"""An example's command line, read off its function's signature: one option per parameter
(``--num-generations`` for ``num_generations``) with the parameter's type and default, so that
each default is written once, in the function a test calls."""

from __future__ import annotations

import argparse
import inspect
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

_SCALARS = (int, float, str, Path)


def parse_options(
    function: Callable[..., Any], description: str, *, defaults: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``function``'s keyword arguments from the command line (the help opens with the first
    line of ``description``). ``defaults`` fills parameters that have none (else the option is
    required); a ``dict | None`` parameter takes YAML (``'{id: Taxi-v4}'``), a
    ``tuple[float, float]`` two numbers, a ``bool`` with default False is a flag."""
    parser = argparse.ArgumentParser(description=description.strip().splitlines()[0])
    hints = typing.get_type_hints(function)
    for name, parameter in inspect.signature(function).parameters.items():
        default = (defaults or {}).get(name, parameter.default)
        flag = "--" + name.replace("_", "-")
        hint = hints[name]
        given: dict[str, Any] = (
            {"required": True}
            if default is inspect.Parameter.empty
            else {"default": default, "help": f"default: {default}"}
        )
        if hint is bool:
            parser.add_argument(flag, dest=name, action="store_true")
        elif hint in _SCALARS:
            parser.add_argument(flag, dest=name, type=hint, **given)
        elif typing.get_origin(hint) is tuple:
            parser.add_argument(flag, dest=name, type=float, nargs=2, **given)
        elif any(typing.get_origin(arg) is dict for arg in typing.get_args(hint)):
            parser.add_argument(flag, dest=name, type=yaml.safe_load, **given)
        else:
            raise TypeError(f"no command-line option for {name}: {hint}")
    options = vars(parser.parse_args())
    return {k: tuple(v) if isinstance(v, list) else v for k, v in options.items()}
