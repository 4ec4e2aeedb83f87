"""Whether a policy can act on a task: the expert's actions checked against the policy's action
space, step by step, on a real episode.

:func:`expert_coverage` resets ``env`` to a task, lets the suite's scripted expert solve it and,
before every expert action, asks the policy (:meth:`SmallPolicy.action_space_gap`) whether its
sampler could have produced that action from the same context (instruction, observation and
the windowed history the rollouts give it). An env-specific ``grounding`` check may look at the
same steps (the web's: :func:`adaroll.envs.web.grounding.grounding_gap`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from adaroll.actions import Action
from adaroll.envs.base import GUIEnv, Observation, TaskSpec, TaskSuite
from adaroll.policies.base import Context, last_actions

Grounding = Callable[[str, Observation, Action, tuple[Action, ...]], "str | None"]
"""``(instruction, observation, expert action, the episode's expert actions) -> why the
observation does not ground the action, or None``."""


@dataclass
class Coverage:
    """One expert episode checked against a policy's action space (and a grounding check)."""

    task: TaskSpec
    success: bool
    actions: list[Action] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    """Expert actions the policy's sampler cannot produce: ``step i: why``."""
    ungrounded: list[str] = field(default_factory=list)
    """Expert actions the observation does not ground: ``step i: why``."""

    @property
    def ok(self) -> bool:
        return self.success and not self.gaps and not self.ungrounded

    def summary(self) -> str:
        if self.ok:
            return f"{self.task.id}: ok ({len(self.actions)} steps)"
        why = ([] if self.success else ["the expert failed"]) + self.gaps + self.ungrounded
        return f"{self.task.id}: " + "; ".join(why)


def expert_coverage(
    env: GUIEnv,
    suite: TaskSuite,
    task: TaskSpec,
    policy: Any,
    *,
    history_window: int = 4,
    grounding: Grounding | None = None,
) -> Coverage:
    """Run the expert on ``task`` and check each of its actions (module docstring). ``policy``
    needs ``action_space_gap(context, action)`` (the small policy has it)."""
    obs, _ = env.reset(options={"task": task})
    instruction = env.instruction
    steps: list[tuple[Observation, tuple[Action, ...], Action]] = []
    history: list[Action] = []
    success = False
    while True:
        action = suite.expert_action(env)
        window = last_actions(history, history_window)
        steps.append((obs, window, action))
        history.append(action)
        obs, reward, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            success = reward > 0
            break
    result = Coverage(task, success, list(history))
    for i, (o, window, action) in enumerate(steps):
        gap = policy.action_space_gap(Context(instruction, o, window), action)
        if gap is not None:
            result.gaps.append(f"step {i}: {gap}")
        if grounding is not None:
            why = grounding(instruction, o, action, tuple(history))
            if why is not None:
                result.ungrounded.append(f"step {i}: {why}")
    return result
