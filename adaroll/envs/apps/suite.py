"""``AppsSuite``: the apps env's task templates as seeded splits, with their scripted experts.

Splits (task instances are ``TaskSpec("apps", template, seed)``), with the web suite's seed
ranges (:mod:`adaroll.envs.web.suite`):

* ``train`` - every template not held out, seeds ``0 .. train_seeds-1``;
* ``val`` - the same templates with new seeds (``VAL_SEED_BASE + i``), read by every selection;
* ``heldout`` - the same templates with new seeds (``HELDOUT_SEED_BASE + i``), report only;
* ``heldout-templates`` - the templates never trained on (``heldout=True``), held-out seeds;
* ``pretrain`` - the training templates with a third, disjoint seed range.

With the defaults (5 seeds each) that is 225 train, 225 val and 225 held-out tasks from 45
templates, and 30 of the 6 held-out templates. Seeds from ``EXPERT_CHECK_SEED_BASE`` on are in
no split: the experts are checked there (``tests/envs/apps/test_experts.py``).

A task whose seeded content does not fit its apps' schemas (a table or column the app does not
have, a required value missing) or whose template fails to build is dropped from its split,
with the reason logged (:func:`content_problem`).
"""

from __future__ import annotations

import functools
import logging
import sqlite3
import statistics
from typing import Any

from adaroll.actions import Action
from adaroll.config import ConfigError
from adaroll.envs.apps.appserver.apps import APPS
from adaroll.envs.apps.appserver.db import build
from adaroll.envs.apps.env import AppsEnv
from adaroll.envs.apps.tasks.catalog import all_templates, get_template, instance
from adaroll.envs.apps.tasks.lengths import EXPERT_STEPS
from adaroll.envs.apps.tasks.plan import next_action
from adaroll.envs.base import SUITES, GUIEnv, TaskSpec, TaskSuite, run_expert
from adaroll.envs.web.suite import (
    EXPERT_CHECK_SEED_BASE,
    HELDOUT_SEED_BASE,
    PRETRAIN_SEED_BASE,
    SPLITS,
    VAL_SEED_BASE,
    check_seed_counts,
)

log = logging.getLogger("adaroll")

POLICY_KINDS = ("tap", "type", "key", "done")
"""What the apps' experts use: taps, typing, keys; no swipes (every page fits the screen)."""
POLICY_KEYS = ("enter", "tab", "backspace", "escape", "ctrl+a")
"""``ctrl+a`` selects a field's text before retyping it."""
POLICY_TYPE_SOURCES = ("quoted", "ngram", "element", "part")
POLICY_MAX_NGRAM = 3
LENGTH_SEEDS = tuple(EXPERT_CHECK_SEED_BASE + 50 + i for i in range(3))
"""The seeds expert lengths are measured on (``adaroll envs list apps --lengths``)."""


@functools.lru_cache(maxsize=1)
def _columns() -> dict[str, dict[str, dict[str, bool]]]:
    """app -> table -> column -> required (NOT NULL without a default)."""
    out: dict[str, dict[str, dict[str, bool]]] = {}
    for name, app in APPS.items():
        conn = sqlite3.connect(":memory:")
        try:
            build(conn, app.schema, {})
            tables = [
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            ]
            out[name] = {
                t: {
                    r[1]: bool(r[3]) and r[4] is None and not r[5]
                    for r in conn.execute(f'PRAGMA table_info("{t}")')
                }
                for t in tables
            }
        finally:
            conn.close()
    return out


@functools.lru_cache(maxsize=4096)
def content_problem(template: str, seed: int) -> str:
    """Why task ``template#seed`` cannot be loaded ("" when it can): its template fails to build,
    or its content names a table or column its app lacks or leaves a required one empty."""
    try:
        inst = instance(template, seed)
    except Exception as exc:  # noqa: BLE001 - any failure drops the task, with its reason
        return f"the template fails to build: {type(exc).__name__}: {exc}"
    schemas = _columns()
    for app, tables in inst.tables.items():
        if app not in schemas:
            return f"content for an unknown app {app!r}"
        for table, rows in tables.items():
            cols = schemas[app].get(table)
            if cols is None:
                return f"{app} has no table {table!r}"
            for row in rows:
                unknown = set(row) - set(cols)
                if unknown:
                    return f"{app}.{table} has no column(s) {', '.join(sorted(unknown))}"
                missing = [c for c, required in cols.items() if required and row.get(c) is None]
                if missing:
                    return f"{app}.{table}: a row lacks {', '.join(missing)}"
    return ""


