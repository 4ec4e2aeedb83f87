"""What a run records of its env (``env.json``): every option with its default resolved, for the
web env also the Chromium command line and version; the same options give the same settings.

Under CI a missing Chromium fails the web test (tests/components.py)."""

from __future__ import annotations

import json

import pytest

from adaroll.envs import env_settings
from tests.components import require_chromium


def test_mobile_settings_resolve_the_device_profile_to_its_rates() -> None:
    noisy = env_settings("mobile", {"device": "noisy"})
    assert noisy["device"]["name"] == "noisy" and noisy["screenshot"] is False
    assert noisy == env_settings("mobile", {"device": "noisy"}) == json.loads(json.dumps(noisy))
    custom = env_settings("mobile", {"device": {"base": "noisy", "ad": 0.5}})
    assert custom["device"]["ad"] == 0.5 and custom["device"]["banner"] == noisy["device"]["banner"]


@pytest.mark.web
def test_web_settings_hold_every_default_the_browser_command_line_and_its_version() -> None:
    require_chromium()
    default = env_settings("web", {})
    assert default["chromium"].startswith("Chromium ")  # another build may draw pages differently
    assert default["reuse_page"] is True and default["browser"]["window_size"] == [800, 600]
    assert (
        "step_timeout_s" not in default and "startup_timeout" not in default["browser"]
    )  # waits only
    command = default["chromium_command"]
    assert "--disable-gpu" in command and "--disable-software-rasterizer" in command
    assert "--single-process" not in command and "--disable-frame-rate-limit" not in command
    shots = env_settings("web", {"screenshot": True, "browser": {"extra_args": ["--x"]}})
    assert (
        "--disable-frame-rate-limit" in shots["chromium_command"]
        and "--x" in shots["chromium_command"]
    )
    assert "--single-process" in env_settings("web", {"single_process": True})["chromium_command"]


def test_settings_of_bad_options_are_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown web env option"):  # before any browser is asked
        env_settings("web", {"screenshots": True})


def test_an_env_without_settings_records_its_options_as_given() -> None:
    options = {"id": "FrozenLake-v1", "adapter": "frozen_lake", "adapter_options": {"sizes": (4,)}}
    assert env_settings("gymnasium", options) == {**options, "adapter_options": {"sizes": [4]}}
