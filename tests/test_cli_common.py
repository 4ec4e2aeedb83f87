"""The command line's shared pieces: the warning that a command runs another checkout's code."""

from __future__ import annotations

from pathlib import Path

import pytest

import adaroll
from adaroll.cli_common import other_checkout, warn_if_other_checkout

IMPORTED = Path(adaroll.__file__).resolve().parent.parent


def _checkout(root: Path) -> Path:
    (root / "adaroll").mkdir(parents=True)
    (root / "adaroll" / "__init__.py").write_text("")
    (root / "pyproject.toml").write_text("[project]\nname = 'adaroll'\n")
    return root


def test_a_second_checkout_is_found_from_any_folder_inside_it(tmp_path: Path) -> None:
    pinned = _checkout(tmp_path / "pinned")
    inside = pinned / "runs" / "deep"
    inside.mkdir(parents=True)
    assert other_checkout(pinned) == (pinned.resolve(), IMPORTED)
    assert other_checkout(inside) == (pinned.resolve(), IMPORTED)


def test_the_imported_checkout_and_folders_outside_any_checkout_are_not(tmp_path: Path) -> None:
    assert other_checkout(IMPORTED) is None
    assert other_checkout(IMPORTED / "adaroll") is None
    assert other_checkout(tmp_path) is None
    (tmp_path / "adaroll").mkdir()  # a folder named adaroll is not a checkout
    assert other_checkout(tmp_path) is None


def test_the_warning_names_both_trees_and_how_to_run_this_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pinned = _checkout(tmp_path / "pinned")
    monkeypatch.chdir(pinned)
    warn_if_other_checkout()
    err = capsys.readouterr().err
    assert f"runs the code in {IMPORTED}" in err
    assert f"PYTHONPATH={pinned.resolve()} python -m adaroll.cli" in err
    monkeypatch.chdir(tmp_path)
    warn_if_other_checkout()
    assert capsys.readouterr().err == ""
