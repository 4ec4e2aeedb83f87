"""A non-editable install ships every file of ``adaroll/`` that is not Python: the package-data
globs of ``pyproject.toml`` must cover them (the apps' front end, ``static/*.js`` and ``*.css``,
is served from the installed package at runtime)."""

from __future__ import annotations

import glob
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "adaroll"


def test_package_data_covers_every_non_python_file() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    shipped = {
        path
        for pattern in setuptools["package-data"]["adaroll"]
        for path in glob.glob(pattern, root_dir=PACKAGE, recursive=True)
    }
    data = {
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    }
    assert "envs/apps/appserver/static/common.js" in data
    assert sorted(data - shipped) == []
