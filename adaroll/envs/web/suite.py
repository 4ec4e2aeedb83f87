"""``MiniWoBSuite``: the curated MiniWoB++ tasks as AdaRoll task splits, with their experts.

Splits (task instances are ``TaskSpec("web", template, seed)``):

* ``train`` - every curated, non-held-out template with seeds ``0 .. train_seeds-1``;
* ``val`` - the same templates with new seeds (``VAL_SEED_BASE + i``), read by every selection;
* ``heldout`` - the same templates with new seeds (``HELDOUT_SEED_BASE + i``), report only;
* ``heldout-templates`` - the curated templates never trained on (``heldout_template`` in the
  registry), with the held-out seeds;
* ``pretrain`` - the training templates with a third, disjoint seed range
  (``PRETRAIN_SEED_BASE + i``), for supervised warm-up data that must not overlap ``train``.

Seeds from ``EXPERT_CHECK_SEED_BASE`` on are in no split: the scripted experts are checked on
them (``tests/envs/web/test_experts.py``; a larger sweep: ``python -m adaroll.envs.web.experts
--first-seed 400000 --seeds 20``).
"""

from __future__ import annotations

from typing import Any

from adaroll.actions import Action
from adaroll.config import ConfigError
from adaroll.envs.base import SUITES, GUIEnv, TaskSpec, TaskSuite
from adaroll.envs.web.grounding import UNREPRESENTABLE, check_representable
from adaroll.envs.web.miniwob import all_tasks, curated_tasks, get_task

HELDOUT_SEED_BASE = 100_000
PRETRAIN_SEED_BASE = 200_000
VAL_SEED_BASE = 300_000
EXPERT_CHECK_SEED_BASE = 400_000
"""Seeds ``EXPERT_CHECK_SEED_BASE + i`` belong to no split: the expert checks run on them
(instances nothing was developed, trained or selected on)."""
SPLITS = ("train", "val", "heldout", "heldout-templates", "pretrain")
POLICY_KINDS = ("tap", "hover", "swipe", "type", "key", "done")
"""What a web page takes and the experts use: no ``open_app``, no phone keys (``back``/``home``),
which the web env rejects; ``hover`` opens click-menu's submenus."""
POLICY_KEYS = ("enter", "tab", "backspace", "escape", "up", "down", "left", "right", "ctrl+a")
"""The keys the experts press (``ctrl+a`` clears a field before retyping it), plus enter/tab."""
POLICY_TYPE_SOURCES = ("quoted", "ngram", "element", "part")
"""Where the web policy's ``type`` head draws its strings from: the instruction's quoted spans
*and* its unquoted word n-grams (multi-orderings' "comedy", "Jorge Lopez", "1991";
email-inbox-forward-nl's recipient), element texts and their parts (a value read off the page).
The phone keeps the small policy's default (quoted spans only)."""
POLICY_MAX_NGRAM = 3
"""Longest unquoted instruction n-gram the web policy may type (three-word names)."""


def check_seed_counts(**counts: object) -> None:
    """Refuse a seeds-per-template option that is not a non-negative int (ConfigError)."""
    for name, n in counts.items():
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ConfigError(f"{name} must be a non-negative int, got {n!r}")


@SUITES.register("web")
class MiniWoBSuite(TaskSuite):
    """Curated MiniWoB++ templates, seeded splits and scripted experts."""

    def __init__(
        self,
        train_seeds: int = 8,
        eval_seeds: int = 4,
        pretrain_seeds: int = 16,
        templates: list[str] | None = None,
        val_seeds: int | None = None,
        representable_only: bool = False,
    ) -> None:
        """``val_seeds`` defaults to ``eval_seeds`` (the held-out splits' seeds per template).
        ``representable_only`` (the experiment profiles set it): refuse, by name and reason,
        ``templates`` the small web policy cannot act on
        (:data:`adaroll.envs.web.grounding.UNREPRESENTABLE`); without ``templates``, keep only
        the representable curated ones."""
        val_seeds = eval_seeds if val_seeds is None else val_seeds
        check_seed_counts(
            train_seeds=train_seeds,
            eval_seeds=eval_seeds,
            pretrain_seeds=pretrain_seeds,
            val_seeds=val_seeds,
        )
        self.train_seeds = train_seeds
        self.eval_seeds = eval_seeds
        self.val_seeds = val_seeds
        self.pretrain_seeds = pretrain_seeds
        curated = curated_tasks()
        unknown = sorted(set(templates or ()) - set(curated))
        if unknown:
            raise ConfigError(
                f"not curated MiniWoB++ templates: {', '.join(unknown)}; "
                f"curated: {', '.join(curated)}"
            )
        if not isinstance(representable_only, bool):
            raise ConfigError(
                f"representable_only must be true or false, got {representable_only!r}"
            )
        self.only = set(templates) if templates else None
        """``templates`` option: restrict every split to these curated templates."""
        if representable_only:
            check_representable(templates or (), "env.suite_options.templates")
            if not templates:
                self.only = {t for t in curated if t not in UNREPRESENTABLE}

    def policy_hints(self) -> dict[str, Any]:
        return {
            "kinds": POLICY_KINDS,
            "keys": POLICY_KEYS,
            "type_sources": POLICY_TYPE_SOURCES,
            "max_ngram": POLICY_MAX_NGRAM,
        }

    def _chosen(self, names: list[str]) -> list[str]:
        return [t for t in names if self.only is None or t in self.only]

    def templates(self) -> list[str]:
        """All curated templates (training and held-out)."""
        return self._chosen(curated_tasks())

    def train_templates(self) -> list[str]:
        return self._chosen(curated_tasks(heldout_template=False))

    def heldout_templates(self) -> list[str]:
        return self._chosen(curated_tasks(heldout_template=True))

    def all_templates(self) -> list[str]:
        """Every task page of the ``miniwob`` package (curated or not)."""
        return list(all_tasks())

    def template_info(self, template: str) -> dict[str, Any]:
        """For ``adaroll envs list --templates``: expert length, tags, held-out flag."""
        meta = get_task(template)
        return {
            "difficulty": meta.expert_steps,
            "tags": list(meta.tags),
            "heldout": meta.heldout_template,
            "max_steps": meta.max_steps,
        }

    def split(self, name: str) -> list[TaskSpec]:
        if name == "train":
            return [
                TaskSpec("web", t, s)
                for t in self.train_templates()
                for s in range(self.train_seeds)
            ]
        if name == "val":
            return [
                TaskSpec("web", t, VAL_SEED_BASE + s)
                for t in self.train_templates()
                for s in range(self.val_seeds)
            ]
        if name == "heldout":
            return [
                TaskSpec("web", t, HELDOUT_SEED_BASE + s)
                for t in self.train_templates()
                for s in range(self.eval_seeds)
            ]
        if name == "heldout-templates":
            return [
                TaskSpec("web", t, HELDOUT_SEED_BASE + s)
                for t in self.heldout_templates()
                for s in range(self.eval_seeds)
            ]
        if name == "pretrain":
            return [
                TaskSpec("web", t, PRETRAIN_SEED_BASE + s)
                for t in self.train_templates()
                for s in range(self.pretrain_seeds)
            ]
        raise KeyError(f"unknown split {name!r}; valid splits: {', '.join(SPLITS)}")

    def expert_action(self, env: GUIEnv) -> Action:
        from adaroll.envs.web.experts import EXPERTS, Page  # lazy: `python -m ...experts`

        template = env.task.template
        if template not in EXPERTS:
            raise KeyError(f"no scripted expert for MiniWoB++ task {template!r}")
        return EXPERTS[template](Page(env))  # type: ignore[arg-type]
