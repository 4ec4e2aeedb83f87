"""``BrowserGymSuite``: BrowserGym tasks as AdaRoll task splits, with scripted experts.

Task instances are ``TaskSpec("browsergym", NAME, seed)`` with ``NAME`` a BrowserGym task
(``miniwob.click-test-2``; ``browsergym/miniwob.click-test-2`` is accepted too). Splits follow
the web suite's seed ranges (:mod:`adaroll.envs.web.suite`): ``train`` seeds
``0 .. train_seeds-1``, ``val``/``heldout``/``pretrain`` disjoint ranges of the same templates,
``heldout-templates`` the ``heldout_templates`` option's tasks with the held-out seeds.

Experts: on ``miniwob.*`` tasks the web env's scripted experts
(:mod:`adaroll.envs.web.experts`), which plan from the page through the env's privileged
:meth:`~adaroll.envs.browsergym.env.BrowserGymEnv.evaluate` and act through coordinates only,
so they drive BrowserGym's pages unchanged. Other benchmarks have no scripted expert here (use
``expert.kind=remote``).
"""

from __future__ import annotations

from adaroll.actions import Action
from adaroll.config import ConfigError
from adaroll.envs.base import SUITES, GUIEnv, TaskSpec, TaskSuite
from adaroll.envs.browsergym import launch
from adaroll.envs.web.suite import HELDOUT_SEED_BASE, PRETRAIN_SEED_BASE, SPLITS, VAL_SEED_BASE

DEFAULT_TEMPLATES = (
    "miniwob.click-test-2",
    "miniwob.click-button",
    "miniwob.click-link",
    "miniwob.enter-text",
    "miniwob.click-checkboxes",
)
"""MiniWoB++ tasks through BrowserGym with a web expert that solves them there."""


@SUITES.register("browsergym")
class BrowserGymSuite(TaskSuite):
    """BrowserGym tasks, seeded splits and (for MiniWoB++) the web env's scripted experts."""

    def __init__(
        self,
        templates: list[str] | None = None,
        heldout_templates: list[str] | None = None,
        train_seeds: int = 8,
        eval_seeds: int = 4,
        pretrain_seeds: int = 16,
        val_seeds: int | None = None,
    ) -> None:
        """``templates``: BrowserGym task names to train on (default :data:`DEFAULT_TEMPLATES`);
        ``heldout_templates``: tasks kept out of training (``heldout-templates`` split)."""
        val_seeds = eval_seeds if val_seeds is None else val_seeds
        for name, n in (
            ("train_seeds", train_seeds),
            ("eval_seeds", eval_seeds),
            ("pretrain_seeds", pretrain_seeds),
            ("val_seeds", val_seeds),
        ):
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise ConfigError(f"{name} must be a non-negative int, got {n!r}")
        self.train_seeds, self.eval_seeds = train_seeds, eval_seeds
        self.val_seeds, self.pretrain_seeds = val_seeds, pretrain_seeds
        self._train = self._checked("templates", templates or list(DEFAULT_TEMPLATES))
        self._heldout = self._checked("heldout_templates", heldout_templates or [])

    @staticmethod
    def _checked(option: str, names: list[str]) -> list[str]:
        if isinstance(names, str) or not isinstance(names, list):
            raise ConfigError(
                f"browsergym task suite: {option} must be a list of task names, got {names!r}"
            )
        out = []
        for name in names:
            try:
                launch.resolve_task(str(name))
            except ValueError as exc:
                raise ConfigError(f"{option}: {exc}") from None
            out.append(launch.normalise_task_name(str(name)))
        return out

    def templates(self) -> list[str]:
        return self._train + self._heldout

    def train_templates(self) -> list[str]:
        return list(self._train)

    def heldout_templates(self) -> list[str]:
        return list(self._heldout)

    def split(self, name: str) -> list[TaskSpec]:
        def specs(templates: list[str], base: int, n: int) -> list[TaskSpec]:
            return [TaskSpec("browsergym", t, base + s) for t in templates for s in range(n)]

        if name == "train":
            return specs(self._train, 0, self.train_seeds)
        if name == "val":
            return specs(self._train, VAL_SEED_BASE, self.val_seeds)
        if name == "heldout":
            return specs(self._train, HELDOUT_SEED_BASE, self.eval_seeds)
        if name == "heldout-templates":
            return specs(self._heldout, HELDOUT_SEED_BASE, self.eval_seeds)
        if name == "pretrain":
            return specs(self._train, PRETRAIN_SEED_BASE, self.pretrain_seeds)
        raise KeyError(f"unknown split {name!r}; valid splits: {', '.join(SPLITS)}")

    def expert_action(self, env: GUIEnv) -> Action:
        from adaroll.envs.web.experts import EXPERTS, Page

        template = env.task.template
        bench, _, page = template.partition(".")
        if bench != "miniwob" or page not in EXPERTS:
            raise KeyError(
                f"no scripted expert for BrowserGym task {template!r} (the web "
                "env's MiniWoB++ experts cover miniwob.* tasks only)"
            )
        return EXPERTS[page](Page(env))  # type: ignore[arg-type]
