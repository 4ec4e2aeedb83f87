"""``python -m adaroll ...``: the ``adaroll`` command (the same entry point as pyproject's
``[project.scripts]``), for environments where the console script is not on PATH."""

from adaroll.cli import main

if __name__ == "__main__":
    main()
