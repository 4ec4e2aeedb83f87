"""Remove the top-level ``tests`` package that verl's wheel installs into site-packages.

verl 0.7.x ships its own test suite as a top-level package named ``tests``. In a process that
does not start from this checkout (a Ray worker, a subprocess started elsewhere) ``import tests``
would then find verl's suite instead of this repository's tests/, and the test helpers that
travel to Ray workers would not import. Only files verl's RECORD lists are removed.
"""

from __future__ import annotations

import shutil
import sysconfig
from importlib import metadata
from pathlib import Path


def main() -> None:
    try:
        dist = metadata.distribution("verl")
    except metadata.PackageNotFoundError:
        return
    site = Path(sysconfig.get_paths()["purelib"])
    if not any(str(f).startswith("tests/") for f in dist.files or ()):
        return
    stray = site / "tests"
    if stray.is_dir():
        shutil.rmtree(stray)
        print(f"removed verl's top-level tests package from {site}")


if __name__ == "__main__":
    main()
