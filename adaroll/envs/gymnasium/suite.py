"""GymnasiumSuite: the task splits and the expert of a Gymnasium env, from its adapter.

Task instances are ``TaskSpec("gymnasium", template, seed)``. A split of ``n`` tasks takes the
templates round-robin (trainable ones in a seeded order; held-out templates for
``heldout-templates``) and seeds ``BASE[split] + i`` for the i-th use of a template, so splits
never share an instance and the whole layout is fixed by the option values. ``val`` and
``heldout`` use the templates that ``train`` uses. Option names and defaults are the mobile
suite's, so ``adaroll run --quick`` sizes this suite too.
"""

from __future__ import annotations

from random import Random
from typing import Any

from adaroll.actions import Action
from adaroll.envs.base import SUITES, GUIEnv, TaskSpec, TaskSuite
from adaroll.envs.gymnasium.env import GymnasiumEnv, GymnasiumEnvConfig

SPLITS = ("pretrain", "train", "val", "heldout", "heldout-templates")
SEED_BASE = {
    "train": 0,
    "heldout": 1_000_000,
    "heldout-templates": 2_000_000,
    "pretrain": 3_000_000,
    "val": 4_000_000,
}


@SUITES.register("gymnasium")
class GymnasiumSuite(TaskSuite):
    """Splits over the adapter's templates; the adapter's scripted expert."""

    takes_env_options = True
    """:func:`adaroll.envs.get_suite` passes ``env.options`` first: the adapter lives there."""

    def __init__(
        self,
        env_options: dict[str, Any],
        /,
        seed: int = 0,
        n_train: int = 40,
        n_heldout: int = 40,
        n_heldout_templates: int = 20,
        n_pretrain: int = 200,
        n_val: int | None = None,
    ) -> None:
        """``n_val`` defaults to ``n_heldout``."""
        from adaroll.config import ConfigError

        if "adapter" not in env_options or "id" not in env_options:
            raise ConfigError(
                "the gymnasium env needs env.options.id and env.options.adapter "
                "(a registered adapter such as frozen_lake, 'package.module:Class' or "
                "'path/to/file.py:Class'; see docs/envs.md)"
            )
        n_val = n_heldout if n_val is None else n_val
        self.sizes = {
            "train": n_train,
            "val": n_val,
            "heldout": n_heldout,
            "heldout-templates": n_heldout_templates,
            "pretrain": n_pretrain,
        }
        for name, n in self.sizes.items():
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise ValueError(f"the size of split {name} must be a non-negative int, got {n!r}")
        try:  # errors about env.options name that field, not the suite's options
            self.adapter = GymnasiumEnvConfig(**env_options).build_adapter()
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"gymnasium environment (env.options): {exc}") from None
        held = self.adapter.heldout_templates()
        unknown = sorted(set(held) - set(self.adapter.templates()))
        if unknown:
            raise ConfigError(
                f"gymnasium environment (env.options): adapter {env_options['adapter']}: "
                f"held-out templates {unknown} are not among its templates() (a held-out "
                "template must also be a template)"
            )
        self._heldout = sorted(held)
        trainable = sorted(set(self.adapter.templates()) - set(held))
        Random(f"gymnasium-suite/{seed}/order").shuffle(trainable)
        self._trainable = trainable

    def templates(self) -> list[str]:
        return sorted(self.adapter.templates())

    def heldout_templates(self) -> list[str]:
        return list(self._heldout)

    def policy_hints(self) -> dict[str, Any]:
        return self.adapter.policy_hints()

    def split(self, name: str) -> list[TaskSpec]:
        if name not in SPLITS:
            raise KeyError(f"unknown split {name!r}; splits: {', '.join(SPLITS)}")
        if name == "heldout-templates":
            pool = self._heldout
        elif name in ("val", "heldout"):
            pool = sorted({t.template for t in self.split("train")}, key=self._trainable.index)
        else:
            pool = self._trainable
        n = self.sizes[name]
        if n and not pool:
            raise ValueError(f"split {name!r} has no templates to draw from")
        return [
            TaskSpec("gymnasium", pool[i % len(pool)], SEED_BASE[name] + i // len(pool))
            for i in range(n)
        ]

    def expert_action(self, env: GUIEnv) -> Action:
        """The adapter's scripted expert, from the env's current state."""
        if not isinstance(env, GymnasiumEnv):
            raise TypeError(f"the gymnasium expert drives a GymnasiumEnv, got {type(env).__name__}")
        return env.adapter.expert_action(env.gym_env, env.task)
