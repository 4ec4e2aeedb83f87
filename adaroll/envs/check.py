"""Check an env before a run (``adaroll envs check``), in seconds: build its suite, validate one
observation per template, see that task seeds change the start state, and run the expert on a
few seeds of every template (verified rate and length per template).

The same start-state check runs before every ``adaroll run`` (:mod:`adaroll.training.preflight`,
which also stops a run whose experts verify nothing).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from adaroll.envs.base import EnvFault, GUIEnv, Observation, TaskSpec, TaskSuite, run_expert


@dataclass(frozen=True)
class Finding:
    """One failed check: which (``experts[train]``, ``pivots``, ``start states``) and why."""

    check: str
    message: str
    advice: str = ""
    """What to do (findings of one kind share it: it is printed once)."""

    def __str__(self) -> str:
        return f"{self.check}: {self.message}"


SEED_ADVICE = (
    "start states: make the seed change the start state (a gymnasium adapter: derive "
    "make_kwargs(task) from task.seed, or use an env whose reset(seed=...) randomises its "
    "start), or give one template per distinct task"
)


def start_state_finding(
    make_env: Callable[[], GUIEnv], tasks: Sequence[TaskSpec], *, per_template: int = 2
) -> Finding | None:
    """A finding when every template with two or more tasks starts all of them in one state
    (instruction and element tree): the seeds then change nothing. Resets at most
    ``per_template`` tasks of each template, and stops at the first template whose start
    states differ."""
    by_template: dict[str, list[TaskSpec]] = {}
    for task in tasks:
        by_template.setdefault(task.template, []).append(task)
    checked = [t for t, ts in by_template.items() if len(ts) >= 2]
    if not checked:
        return None
    env = make_env()
    try:
        for template in checked:
            if len({_start_state(env, t) for t in by_template[template][:per_template]}) > 1:
                return None
    finally:
        env.close()
    names = ", ".join(checked[:4]) + (", ..." if len(checked) > 4 else "")
    return Finding(
        "start states",
        f"every template starts all its tasks in one state, whatever the seed (checked "
        f"{names}): its tasks are one task under many names, and Avg@k, routing and the "
        "held-out split measure nothing new",
        SEED_ADVICE,
    )


def _start_state(env: GUIEnv, task: TaskSpec) -> tuple[str, str, tuple[int, ...]]:
    obs, info = env.reset(options={"task": task})
    return str(info.get("instruction", "")), obs.element_tree_hash(), tuple(obs.screen_size)


@dataclass
class TemplateCheck:
    """One template: its first observation's check and its expert runs."""

    template: str
    heldout: bool
    elements: int | None = None
    """Elements of the first observation (None: the observation failed; see ``error``)."""
    lengths: list[int] = field(default_factory=list)
    """Expert episode lengths, one per seed run."""
    verified: int = 0
    error: str = ""
    """The first error met (an adapter or env fault), one line."""

    @property
    def ok(self) -> bool:
        return not self.error and self.verified > 0

    def line(self, width: int) -> str:
        runs = len(self.lengths)
        mean = sum(self.lengths) / runs if runs else 0.0
        span = f" ({min(self.lengths)}-{max(self.lengths)})" if runs else ""
        held = "  held out" if self.heldout else ""
        head = f"  {self.template:<{width}}  "
        if self.elements is None:
            return f"{head}observation FAILED: {self.error}{held}"
        text = (
            f"{head}{self.elements} elements  expert {self.verified}/{runs} verified  "
            f"mean {mean:.1f} steps{span}{held}"
        )
        return text + (f"\n    error: {self.error}" if self.error else "")


@dataclass
class EnvCheck:
    """What ``adaroll envs check`` found."""

    templates: list[TemplateCheck]
    findings: list[Finding]
    seconds: float

    @property
    def ok(self) -> bool:
        return not self.findings and all(t.ok for t in self.templates)


def heldout_templates(suite: TaskSuite) -> set[str]:
    """The suite's held-out templates (those of its ``heldout-templates`` split)."""
    return set(suite.heldout_templates())


def check_env(
    env_name: str,
    make_env: Callable[[], GUIEnv],
    suite: TaskSuite,
    *,
    seeds: int = 3,
    say: Callable[[str], None] = print,
) -> EnvCheck:
    """Validate one observation per template, the start states, and ``seeds`` expert runs per
    template (seeds 0 to ``seeds - 1``), printing one line per template through ``say``."""
    from adaroll.envs.gymnasium.adapter import check_observation

    t0 = time.perf_counter()
    held = heldout_templates(suite)
    templates = sorted(suite.templates())
    width = max((len(t) for t in templates), default=8)
    results = []
    env = make_env()
    try:
        for template in templates:
            result = TemplateCheck(template, template in held)
            tasks = [TaskSpec(env_name, template, seed) for seed in range(seeds)]
            env = _check_template(env, make_env, suite, tasks, result, check_observation)
            say(result.line(width))
            results.append(result)
    finally:
        env.close()
    trainable = [t for t in templates if t not in held]
    found = start_state_finding(
        make_env, [TaskSpec(env_name, t, s) for t in trainable for s in range(min(seeds, 2))]
    )
    return EnvCheck(results, [found] if found else [], time.perf_counter() - t0)


def _check_template(
    env: GUIEnv,
    make_env: Callable[[], GUIEnv],
    suite: TaskSuite,
    tasks: Sequence[TaskSpec],
    result: TemplateCheck,
    check: Callable[[Observation, str], Observation],
) -> GUIEnv:
    """Fill ``result`` for one template; the env to go on with (a faulted one is replaced)."""
    for i, task in enumerate(tasks):
        try:
            if i == 0:
                obs, _ = env.reset(options={"task": task})
                result.elements = len(check(obs, f"{task.id}: first observation").elements)
            actions, success = run_expert(env, suite, task)
            result.lengths.append(len(actions))
            result.verified += int(success)
        except (EnvFault, ValueError, RuntimeError, NotImplementedError) as exc:
            result.error = result.error or f"{type(exc).__name__}: {exc}".splitlines()[0]
            env.close()
            env = make_env()
            if result.elements is None:
                return env  # no observation: the expert has nothing to read
    return env
