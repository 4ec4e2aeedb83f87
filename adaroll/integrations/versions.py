"""Supported version ranges of the frameworks AdaRoll plugs into, checked at import."""

from __future__ import annotations

from packaging.version import Version

TRL_RANGE = ("1.16", "2")
"""trl >= 1.16, < 2: ``GRPOTrainer(environment_factory=...)`` with ``reset(**row)`` and tools
(tested with 1.16.0)."""
VERL_RANGE = ("0.7.1", "0.8")
"""verl >= 0.7.1, < 0.8: the last line with ``AbstractCurriculumSampler`` (``data.sampler.class_path``,
``update(batch)`` after every step); 0.8.0 removed it (tested with 0.7.1)."""


def check_version(package: str, found: str, supported: tuple[str, str]) -> None:
    """Raise ImportError naming the supported range when ``found`` is outside ``[low, high)``."""
    low, high = supported
    if not Version(low) <= Version(found) < Version(high):
        raise ImportError(
            f"adaroll.integrations supports {package}>={low},<{high}; "
            f"{package} {found} is installed (pip install '{package}>={low},<{high}')"
        )
