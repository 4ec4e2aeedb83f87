"""`adaroll config schema` documents env.options and policy.options too."""

from __future__ import annotations

import json
import subprocess
import sys

from adaroll.options_schema import describe, field_docs
from adaroll.policies.small import SmallPolicy, SmallPolicyConfig


def test_schema_lists_every_env_and_policy_option_with_docs() -> None:
    done = subprocess.run([sys.executable, "-m", "adaroll", "config", "schema"], capture_output=True,
                          text=True, timeout=300, check=True)  # fmt: skip
    schema = json.loads(done.stdout)
    assert "rl" in schema["properties"]  # the run config's schema is still the document
    envs, policies = schema["x-env-options"], schema["x-policy-options"]
    assert {"mobile", "web", "gymnasium", "browsergym"} <= set(envs)
    assert envs["mobile"]["device"]["default"] == "clean"
    assert {"id", "adapter"} <= set(envs["gymnasium"]) and envs["gymnasium"]["id"][
        "default"
    ] == "(required)"
    assert "browser" in envs["web"] and "max_steps" in envs["web"]
    assert policies["small"]["dim"] == {"type": "int", "default": 64,
                                        "doc": "Width of every embedding and hidden layer."}  # fmt: skip
    assert {"small", "hf", "remote"} <= set(policies)
    undocumented = [
        f"{kind}.{name}.{option}"
        for kind, table in (("env.options", envs), ("policy.options", policies))
        for name, options in table.items()
        for option, spec in options.items()
        if isinstance(spec, dict) and not spec.get("doc")
    ]
    assert undocumented == []
    assert "file" in envs["gymnasium"]["adapter"]["doc"]


def test_describe_reads_the_config_dataclass_behind_a_config_parameter() -> None:
    options = describe(SmallPolicy)
    fields = set(SmallPolicyConfig.__dataclass_fields__)
    assert fields <= set(options) and "config" not in options
    assert field_docs(SmallPolicyConfig)["heads"].startswith("Attention heads")