@SUITES.register("apps")
class AppsSuite(TaskSuite):
    """The apps' templates, seeded splits and scripted experts (module docstring)."""

    def __init__(
        self,
        train_seeds: int = 5,
        eval_seeds: int = 5,
        pretrain_seeds: int = 10,
        templates: list[str] | None = None,
        val_seeds: int | None = None,
    ) -> None:
        """``val_seeds`` defaults to ``eval_seeds``; ``templates`` restricts every split."""
        val_seeds = eval_seeds if val_seeds is None else val_seeds
        check_seed_counts(
            train_seeds=train_seeds,
            eval_seeds=eval_seeds,
            pretrain_seeds=pretrain_seeds,
            val_seeds=val_seeds,
        )
        known = all_templates()
        unknown = sorted(set(templates or ()) - set(known))
        if unknown:
            raise ConfigError(
                f"unknown apps task templates: {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        self.seeds = {
            "train": (0, train_seeds),
            "val": (VAL_SEED_BASE, val_seeds),
            "heldout": (HELDOUT_SEED_BASE, eval_seeds),
            "heldout-templates": (HELDOUT_SEED_BASE, eval_seeds),
            "pretrain": (PRETRAIN_SEED_BASE, pretrain_seeds),
        }
        self.only = set(templates) if templates else None

    def policy_hints(self) -> dict[str, Any]:
        return {
            "kinds": POLICY_KINDS,
            "keys": POLICY_KEYS,
            "type_sources": POLICY_TYPE_SOURCES,
            "max_ngram": POLICY_MAX_NGRAM,
        }

    def templates(self) -> list[str]:
        return sorted(t for t in all_templates() if self.only is None or t in self.only)

    def train_templates(self) -> list[str]:
        return [t for t in self.templates() if not get_template(t).heldout]

    def heldout_templates(self) -> list[str]:
        return [t for t in self.templates() if get_template(t).heldout]

    def template_info(self, template: str) -> dict[str, Any]:
        """For ``adaroll envs list apps --templates``: the expert's recorded mean length
        (:data:`~adaroll.envs.apps.tasks.lengths.EXPERT_STEPS`), apps, held-out flag."""
        tpl = get_template(template)
        return {
            "difficulty": EXPERT_STEPS.get(template, float("nan")),
            "tags": list(tpl.apps),
            "heldout": tpl.heldout,
            "max_steps": tpl.max_steps,
            "summary": tpl.summary,
        }

    def split(self, name: str) -> list[TaskSpec]:
        if name not in self.seeds:
            raise KeyError(f"unknown split {name!r}; valid splits: {', '.join(SPLITS)}")
        base, n = self.seeds[name]
        names = self.heldout_templates() if name == "heldout-templates" else self.train_templates()
        out = []
        for template in names:
            for i in range(n):
                why = content_problem(template, base + i)
                if why:
                    log.warning(
                        "apps task %s#%d dropped from %s: %s", template, base + i, name, why
                    )
                    continue
                out.append(TaskSpec("apps", template, base + i))
        return out

    def expert_action(self, env: GUIEnv) -> Action:
        if not isinstance(env, AppsEnv):
            raise TypeError(f"the apps experts drive an AppsEnv, got {type(env).__name__}")
        return next_action(env, env.task_instance.plan)

    def expert_lengths(
        self, seeds: tuple[int, ...] = LENGTH_SEEDS
    ) -> list[tuple[str, str, str, float]]:
        """``(template, family, apps, mean expert steps over seeds)`` for every template, measured
        now in one live env (``adaroll envs list apps --lengths``)."""
        rows = []
        with AppsEnv() as env:
            for name in self.templates():
                steps = []
                for seed in seeds:
                    actions, ok = run_expert(env, self, TaskSpec("apps", name, seed))
                    if not ok:
                        raise RuntimeError(f"the expert failed on apps:{name}#{seed}")
                    steps.append(len(actions))
                tpl = get_template(name)
                rows.append((name, tpl.app, ",".join(tpl.apps), statistics.mean(steps)))
        return rows
