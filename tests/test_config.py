"""Bad pivot and routing settings fail at load, naming the field (issue 43): a signal that is not
registered, a threshold outside its range, tau_low above tau_high."""

from __future__ import annotations

import pytest

from adaroll.algos.pivots import PIVOT_SCORERS
from adaroll.config import ConfigError, load_config


@pytest.mark.parametrize("phase", ["stage1", "rl"])
def test_an_unknown_pivot_scorer_names_the_field_and_the_valid_ones(phase: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(None, [f"{phase}.pivots.scorer=variance"])
    message = str(err.value)
    assert f"{phase}.pivots.scorer: Value error, unknown pivot scorer 'variance'" in message
    assert "valid: " + ", ".join(PIVOT_SCORERS.names()) in message


def test_every_registered_scorer_loads() -> None:
    for name in PIVOT_SCORERS.names():
        assert load_config(None, [f"stage1.pivots.scorer={name}"]).stage1.pivots.scorer == name


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ("stage1.pivots.tau_dis=1.2", "stage1.pivots.tau_dis"),
        ("rl.pivots.tau_dis=-0.1", "rl.pivots.tau_dis"),
        ("rl.scheduler.tau_suffix=0", "rl.scheduler.tau_suffix"),  # (0, 1]: 0 moves on any success
        ("rl.scheduler.tau_suffix=1.5", "rl.scheduler.tau_suffix"),
        ("rl.scheduler.tau_low=-0.25", "rl.scheduler.tau_low"),
        ("rl.scheduler.tau_high=1.25", "rl.scheduler.tau_high"),
    ],
)
def test_a_threshold_outside_its_range_names_its_field(override: str, field: str) -> None:
    with pytest.raises(ConfigError, match=rf"{field}: Input should be"):
        load_config(None, [override])


@pytest.mark.parametrize(
    "overrides",
    [
        ["rl.scheduler.tau_suffix=1"],
        ["rl.scheduler.tau_suffix=0.5"],
        ["stage1.pivots.tau_dis=0", "stage1.pivots.tau_dis=1"],
        ["rl.scheduler.tau_low=0.5", "rl.scheduler.tau_high=0.5"],  # equal: no Suffix band
    ],
)
def test_the_ends_of_the_ranges_load(overrides: list[str]) -> None:
    load_config(None, overrides)


def test_tau_low_above_tau_high_names_both_without_dumping_the_section() -> None:
    with pytest.raises(ConfigError) as err:
        load_config(None, ["rl.scheduler.tau_low=0.8"])
    message = str(err.value)
    assert "rl.scheduler: Value error, tau_low (0.8) must not exceed tau_high (0.75)" in message
    assert "routing_probes" not in message  # the section's other fields are not echoed
